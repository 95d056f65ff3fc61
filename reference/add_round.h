// add_round.h: eager `x + bias` for half tensors: widen, one binary32 add, one rounding to the dtype.
#pragma once

#include <cstdint>

#include "dtype.h"
#include "nan_policy.h"

namespace fuseproof::ref {

/// Models at::native add_kernel (AddFunctor / vec::fmadd(b, alpha=1, a)): opmath is float, so the sum is
/// float(x) + float(bias) rounded to binary32 (alpha * b is exact for alpha = 1, so an FMA changes nothing), then
/// rounded once more to the dtype (double rounding, as eager does). Signed zeros follow IEEE: -0 + +0 = +0.
/// No FMA contraction is possible (one add). NaN output is `policy`'s pattern.
uint16_t add_round(Dtype d, uint16_t x, uint16_t bias, NanPolicy policy);

/// The binary32 sum before the final rounding (for tests of the double rounding).
float add_f32(Dtype d, uint16_t x, uint16_t bias);

}  // namespace fuseproof::ref
