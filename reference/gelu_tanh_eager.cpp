// gelu_tanh_eager.cpp: the eager GELU(tanh) formula in binary32.
#include "gelu_tanh_eager.h"

#include <cmath>
#include <stdexcept>

#include "half_codec.h"

namespace fuseproof::ref {

namespace {
constexpr double kSqrt2 = 1.41421356237309504880;      // M_SQRT2
constexpr double k2OverSqrtPi = 1.12837916709551257390; // M_2_SQRTPI
}  // namespace

float gelu_tanh_eager_f32(float x, const GeluConfig& cfg) {
  const float kBeta = float(kSqrt2 * k2OverSqrtPi * 0.5);
  const float kKappa = float(0.044715);
  const float x_cube = (x * x) * x;
  const float sum = cfg.contraction == Contraction::kFma ? std::fma(kKappa, x_cube, x) : x + kKappa * x_cube;
  const float inner = kBeta * sum;
  float t;
  switch (cfg.tanh) {
    case TanhModel::kCuda:
      if (cfg.mufu == nullptr) throw std::invalid_argument("gelu_tanh_eager: tanh model cuda needs the MUFU tables");
      t = tanhf_cuda_model(inner, *cfg.mufu);
      break;
    case TanhModel::kExact: t = tanhf_exact(inner); break;
    default: t = tanhf_libm(inner); break;
  }
  return (0.5f * x) * (1.0f + t);
}

uint16_t gelu_tanh_eager(Dtype d, uint16_t x, const GeluConfig& cfg) {
  return f32_to_half(d, gelu_tanh_eager_f32(half_to_f32(d, x), cfg), cfg.nan);
}

}  // namespace fuseproof::ref
