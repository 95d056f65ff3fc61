// check_result.h: what one check class found on one dtype, and what a whole audit found.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/audit_options.h"
#include "audit/plugin_loader.h"
#include "audit/ulp_histogram.h"
#include "common/phase_clock.h"
#include "reference/dtype.h"

namespace fuseproof::audit {

enum class CheckStatus : int {
  kPass,        ///< every case equal, and the class could have failed (distinct expected outputs)
  kFail,        ///< a mismatch, a guard write, a refused valid call, a fault or a hang
  kSkipped,     ///< not run, for a stated reason (host memory has no PDL; --first-fail)
  kIncomplete,  ///< ran zero cases, or could not run what it was asked to: never a pass
};
/// "pass", "fail", "skipped", "incomplete".
const char* check_status_name(CheckStatus s);
std::optional<CheckStatus> parse_check_status(const std::string& s);
/// "PASS", "FAIL", "SKIPPED", "INCOMPLETE".
std::string check_status_upper(CheckStatus s);

/// How far another contract of a quantization op lies from the subject's outputs over the cases a class enumerated
/// (docs/AUDIT.md, Quantization classes). Steps count along the format's magnitude order (E2M1 0..7, E4M3 0..126).
struct ContractDistance {
  std::string contract;                  ///< the other contract ("rcp-approx")
  uint64_t cases = 0;                    ///< elements compared
  uint64_t codes_differ = 0;             ///< elements whose code byte differs
  std::vector<std::pair<int, uint64_t>> code_steps;   ///< (|steps| between the two codes, elements), ascending
  uint64_t blocks = 0;                   ///< blocks compared
  uint64_t scales_differ = 0;            ///< blocks whose stored scale differs
  std::vector<std::pair<int, uint64_t>> scale_steps;  ///< (|steps| between the scales, blocks), ascending
  uint64_t nan_inf_differ = 0;           ///< codes or scales where one side is NaN/Inf (or no code) and the other not
  uint64_t sign_of_zero_differ = 0;      ///< a code of +0 against one of -0
  /// The inputs on which they differ, one TestFloat-style line each ("x=0x3F80 scale=0x7E => 0x5 other 0x6"), all of
  /// them up to a cap; pairs_total counts every one.
  std::vector<std::string> pairs;
  uint64_t pairs_total = 0;
  /// --differences: the file listing every differing input (one line each after a header), its lines and SHA-256;
  /// empty when not written.
  std::string differences_path;
  uint64_t differences_lines = 0;
  std::string differences_sha256;
};

/// One check class on one dtype.
struct CheckResult {
  CheckClass cls = CheckClass::kRejection;
  ref::Dtype dtype = ref::Dtype::kBf16;
  CheckStatus status = CheckStatus::kPass;
  uint64_t cases = 0;                  ///< elements compared (rejection: probes)
  uint64_t mismatches = 0;             ///< elements that differed, guard elements written, probes failed
  /// Failures that are not counts of cases (a 2^32-domain digest that differs from the golden one): the class FAILs,
  /// and `mismatches` stays the count of mismatching cases.
  uint64_t failed_checks = 0;
  bool stopped_early = false;          ///< stopped at stop_after mismatches
  uint32_t distinct_expected = 0;      ///< distinct expected outputs: the guard against a check that cannot fail
  std::vector<std::string> records;    ///< the first mismatch lines
  std::string fault;                   ///< a crash, CUDA error or hang of the subject, with the call that caused it
  std::string scope;                   ///< what was covered, in words (sizes stated)
  std::string note;                    ///< e.g. the digest comparison, the reason for a skip
  std::string reproduce;               ///< command rerunning just this check
  double seconds = 0;
  /// Where those seconds went, by phase (the subject's calls, the reference values, digests, comparison; docs/AUDIT.md,
  /// "Profile"). JSON "phases": [[name, seconds], ...] in the order first seen.
  PhaseTimes phases;
  /// The parent's view: the wall time of the class's child process outside `seconds` (its start, the subject's load,
  /// the op's models, its teardown); for a table group, the group's, given to its first class. 0 in-process.
  double outside_seconds = 0;
  /// Distances of the subject's outputs from the contract's, over every compared element.
  UlpHistogram vs_contract;
  /// Distances from the correctly rounded value (MPFR), of the subject and of the contract itself (domain class).
  UlpHistogram vs_correct, contract_vs_correct;
  bool has_correct = false;            ///< the two histograms above were computed
  /// A contract other than eager (fp32, fma): the contract's own distance from eager over the same cases (what the
  /// fusion costs), whatever the subject returned. JSON "contract_ulp_vs_eager".
  UlpHistogram contract_vs_eager;
  bool has_contract_vs_eager = false;
  bool incomplete_when_passing = false;  ///< something asked for did not run (a shape too large): never a pass
  /// What was asked for and did not run ("155345x13824 (16.1 GiB, 4.9 GiB free)", ...): the note says it, and a pass
  /// becomes INCOMPLETE. Nothing when `what` is empty.
  void note_not_run(const std::vector<std::string>& what) {
    if (what.empty()) return;
    note = "not run:";
    for (const auto& s : what) note += " " + s + ";";
    incomplete_when_passing = true;
  }
  /// Quantization ops: the subject's distance from every other contract of the op (JSON "contract_distances").
  std::vector<ContractDistance> contract_distances;
};

/// Sets the status from what the class found: FAIL for a fault, a mismatch or another failed check; INCOMPLETE for a
/// class that ran zero cases or could not run what it was asked to (never a pass); FAIL when every expected output was
/// one pattern (the check could not have failed); else PASS. A SKIPPED class stays skipped.
void settle_check(CheckResult& r);

nlohmann::json check_to_json(const CheckResult& c);
/// A ContractDistance as JSON ("contract_distances" entries of check_to_json), and back.
nlohmann::json contract_distance_to_json(const ContractDistance& d);
ContractDistance contract_distance_from_json(const nlohmann::json& j);
/// "12.3 s, 4.2 M cases/s (8.4 MB/s of output): kernel 1.0 s, comparison 3.1 s, ..., other 0.4 s" (--profile).
std::string profile_line(const CheckResult& c);
/// "In 519664 cases, no errors found in bias_gelu_tanh bf16 (contract eager)." (the line a clean class prints).
std::string no_errors_line(const CheckResult& c, const std::string& op, const std::string& contract);
CheckResult check_from_json(const nlohmann::json& j);

struct AuditResult {
  PluginInfo plugin;
  std::string op;
  std::string contract;
  std::string backend;
  std::string hardware;
  std::string golden;                  ///< "golden/sm_90"
  std::vector<std::string> models;     ///< one line per dtype: the reference model and golden data
  /// --profile: this machine's copy and hash rates (GB/s) measured in the same run. JSON "throughput_gb_per_s".
  std::vector<std::pair<std::string, double>> throughput;
  std::vector<CheckResult> checks;
  bool passed = true;                  ///< no check failed
  bool complete = true;                ///< no check ran zero cases
  const CheckResult* killed_by() const;  ///< the first failing check, or nullptr
  std::string verdict() const;         ///< "PASS", "FAIL" or "INCOMPLETE"
  uint64_t seed = 0;
  std::string command;
  bool isolated = true;
  double describe_seconds = 0;         ///< the describe child's wall time (0 in-process)
  bool single_child = false;           ///< --no-isolation: every class in one child process
  bool class_groups = false;           ///< isolated, each dtype's classes in one child (docs/AUDIT.md, "Class groups")
  double call_timeout_s = 0;
  std::string load_fault;              ///< the subject crashed or hung while loading: FAIL, no class could run
  /// Why no class ran though nothing failed (`fuseproof audit` of every op: this op's built-in plugin is not built):
  /// INCOMPLETE, never a pass. JSON "not_audited".
  std::string not_audited;
  double seconds = 0;
};

}  // namespace fuseproof::audit
