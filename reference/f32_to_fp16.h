// f32_to_fp16.h: binary32 -> fp16, round to nearest even from the bits, NaN by policy.
#pragma once

#include <cstdint>

#include "dtype.h"
#include "nan_policy.h"

namespace fuseproof::ref {

/// Models c10::detail::fp16_ieee_from_fp32_value (CPU) and cvt.rn.f16.f32 (GPU): one rounding, ties to even,
/// |x| >= 65520 -> +-Inf, results below 2^-14 rounded onto the subnormal grid 2^-24. NaN output is `policy`'s pattern.
namespace detail {
/// Shifts m right by s (1 <= s <= 31), rounding to nearest, ties to even.
inline uint32_t shift_round_even(uint32_t m, unsigned s) {
  const uint32_t q = m >> s;
  const uint32_t rem = m & ((1u << s) - 1u);
  const uint32_t half = 1u << (s - 1);
  return q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u);
}
}  // namespace detail

inline constexpr uint32_t kF32ToFp16OverflowBits = 0x477FF000u;  ///< 65520.0f = 65504 + half an ulp: ties go to Inf

inline uint16_t f32_to_fp16(float f, NanPolicy policy) {
  const uint32_t u = f32_bits(f);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a >= 0x38800000u && a < kF32ToFp16OverflowBits) {
    // Normal half (2^-14 <= |f| < 65520), the common case: rebias the exponent (127 -> 15) and round away the low
    // 13 bits with the same add-half-minus-one-plus-LSB trick as bf16; a carry may reach the exponent (or Inf).
    const uint32_t rebased = a - (112u << 23);
    return uint16_t(sign | ((rebased + 0x0FFFu + ((rebased >> 13) & 1u)) >> 13));
  }
  if (a > 0x7F800000u) return nan_to_fp16(policy, u);
  if (a >= kF32ToFp16OverflowBits) return uint16_t(sign | 0x7C00u);
  const uint32_t exp = a >> 23;
  // On the subnormal grid 2^-24 (or up to the smallest normal 0x0400 through the carry):
  // value = m * 2^(e - 150) with the implicit bit, so in units of 2^-24 it is m >> (126 - e).
  const uint32_t m = exp == 0 ? (a & 0x7FFFFFu) : ((a & 0x7FFFFFu) | 0x800000u);
  const unsigned s = 126u - (exp == 0 ? 1u : exp);
  if (s > 24) return sign;  // m < 2^24 <= half of 2^s: rounds to zero
  return uint16_t(sign | detail::shift_round_even(m, s));
}

}  // namespace fuseproof::ref
