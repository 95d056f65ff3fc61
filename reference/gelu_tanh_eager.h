// gelu_tanh_eager.h: eager F.gelu(x, approximate="tanh") for half tensors, op by op in binary32.
#pragma once

#include <cstdint>

#include "dtype.h"
#include "mufu_model.h"
#include "nan_policy.h"
#include "tanh_models.h"

namespace fuseproof::ref {

/// Whether `x + kKappa * x_cube` is one FMA (nvcc's default contraction, -fmad=true) or a multiply then an add.
enum class Contraction : int { kFma, kSeparate };

struct GeluConfig {
  TanhModel tanh = TanhModel::kCuda;
  Contraction contraction = Contraction::kFma;
  NanPolicy nan = NanPolicy::kCudaCvtRn;
  const MufuModel* mufu = nullptr;  ///< required for TanhModel::kCuda
};

/// Models aten/src/ATen/native/cuda/ActivationGeluKernel.cu (GeluCUDAKernelImpl, GeluType::Tanh), opmath = float:
///   kBeta = float(M_SQRT2 * M_2_SQRTPI * 0.5)   (product in double, narrowed once)
///   kKappa = 0.044715f
///   x_cube = (x * x) * x
///   inner = kBeta * fma(kKappa, x_cube, x)      (or kBeta * (x + kKappa * x_cube) when uncontracted)
///   y = (0.5f * x) * (1 + tanh(inner))
/// Every step is one binary32 rounding; gelu(-inf) is NaN ((-inf) * 0), as in eager. No NaN policy applies here.
float gelu_tanh_eager_f32(float x, const GeluConfig& cfg);

/// Widen x, gelu_tanh_eager_f32, one final rounding to the dtype under cfg.nan.
uint16_t gelu_tanh_eager(Dtype d, uint16_t x, const GeluConfig& cfg);

}  // namespace fuseproof::ref
