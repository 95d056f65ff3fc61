// half_codec.h: dtype-dispatched widening and narrowing of 16-bit patterns.
#pragma once

#include <cstdint>

#include "bf16_to_f32.h"
#include "dtype.h"
#include "f32_to_bf16.h"
#include "f32_to_fp16.h"
#include "fp16_to_f32.h"
#include "nan_policy.h"

namespace fuseproof::ref {

/// Exact widening of pattern h of dtype d.
inline float half_to_f32(Dtype d, uint16_t h) { return d == Dtype::kBf16 ? bf16_to_f32(h) : fp16_to_f32(h); }

/// Round-to-nearest-even narrowing of f to dtype d; NaN by policy.
inline uint16_t f32_to_half(Dtype d, float f, NanPolicy policy) {
  return d == Dtype::kBf16 ? f32_to_bf16(f, policy) : f32_to_fp16(f, policy);
}

}  // namespace fuseproof::ref
