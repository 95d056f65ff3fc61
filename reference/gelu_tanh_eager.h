// gelu_tanh_eager.h: eager F.gelu(x, approximate="tanh") for half tensors, op by op in binary32.
#pragma once

#include <cstdint>

#include "dtype.h"
#include "math_model.h"

namespace fuseproof::ref {

/// Models aten/src/ATen/native/cuda/ActivationGeluKernel.cu (GeluCUDAKernelImpl, GeluType::Tanh), opmath = float:
///   kBeta = float(M_SQRT2 * M_2_SQRTPI * 0.5)   (product in double, narrowed once)
///   kKappa = 0.044715f
///   x_cube = (x * x) * x
///   inner = kBeta * fma(kKappa, x_cube, x)      (or kBeta * (x + kKappa * x_cube) when uncontracted)
///   y = (0.5f * x) * (1 + tanh(inner))
/// Every step is one binary32 rounding; gelu(-inf) is NaN ((-inf) * 0), as in eager. No NaN policy applies here.
float gelu_tanh_eager_f32(float x, const MathConfig& cfg);

/// Widen x, gelu_tanh_eager_f32, one final rounding to the dtype under cfg.nan.
uint16_t gelu_tanh_eager(Dtype d, uint16_t x, const MathConfig& cfg);

}  // namespace fuseproof::ref
