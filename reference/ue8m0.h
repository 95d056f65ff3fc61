// ue8m0.h: UE8M0 power-of-two scales: the decode, the round-up encode of DeepSeek-style FP8 group quantization.
#pragma once

#include <cstdint>

namespace fuseproof::ref {

// UE8M0 (OCP MX E8M0; DeepGEMM's and sm_100's block-scale factor): an exponent alone.
//
//   | EEEEEEEE |   2^(E - 127) for E = 0x00..0xFE (2^-127 .. 2^127); 0xFF NaN. No sign, no mantissa, no zero.
//
// The same eight bits are binary32's exponent field, so a power of two 2^k (-126 <= k <= 127) has the code
// bits(2^k) >> 23 and back; 2^-127 (code 0x00) is a binary32 subnormal.

inline constexpr uint8_t kUe8m0Nan = 0xFF;

/// 2^(code - 127), exact; 0xFF gives the quiet NaN 0x7FC00000 (our choice: the format names no pattern). Code 0x00 is
/// 2^-127 (binary32 0x00400000), as the OCP MX format defines it; note that DeepEP's `fast_pow2` bit trick,
/// (code) << 23, would read it as +0.0.
float ue8m0_to_f32(uint8_t code);

/// The code of the smallest power of two >= |s|, as sgl-kernel's per_token_group_quant_8bit.cu computes it (copied
/// there from DeepEP): fast_log2_ceil(s) = E - 127 + (M != 0) from s's binary32 exponent field E and mantissa M, then
/// the code = bits(fast_pow2(that)) >> 23 = (E + (M != 0)) & 0xFF. Exact ceil(log2 |s|) for every normal s, with no
/// rounding anywhere. Outside that domain it is what the bits give: a subnormal s gives 0x01 (2^-126), +-0 gives 0x00,
/// s above 2^127 (mantissa set) and +-Inf give 0xFF (NaN), a NaN with E = 255 wraps to 0x00. The sign is ignored.
uint8_t f32_to_ue8m0_ceil(float s);

/// sgl-kernel's scale step for one group with `scale_ue8m0` (calculate_fp8_scales<ROUND_SCALE = true>, E4M3 max 448):
/// s = binary32(amax * binary32(1 / 448)) (one rounding; the kernel's amax is already >= 1e-10 through its fmaxf
/// floor), k = fast_log2_ceil(s); the kernel multiplies elements by `scale` = 2^-k and stores the code of
/// `scale_inv` = 2^k. fast_pow2 writes (x + 127) << 23 without a range check, so k = 128 (s > 2^127 or +Inf) gives
/// scale = -Inf (0xFF800000) and scale_inv = +Inf: modelled as the bits.
struct Ue8m0GroupScale {
  float s;          ///< amax * (1/448), the unrounded scale
  uint8_t code;     ///< the UE8M0 byte stored
  float scale;      ///< 2^-k, what the elements are multiplied by
  float scale_inv;  ///< 2^k, what the code encodes
};
Ue8m0GroupScale ue8m0_group_scale_sgl(float amax);

}  // namespace fuseproof::ref
