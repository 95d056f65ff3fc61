// expected_model.h: what a correct bias_gelu_tanh returns, from the reference oracle and the golden data.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reference/add_round.h"
#include "reference/gelu_table.h"

namespace fuseproof::audit {

/// Where golden data lives: golden/ in the source tree and its unpacked archives in the build tree.
struct GoldenPaths {
  std::string dir;        ///< golden/ (sm_90/gelu_tanh_*.bin, digests.json, provenance.json)
  std::string build_dir;  ///< build/golden (sm_90/mufu_*.bin)
};

/// Defaults: $FUSEPROOF_GOLDEN_DIR / $FUSEPROOF_GOLDEN_BUILD_DIR, else the paths configured at build time.
GoldenPaths default_golden_paths();

/// expected(x, b) = gelu_table[add_round(d, x, b, cuda-cvt-rn)]: eager gelu(x + bias) with every NaN 0x7FFF.
struct ExpectedModel {
  ref::Dtype dtype = ref::Dtype::kBf16;
  ref::TanhModel tanh = ref::TanhModel::kCuda;
  std::vector<uint16_t> gelu_table;
  std::string description;       ///< one line for the report
  std::string golden_table;      ///< path of golden/sm_90/gelu_tanh_<d>.bin
  int golden_table_diffs = -1;   ///< entries where the model's table differs from the golden one (-1: unread)
  std::string golden_digest;     ///< digests.json bias_gelu_tanh.<d>: SHA-256 of all 2^32 GPU outputs
  bool digest_applies = false;   ///< the golden digest is of this model (the CUDA model, whose table matches golden)

  uint16_t expected(uint16_t x, uint16_t b) const {
    return gelu_table[ref::add_round(dtype, x, b, ref::NanPolicy::kCudaCvtRn)];
  }
};

/// Builds the model: tabulates GELU with `tanh` (kCuda needs the MUFU tables under build_dir/sm_90) and compares the
/// table with the golden one. Throws std::runtime_error (one line) when golden data is missing, or when the kCuda
/// table does not reproduce the golden table (the oracle itself would be wrong).
ExpectedModel make_expected_model(ref::Dtype d, ref::TanhModel tanh, const GoldenPaths& golden);

}  // namespace fuseproof::audit
