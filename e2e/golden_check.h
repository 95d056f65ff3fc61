// golden_check.h: the nightly gates over a run directory's manifest, against the golden file of the GPU's architecture.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fuseproof::e2e {

/// Exit statuses of `e2e check` and scripts/nightly_e2e.sh (common/exit_status.h).
/// 3 is the project's "incomplete": evidence missing, never a pass. 4 (kForeign) is a golden file of another schema
/// or configuration, or one that is not valid JSON, a frame list of another length than its frames, or (the CLI's
/// first gate, e2e/run_files.h) a frame file that is not what run.json records: corrupt or foreign data, never a pass.
enum class CheckOutcome : int { kPass = 0, kMismatch = 1, kError = 2, kIncomplete = 3, kNoGolden = 3, kForeign = 4 };

struct CheckReport {
  CheckOutcome outcome = CheckOutcome::kPass;
  std::vector<std::string> lines;  ///< one line per gate: "PASS ...", "FAIL ...", "SKIP ..."
  nlohmann::json json;             ///< the same, machine-readable
};

/// Gates, in order: high ran the fused op at every call of every mounted site (a call that fell back to eager makes
/// the run incomplete: the identity gate would then not test the kernel); high == high-eager frame for frame (the
/// fusion is lossless); lossless-after-unmount == lossless
/// (unmount restores eager exactly); lossless != high (negative control: the gate can fail); then, with a golden file:
/// same config, high's and lossless's per-frame SHA-256 equal the golden ones, and the MP4 SHA-256 when both sides
/// have one from the same encoder build. `golden` may be null: then only the run's own gates are checked. A frame
/// description whose frame_sha256 does not list one hash per frame, or a malformed golden file, fails as foreign
/// (corrupt data, exit 4), never as a mismatch. The gates are appended to `prior` (e.g. the frame files' gate).
CheckReport check_run(const nlohmann::json& run, const nlohmann::json* golden, CheckReport prior = {});

/// "pass", "mismatch", "error", "incomplete", "foreign": a gate's "outcome" in the JSON and JUnit reports.
const char* check_outcome_name(CheckOutcome o);

/// Appends one gate's result ("PASS", "FAIL" or "SKIP") to `r`: its line, its JSON entry (a FAIL with the outcome it
/// fails as: "mismatch", "incomplete", "error", "foreign"), and `r.outcome` when a FAIL outranks it.
void add_gate(CheckReport& r, const std::string& name, const std::string& status, const std::string& detail,
              CheckOutcome fail_as);

/// JUnit XML of a check: one <testsuite> (properties: run directory, golden file, config, dtype, device, kernel),
/// one <testcase> per gate as check_run reports it (classname `fuseproof.e2e.<config>.<dtype>`, name the gate): a
/// FAIL is a <failure> of its outcome with the detail and `reproduce`, a SKIP <skipped> with its reason.
std::string check_junit(const CheckReport& r, const nlohmann::json& run, const std::string& run_dir,
                        const std::string& golden_path, const std::string& reproduce);

/// A golden file from a run manifest: config, per-frame and MP4 SHA-256 of high (and lossless), the lossless-vs-high
/// comparison and the measured high-vs-high-eager comparison (`video compare --json` or `e2e compare --json`; either
/// may be null) and provenance (may be null; when given, its git_commit must be a 40-hex commit hash, else throws).
nlohmann::json make_golden(const nlohmann::json& run, const std::string& arch, const nlohmann::json& comparison,
                           const nlohmann::json& high_comparison, const nlohmann::json& provenance);

}  // namespace fuseproof::e2e
