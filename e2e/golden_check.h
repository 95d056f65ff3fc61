// golden_check.h: the nightly gates over a run directory's manifest, against the golden file of the GPU's architecture.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fuseproof::e2e {

/// Exit statuses of `e2e check` and scripts/nightly_e2e.sh (common/exit_status.h).
/// 3 is the project's "incomplete": evidence missing, never a pass. 4 (kForeign) is a golden file of another schema
/// or configuration, or one that is not valid JSON: corrupt or foreign data, never a pass.
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
/// have one from the same encoder build. `golden` may be null: then only the run's own gates are checked.
CheckReport check_run(const nlohmann::json& run, const nlohmann::json* golden);

/// A golden file from a run manifest: config, per-frame and MP4 SHA-256 of high (and lossless), the lossless-vs-high
/// comparison and the measured high-vs-high-eager comparison (`video compare --json` or `e2e compare --json`; either
/// may be null) and provenance (may be null; when given, its git_commit must be a 40-hex commit hash, else throws).
nlohmann::json make_golden(const nlohmann::json& run, const std::string& arch, const nlohmann::json& comparison,
                           const nlohmann::json& high_comparison, const nlohmann::json& provenance);

}  // namespace fuseproof::e2e
