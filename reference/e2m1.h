// e2m1.h: binary32 -> FP4 E2M1 (round to nearest even, saturating), vLLM's comparison-table reference, and back.
#pragma once

#include <cstdint>

#include "dtype.h"
#include "f32_to_fp16.h"

namespace fuseproof::ref {

// E2M1, NVFP4's element format (one nibble; two per byte when packed, element 0 in the low nibble):
//
//   | S |EE|M|   bias 1; E = 1..3: (2 + M) * 2^(E - 2); E = 0: M * 0.5 (one subnormal, 0.5)
//   code  0    1    2    3    4    5    6    7         (| 1 |EE|M| = 0x8..0xF: the same magnitudes, negative)
//   value 0   0.5   1   1.5   2    3    4    6
//
// No Inf, no NaN: every code is finite.

inline constexpr uint8_t kE2m1MaxFinite = 0x7;         ///< | 0 |11|1| = 6
inline constexpr uint8_t kE2m1NegZero = 0x8;           ///< | 1 |00|0| = -0
inline constexpr uint32_t kE2m1SixBits = 0x40C00000u;  ///< 6.0f
inline constexpr uint32_t kE2m1OneBits = 0x3F800000u;  ///< 1.0f, the smallest normal E2M1 (code 2)

/// Models cvt.rn.satfinite.e2m1x2.f32 (sm_100+) through CUDA's own emulation of it, __nv_cvt_double_to_fp4 in
/// cuda_fp4.hpp (CUDA 13.0), which __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest) runs where the
/// instruction is missing: one rounding to nearest, ties to even (the even neighbour is the one with M = 0: 0.25 ->
/// 0, 0.75 -> 1, 1.25 -> 1, 1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4); |x| > 6 and +-Inf saturate to +-6 (0x7 | S);
/// the sign of a zero result is kept (-0.0 and -0.25 give 0x8). NaN gives +6 (0x7) whatever its sign: cuda_fp4.hpp
/// says "NaN converts to positive FP4_MAXNORM". Bit arithmetic only: no rounding other than the one modelled.
inline uint8_t f32_to_e2m1(float f) {
  const uint32_t u = f32_bits(f);
  const uint8_t sign = uint8_t((u >> 28) & 0x8u);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return kE2m1MaxFinite;                   // NaN: +6
  if (a > kE2m1SixBits) return uint8_t(sign | kE2m1MaxFinite);  // (6, Inf]: RNE gives 6 up to 7, then 8: saturate
  if (a >= kE2m1OneBits) {
    // 1 <= |f| <= 6: rebias (127 -> 1) and round away the low 22 bits, | 0 |EE|M|RRRR...| + (2^21 - 1) + the LSB;
    // 6 = | 0 |11|1| exactly, and nothing in [1, 6] carries past it.
    const uint32_t rebased = a - (126u << 23);
    return uint8_t(sign | ((rebased + 0x1FFFFFu + ((rebased >> 22) & 1u)) >> 22));
  }
  // Below 1, onto the grid 0.5: |f| = m * 2^(max(e, 1) - 150) is m >> (149 - max(e, 1)) units of 0.5; 0.75 carries to
  // code 2 (= 1.0) by the tie rule, 0.25 ties to 0.
  const uint32_t exp = a >> 23;
  const uint32_t m = exp == 0 ? a : ((a & 0x7FFFFFu) | 0x800000u);
  const unsigned s = 149u - (exp == 0 ? 1u : exp);
  if (s > 24) return sign;  // |f| < 0.25: zero, signed
  return uint8_t(sign | detail::shift_round_even(m, s));
}

/// vLLM's test reference cast_to_fp4 (tests/kernels/quantization/nvfp4_utils.py), a comparison table on |x| then
/// `* torch.sign(x)`, as a binary32 value:
///   [0, 0.25] -> 0, (0.25, 0.75) -> 0.5, [0.75, 1.25] -> 1, (1.25, 1.75) -> 1.5, [1.75, 2.5] -> 2,
///   (2.5, 3.5) -> 3, [3.5, 5] -> 4, (5, Inf] -> 6.
/// Each closed end sits on the side of the even code, so on every non-NaN input but one this is exactly
/// e2m1_to_f32(f32_to_e2m1(x)), the -0 of a negative input rounded to zero included (0 * -1). The exception is
/// x = -0.0: torch.sign(-0.0) is +0.0, so the table gives +0.0 where the cvt gives -0 (0x8). NaN: every comparison
/// is false and NaN * sign(NaN) stays NaN; the table names no code for it, and this returns the quiet NaN
/// 0x7FC00000 (which NaN torch produces is not modelled).
inline float e2m1_vllm_table(float f) {
  if (f != f) return f32_from_bits(0x7FC00000u);
  // torch.sign: +1, -1, or +0 for both zeros; the table reads |x|.
  const float sgn = f > 0.0f ? 1.0f : f < 0.0f ? -1.0f : 0.0f;
  const float x = f < 0.0f ? -f : f;
  float r;
  if (x <= 0.25f) r = 0.0f;
  else if (x < 0.75f) r = 0.5f;
  else if (x <= 1.25f) r = 1.0f;
  else if (x < 1.75f) r = 1.5f;
  else if (x <= 2.5f) r = 2.0f;
  else if (x < 3.5f) r = 3.0f;
  else if (x <= 5.0f) r = 4.0f;
  else r = 6.0f;
  return r * sgn;
}

/// The exact binary32 value of the code's low nibble (bit 3 the sign).
float e2m1_to_f32(uint8_t code);

}  // namespace fuseproof::ref
