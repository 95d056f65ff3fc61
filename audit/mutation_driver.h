// mutation_driver.h: audits every mutant plugin in a folder, each in its own process, and scores the battery.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/audit_engine.h"

namespace fuseproof::audit {

/// What became of one mutant.
enum class MutantStatus {
  kKilled,    ///< its audit reported a FAIL in a class, by mismatches or by a fault inside a call into it
  kSurvived,  ///< its audit passed
  kTimeout,   ///< its whole audit ran past --mutant-timeout
  kError,     ///< not judged: the audit could not run, or failed only by a crash outside any call into the mutant
};
const char* mutant_status_name(MutantStatus s);  ///< "killed", "survived", "timeout", "error"

struct MutantOutcome {
  std::string plugin;
  std::string kernel_name;
  MutantStatus status = MutantStatus::kError;
  std::string killed_by;    ///< the first failing check class (a reported FAIL; nothing else kills)
  std::string dtype;
  uint64_t mismatches = 0;
  bool stopped_early = false;
  std::string first_record; ///< the killing class's first record, or its fault (crash, CUDA error, hang) with the call
  std::string fault;
  std::vector<std::string> failing_classes;  ///< every failing class and dtype, in order
  double seconds = 0;
  nlohmann::json report;    ///< the child's JSON report, when it wrote one
};

struct MutationResult {
  std::vector<MutantOutcome> mutants;
  size_t killed = 0;
  size_t total = 0;
  std::string backend;
};

/// Runs `self_argv0 audit --plugin P ...` (the options of `base`) on each lib*.so in `dir` whose memory suits
/// base.backend, with `timeout_s` per mutant (then SIGKILL). A mutant is killed only by a reported FAIL: its audit
/// exits 1 with a JSON report naming the failing class; exit 0 is a survivor; a time-out of the whole audit is not a
/// kill; anything else (the audit itself crashing, no report) is an error of the run.
MutationResult run_mutants(const AuditOptions& base, const std::string& dir, int timeout_s);

nlohmann::json mutation_json(const MutationResult& m);
std::string mutation_markdown(const MutationResult& m);

}  // namespace fuseproof::audit
