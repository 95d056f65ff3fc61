// tanh_models.cpp: CUDA, exact and libm tanh for binary32.
#include "tanh_models.h"

#include <cmath>
#include <stdexcept>

#include "dtype.h"

namespace fuseproof::ref {

float tanhf_cuda_model(float a, const MufuModel& mufu) {
  const float k2Log2e = f32_from_bits(0x4038AA3Bu);       // 2.88539004 = 2 / ln 2
  const float kSaturate = f32_from_bits(0x41102CB4u);     // 9.01091385: tanh rounds to 1 from here
  const float kPolyLimit = f32_from_bits(0x3F19999Au);    // 0.600000024: polynomial below, exp form above
  const float t = std::fabs(a);
  float big = 1.0f;
  if (t >= kPolyLimit && t < kSaturate) {
    // The device evaluates this on every lane and discards it with FSEL; only the used values are modelled.
    const float e = mufu.ex2_approx_ftz(t * k2Log2e);
    const float r = mufu.rcp_approx_ftz(e + 1.0f);
    big = std::fma(r, -2.0f, 1.0f);
  }
  if (t >= kPolyLimit) return std::copysign(big, a);
  const float x2 = a * a;
  float p = std::fma(f32_from_bits(0x3C80F082u), x2, f32_from_bits(0xBD563CAEu));
  p = std::fma(p, x2, f32_from_bits(0x3E085941u));
  p = std::fma(p, x2, f32_from_bits(0xBEAAA9EDu));
  p = std::fma(p, x2, 0.0f);
  return std::fma(p, a, a);
}

float tanhf_exact(float a) { return float(std::tanh(double(a))); }

float tanhf_libm(float a) { return ::tanhf(a); }

float tanhf_model(float a, const MathConfig& cfg) {
  switch (cfg.math) {
    case MathModel::kCuda:
      if (cfg.mufu == nullptr) throw std::invalid_argument("tanhf: math model cuda needs the MUFU tables");
      return tanhf_cuda_model(a, *cfg.mufu);
    case MathModel::kExact: return tanhf_exact(a);
    default: return tanhf_libm(a);
  }
}

}  // namespace fuseproof::ref
