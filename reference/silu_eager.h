// silu_eager.h: eager F.silu(x) for half tensors, op by op in binary32.
#pragma once

#include "math_model.h"

namespace fuseproof::ref {

/// Models aten/src/ATen/native/cuda/ActivationSiluKernel.cu (silu_kernel), opmath = float:
///   y = x / (1 + exp(-x))        (c10::cuda::compat::exp: expf)
/// Under the cuda model nvcc contracts `1 + e * scale` (expf's last multiply) into one FMA, so the divisor is
/// fma(e, 2^k, 1) (expf_models.h); div.rn.f32 is IEEE division. Under libm and exact the divisor is 1 + expf(-x),
/// one add. silu(-inf) is NaN (-inf / inf), as in eager.
float silu_eager_f32(float x, const MathConfig& cfg);

}  // namespace fuseproof::ref
