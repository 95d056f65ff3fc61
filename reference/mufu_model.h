// mufu_model.h: the sm_90 special-function unit's ex2.approx.ftz.f32 and rcp.approx.ftz.f32, from captured tables.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "rcp_approx_model.h"

namespace fuseproof::ref {

/// MUFU.EX2 and MUFU.RCP are hardware approximations with no published bit-exact algorithm, so they are modelled by
/// data captured on the device (golden/<arch>/, provenance.json):
///   - mufu_tables.tar.xz: the output for every binary32 input in [1, 2) (2^23 each), plus two scaling identities
///     checked on the device over the whole range the tanhf model uses ("mufu"):
///       ex2(i + f) = 2^(i-1) * ex2(1 + f)   for x in [1, 32)      (2^25 inputs, 0 mismatches on sm_90)
///       rcp(2^k * m) = 2^-k * rcp(m)        for d in [1, 2^27)    (26 * 2^23 inputs, 0 mismatches on sm_90)
///   - ex2_points.tar.xz: the ex2 arguments expf and erff reach, which lie below 1, captured point by point: for each
///     activation A that calls ex2 outside [1, 32) and each dtype, ex2_<A>_<dtype>.bin holds, for input pattern p =
///     0..65535, the argument the device computed and the device's ex2 of it (2 little-endian uint32 each).
class MufuModel {
 public:
  /// Loads mufu_ex2_approx_ftz.bin and mufu_rcp_approx_ftz.bin from `dir`, and every ex2_*.bin beside them; throws
  /// std::runtime_error (one line) when a table is missing or has the wrong size.
  static MufuModel load(const std::string& dir);

  /// ex2.approx.ftz.f32: a NaN gives NaN and a subnormal argument is flushed to a signed zero first (.ftz); then from
  /// the [1, 32) identity, else from a captured point; throws std::domain_error naming the argument elsewhere (the
  /// model claims nothing there).
  float ex2_approx_ftz(float x) const;
  /// rcp.approx.ftz.f32 for d in [1, 2^27); throws std::domain_error outside.
  float rcp_approx_ftz(float d) const;
  /// The same capture as the whole-range model of reference/rcp_approx_model.h (every binary32 input; proved on the
  /// device by its 2^32 digest, docs/REFERENCE.md): what the quantization contracts' rcp-approx steps use.
  const RcpApproxTable& rcp_table() const { return *rcp_table_; }

  /// The captured points of ex2_<name>.bin (name "silu_bf16", ...): (argument bits, result bits) per input pattern;
  /// empty when the file was not there.
  const std::vector<std::pair<uint32_t, uint32_t>>& ex2_points(const std::string& name) const;
  /// True when ex2_<name>.bin was loaded.
  bool has_ex2_points(const std::string& name) const;
  /// Names of the point files loaded ("silu_bf16", ...), sorted.
  std::vector<std::string> ex2_point_sets() const;

  const std::string& source_dir() const { return dir_; }

 private:
  std::string dir_;
  std::shared_ptr<const RcpApproxTable> rcp_table_;
  std::vector<uint32_t> ex2_;  // ex2_[i] = bits of ex2(f32_from_bits(0x3F800000 + i))
  std::vector<std::pair<std::string, std::vector<std::pair<uint32_t, uint32_t>>>> point_sets_;
  std::vector<std::pair<uint32_t, uint32_t>> points_;  // every captured (argument, result), sorted by argument
};

}  // namespace fuseproof::ref
