// mufu_model.h: the sm_90 special-function unit's ex2.approx.ftz.f32 and rcp.approx.ftz.f32, from captured tables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fuseproof::ref {

/// MUFU.EX2 and MUFU.RCP are hardware approximations with no published bit-exact algorithm, so they are modelled by
/// data: the device's output for every binary32 input in [1, 2) (2^23 each, golden/<arch>/mufu_tables.tar.xz), plus
/// two scaling identities checked on the device over the whole range the tanhf model uses (provenance.json, "mufu"):
///   ex2(i + f) = 2^(i-1) * ex2(1 + f)   for x in [1, 32)      (2^25 inputs, 0 mismatches on sm_90)
///   rcp(2^k * m) = 2^-k * rcp(m)        for d in [1, 2^27)    (26 * 2^23 inputs, 0 mismatches on sm_90)
class MufuModel {
 public:
  /// Loads mufu_ex2_approx_ftz.bin and mufu_rcp_approx_ftz.bin from `dir`; throws std::runtime_error (one line) when
  /// a file is missing or has the wrong size.
  static MufuModel load(const std::string& dir);

  /// ex2.approx.ftz.f32 for x in [1, 32); throws std::domain_error outside (the model claims nothing there).
  float ex2_approx_ftz(float x) const;
  /// rcp.approx.ftz.f32 for d in [1, 2^27); throws std::domain_error outside.
  float rcp_approx_ftz(float d) const;

  const std::string& source_dir() const { return dir_; }

 private:
  std::string dir_;
  std::vector<uint32_t> ex2_;  // ex2_[i] = bits of ex2(f32_from_bits(0x3F800000 + i))
  std::vector<uint32_t> rcp_;  // rcp_[i] = bits of rcp(f32_from_bits(0x3F800000 + i))
};

}  // namespace fuseproof::ref
