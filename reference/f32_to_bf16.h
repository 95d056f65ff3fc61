// f32_to_bf16.h: binary32 -> bf16, round to nearest even from the bits, NaN by policy.
#pragma once

#include <cstdint>

#include "dtype.h"
#include "nan_policy.h"

namespace fuseproof::ref {

/// Models c10::detail::round_to_nearest_even (CPU) and cvt.rn.bf16.f32 (GPU): one rounding, ties to even, overflow
/// to +-Inf, subnormals exact (bf16 has binary32's exponent range). NaN output is `policy`'s pattern.
inline uint16_t f32_to_bf16(float f, NanPolicy policy) {
  const uint32_t u = f32_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return nan_to_bf16(policy, u);
  // | S |EEEEEEEE|MMMMMMM|RRRRRRRRRRRRRRRR|: add 0x7FFF plus the kept LSB, so exact halves round to even.
  // A carry out of the mantissa bumps the exponent, which is right up to and including overflow to Inf.
  const uint32_t lsb = (u >> 16) & 1u;
  return uint16_t((u + 0x7FFFu + lsb) >> 16);
}

}  // namespace fuseproof::ref
