// golden_library.h: the one way to golden data: golden/<arch>/ and its unpacked archives, every file verified against
// the SHA-256 its provenance.json records before anything reads it, keyed by the architecture a run targets.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/exit_status.h"
#include "reference/activation.h"
#include "reference/dtype.h"
#include "reference/mufu_model.h"
#include "reference/op_spec.h"

namespace fuseproof {

/// golden/ in the source tree: $FUSEPROOF_GOLDEN_DIR, else the path configured at build time.
std::string default_golden_dir();
/// Unpacked archives (MUFU tables, ex2 points): $FUSEPROOF_GOLDEN_BUILD_DIR, else the path configured at build time.
std::string default_golden_build_dir();

/// The architecture grammar, the one definition of it: "sm_", two or three digits, an optional 'a' or 'f' suffix
/// (sm_90, sm_90a, sm_100f), as nvcc spells them. Every --arch and every golden/<arch> folder name matches it.
bool is_arch_name(const std::string& name);
/// "" when is_arch_name(name), else the rule and the value: "must be sm_<digits> (e.g. sm_90), got '<name>'" (a
/// CLI11 check returns it; CLI11 puts the option's name in front).
std::string arch_name_error(const std::string& name);
/// Throws UsageError "--arch: must be sm_<digits> (e.g. sm_90), got '<name>'" unless is_arch_name(name).
void require_arch_name(const std::string& name);

/// Architectures with captured data: sub-folders of golden_dir whose names are architecture names, sorted.
std::vector<std::string> golden_archs(const std::string& golden_dir);

/// The architecture a run targets: `requested` when given; else `device_arch` (the GPU the run uses: "sm_90");
/// else the only architecture golden_dir holds. Throws UsageError (one line) when none or several could be meant, or
/// when `requested` is not an architecture name (require_arch_name).
std::string resolve_golden_arch(const std::string& golden_dir, const std::string& requested,
                                const std::string& device_arch);

/// digests.json keys: the op's name for the eager contract (`<op>`), `<op>.<contract>` for the others
/// ("silu_and_mul.fp32"); the tree digest of either is the key with "_tree" appended.
std::string golden_digest_key(const std::string& op, ref::Contract c);
/// digests.json key of stage k (reference/op_plan.h's stages(), in order) of an op and contract whose key is
/// `digest_key`: "<digest_key>.stage<k>" ("gated_residual.stage0"); the value is per dtype, as every key's. The digest
/// is the SHA-256 of the stage's outputs over all its pairs in canonical order (second operand outer).
std::string golden_stage_digest_key(const std::string& digest_key, int stage);
/// "<activation>_<dtype>.bin" (65,536 uint16: eager F.act on T tensors) or "<activation>_f32_<dtype>.bin" (65,536
/// uint32: F.act(x.float()) on the T patterns).
std::string golden_table_file(ref::Activation a, ref::Dtype d, bool f32);

/// Checks the file at `path` against `<dir of path>/provenance.json`: its "arch" must name that folder and its
/// "files" (or, with `section`, "<section>"."files": "mufu", "ex2_points") must record this file's SHA-256. Throws
/// MissingDataError (exit 3) when the file or the provenance is missing or unreadable, CorruptDataError (exit 4) when
/// the digest differs, the provenance has no entry for the file, or it describes another architecture.
void verify_golden_file(const std::string& path);
/// The same for a file unpacked elsewhere (the build tree): looked up under "<section>"."files" of
/// `provenance_path`, whose "arch" must be `arch`.
void verify_unpacked_golden_file(const std::string& path, const std::string& provenance_path, const std::string& arch,
                                 const std::string& section = "mufu");

/// The digest `key` for dtype d in the digests.json at `path`; nullopt when the file or the entry is missing;
/// verifies the file first. CorruptDataError when it fails verification, is not a JSON object, or the entry is not a
/// 64-digit hex SHA-256.
std::optional<std::string> read_golden_digest(const std::string& path, const std::string& key, ref::Dtype d);
/// The device's tree digest of narrow-format cast `cast` ("e4m3-nan", "rcp-approx-ftz", ...) over all 2^32 binary32
/// inputs: digests.json's "format.<cast>_tree" (scripts/capture_golden.py --add-formats), as read_golden_digest.
std::optional<std::string> read_golden_format_digest(const std::string& path, const std::string& cast);

/// One architecture's golden data.
class GoldenArch {
 public:
  GoldenArch(std::string golden_dir, std::string build_dir, std::string arch);

  const std::string& arch() const { return arch_; }
  const std::string& dir() const { return dir_; }
  const std::string& build_dir() const { return build_dir_; }
  /// golden/<arch>/<file>
  std::string path(const std::string& file) const;
  /// "golden/sm_90" style name for messages.
  std::string label() const { return "golden/" + arch_; }
  bool has(const std::string& file) const;
  /// verify_golden_file(path(file)).
  void verify(const std::string& file) const;

  /// A table file, verified; MissingDataError when absent, CorruptDataError when it fails verification or is not
  /// exactly 65,536 little-endian entries.
  std::vector<uint16_t> u16_table(const std::string& file) const;
  std::vector<uint32_t> u32_table(const std::string& file) const;

  /// digests.json's `key` for dtype d, verified; nullopt when absent.
  std::optional<std::string> digest(const std::string& key, ref::Dtype d) const;
  /// As digest(), but absence is a MissingDataError naming the key.
  std::string require_digest(const std::string& key, ref::Dtype d) const;

  /// The MUFU model of this architecture: the unpacked tables and ex2 points verified against provenance.json, loaded
  /// once. MissingDataError when the tables are not there (configure with cmake to unpack them).
  const ref::MufuModel& mufu() const;
  /// The same model, shared: for what must outlive this object (a plan's MathConfig points into it).
  std::shared_ptr<const ref::MufuModel> mufu_shared() const;
  /// True when the MUFU tables are unpacked (mufu() would not throw MissingDataError for their absence).
  bool has_mufu() const;

 private:
  std::string dir_, build_dir_, arch_;
  mutable std::shared_ptr<const ref::MufuModel> mufu_;
};

}  // namespace fuseproof
