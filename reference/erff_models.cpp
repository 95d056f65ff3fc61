// erff_models.cpp: CUDA, exact and libm erf for binary32.
#include "erff_models.h"

#include <cmath>
#include <stdexcept>

#include "dtype.h"

namespace fuseproof::ref {

namespace {

constexpr uint32_t kBigFrom = 0x3F8060FEu;  // 1.00295436
// Coefficients from the highest power down, as the PTX's selp pairs give them: [0] for t >= kBigFrom, [1] below.
constexpr uint32_t kCoefficients[7][2] = {
    {0x38EB4C3Au, 0x38B1E96Au}, {0xBAAE005Bu, 0xBA574D20u}, {0x3C09919Fu, 0x3BAAD5EAu}, {0xBD24D99Au, 0xBCDC1BE7u},
    {0x3E235519u, 0x3DE718AFu}, {0x3F69B4F9u, 0xBEC093ACu}, {0x3F210A14u, 0x3E0375D3u},
};

bool big_branch(float a) { return std::fabs(a) >= f32_from_bits(kBigFrom); }  // false for NaN (setp.ge)

float polynomial_r(float a) {
  const bool big = big_branch(a);
  const int set = big ? 0 : 1;
  const float t = std::fabs(a);
  const float u = big ? t : a * a;
  float p = std::fma(f32_from_bits(kCoefficients[0][set]), u, f32_from_bits(kCoefficients[1][set]));
  for (int i = 2; i < 7; ++i) p = std::fma(p, u, f32_from_bits(kCoefficients[i][set]));
  const float v = big ? -t : a;
  return std::fma(p, v, v);
}

}  // namespace

float erff_cuda_ex2_argument(float a) { return polynomial_r(a); }

bool erff_cuda_uses_ex2(float a) { return big_branch(a); }

float erff_cuda_model(float a, const MufuModel& mufu) {
  const float r = polynomial_r(a);
  if (!big_branch(a)) return r;
  return std::copysign(1.0f - mufu.ex2_approx_ftz(r), a);
}

float erff_exact(float a) { return float(std::erf(double(a))); }

float erff_libm(float a) { return ::erff(a); }

float erff_model(float a, const MathConfig& cfg) {
  switch (cfg.math) {
    case MathModel::kCuda:
      if (cfg.mufu == nullptr) throw std::invalid_argument("erff: math model cuda needs the MUFU data");
      return erff_cuda_model(a, *cfg.mufu);
    case MathModel::kExact: return erff_exact(a);
    default: return erff_libm(a);
  }
}

}  // namespace fuseproof::ref
