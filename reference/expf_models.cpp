// expf_models.cpp: CUDA, exact and libm exp for binary32.
#include "expf_models.h"

#include <cmath>
#include <stdexcept>

#include "dtype.h"

namespace fuseproof::ref {

namespace {

struct Reduction {
  float r;      // the ex2 argument
  uint32_t j;   // bits of j, whose low 9 bits shifted up by 23 are the exponent field of 2^k
};

Reduction reduce(float a) {
  const float t = std::fma(a, f32_from_bits(0x3BBB989Du), 0.5f);
  // cvt.sat.f32.f32 clamps to [0, 1] and sends NaN to +0.
  const float s = std::isnan(t) ? 0.0f : std::fmin(std::fmax(t, 0.0f), 1.0f);
  // fma.rm(s, 252, 12582913): the exact s * 252 (24 + 8 bits, exact in binary64) plus an integer of the binade
  // [2^23, 2^24), where binary32's spacing is 1, rounded down: 12582913 + floor(s * 252).
  const float j = float(12582913.0 + std::floor(double(s) * 252.0));
  const float k = j + f32_from_bits(0xCB40007Fu);  // j - 12583039, exact: both are integers below 2^24
  float r = std::fma(a, f32_from_bits(0x3FB8AA3Bu), -k);
  r = std::fma(a, f32_from_bits(0x32A57060u), r);
  return {r, f32_bits(j)};
}

}  // namespace

float expf_cuda_ex2_argument(float a) { return reduce(a).r; }

ExpfParts expf_cuda_parts(float a, const MufuModel& mufu) {
  const Reduction red = reduce(a);
  return {mufu.ex2_approx_ftz(red.r), f32_from_bits(red.j << 23)};
}

float expf_cuda_model(float a, const MufuModel& mufu) {
  const ExpfParts p = expf_cuda_parts(a, mufu);
  return p.e * p.scale;
}

float expf_exact(float a) { return float(std::exp(double(a))); }

float expf_libm(float a) { return ::expf(a); }

float expf_model(float a, const MathConfig& cfg) {
  switch (cfg.math) {
    case MathModel::kCuda:
      if (cfg.mufu == nullptr) throw std::invalid_argument("expf: math model cuda needs the MUFU data");
      return expf_cuda_model(a, *cfg.mufu);
    case MathModel::kExact: return expf_exact(a);
    default: return expf_libm(a);
  }
}

}  // namespace fuseproof::ref
