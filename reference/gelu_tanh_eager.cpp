// gelu_tanh_eager.cpp: the eager GELU(tanh) formula in binary32.
#include "gelu_tanh_eager.h"

#include <cmath>

#include "half_codec.h"
#include "tanh_models.h"

namespace fuseproof::ref {

namespace {
constexpr double kSqrt2 = 1.41421356237309504880;      // M_SQRT2
constexpr double k2OverSqrtPi = 1.12837916709551257390; // M_2_SQRTPI
}  // namespace

float gelu_tanh_eager_f32(float x, const MathConfig& cfg) {
  const float kBeta = float(kSqrt2 * k2OverSqrtPi * 0.5);
  const float kKappa = float(0.044715);
  const float x_cube = (x * x) * x;
  const float sum = cfg.contraction == Contraction::kFma ? std::fma(kKappa, x_cube, x) : x + kKappa * x_cube;
  const float inner = kBeta * sum;
  return (0.5f * x) * (1.0f + tanhf_model(inner, cfg));
}

uint16_t gelu_tanh_eager(Dtype d, uint16_t x, const MathConfig& cfg) {
  return f32_to_half(d, gelu_tanh_eager_f32(half_to_f32(d, x), cfg), cfg.nan);
}

}  // namespace fuseproof::ref
