// mutation_driver.h: audits every mutant plugin in a folder, each in its own process, and scores the battery.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/audit_engine.h"

namespace fuseproof::audit {

struct MutantOutcome {
  std::string plugin;
  std::string kernel_name;
  std::string status;       ///< "killed", "survived", "timeout", "error" (the audit could not run)
  std::string killed_by;    ///< check class, or "crash (signal N)"
  std::string dtype;
  uint64_t mismatches = 0;
  bool stopped_early = false;
  std::string first_record;
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
/// base.backend, with `timeout_s` per mutant (then SIGKILL). A mutant is killed when its audit exits 1 (a failed
/// check) or dies of a signal; exit 0 is a survivor; any other status is an error of the run.
MutationResult run_mutants(const AuditOptions& base, const std::string& dir, int timeout_s);

nlohmann::json mutation_json(const MutationResult& m);
std::string mutation_markdown(const MutationResult& m);

}  // namespace fuseproof::audit
