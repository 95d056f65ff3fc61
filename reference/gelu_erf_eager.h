// gelu_erf_eager.h: eager F.gelu(x) (the exact, erf form) for half tensors, op by op in binary32.
#pragma once

#include "math_model.h"

namespace fuseproof::ref {

/// Models aten/src/ATen/native/cuda/ActivationGeluKernel.cu (GeluCUDAKernelImpl, GeluType::None), opmath = float:
///   kAlpha = float(M_SQRT1_2) = 0x3F3504F3
///   y = (x * 0.5f) * (1 + erf(x * kAlpha))
/// Each step one binary32 rounding (nvcc contracts nothing here: the PTX has mul, add, mul); erf is erff under
/// cfg.math. gelu(-inf) is NaN ((-inf * 0.5) * 0), as in eager.
float gelu_erf_eager_f32(float x, const MathConfig& cfg);

/// The argument eager hands to erff: x * kAlpha.
float gelu_erf_argument(float x);

}  // namespace fuseproof::ref
