// mutant_host_kernel.h: a correct host bias_gelu_tanh (eager semantics, host tanhf) with one switchable bug.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/mutants/mutant_bugs.h"

namespace fuseproof::mutants {

inline uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// bf16 | S |EEEEEEEE|MMMMMMM| is the top half of binary32: widening is a shift.
inline float bf16_widen(uint16_t h) { return float_of(uint32_t(h) << 16); }

/// fp16 | S |EEEEE|MMMMMMMMMM| widened exactly; `ftz` flushes subnormals to signed zero.
inline float fp16_widen(uint16_t h, bool ftz) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  if (e == 0x1F) return float_of(sign | 0x7F800000u | (m << 13));
  if (e != 0) return float_of(sign | ((e + 112) << 23) | (m << 13));
  if (m == 0 || ftz) return float_of(sign);
  const float mag = float(m) * 0x1p-24f;  // exact: m < 2^10
  return sign ? -mag : mag;
}

struct Narrowing {
  bool truncate = false;    // round toward zero instead of to nearest even
  uint16_t nan = 0x7FFF;    // NaN output pattern
  bool fp16_ftz = false;    // flush fp16 subnormal results to zero
};

inline uint16_t bf16_narrow(float f, const Narrowing& n) {
  const uint32_t u = bits_of(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return n.nan;
  if (n.truncate) return uint16_t(u >> 16);
  return uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);  // ties to even; carries into the exponent correctly
}

inline uint16_t fp16_narrow(float f, const Narrowing& n) {
  const uint32_t u = bits_of(f);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return n.nan;
  if (a >= (n.truncate ? 0x47800000u : 0x477FF000u)) return uint16_t(sign | 0x7C00u);  // 65520 rounds to Inf
  const int e = int(a >> 23) - 127;
  const uint32_t m = (a & 0x7FFFFFu) | 0x800000u;
  uint32_t q, rem, half;
  if (e < -14) {
    if (n.fp16_ftz || e < -25) return sign;
    const int s = -e - 1;  // result in units of 2^-24: m * 2^(e - 23 + 24)
    q = m >> s;
    rem = m & ((1u << s) - 1);
    half = 1u << (s - 1);
  } else {
    q = (uint32_t(e + 15) << 10) | ((a >> 13) & 0x3FFu);
    rem = a & 0x1FFFu;
    half = 0x1000u;
  }
  if (!n.truncate && (rem > half || (rem == half && (q & 1u)))) ++q;
  if (n.fp16_ftz && q < 0x400u) return sign;
  return uint16_t(sign | q);
}

inline float gelu_tanh_f32(float x, Bug bug) {
  const float kBeta = float(1.41421356237309504880 * 1.12837916709551257390 * 0.5);
  const float kKappa = float(0.044715);
  if (bug == Bug::kErfGelu) return (0.5f * x) * (1.0f + std::erf(x * float(0.70710678118654752440)));
  const float x_cube = (x * x) * x;
  const float inner = kBeta * std::fma(kKappa, x_cube, x);
  const float t = bug == Bug::kFastTanh ? 1.0f - 2.0f / (std::exp(2.0f * inner) + 1.0f) : std::tanh(inner);
  return (0.5f * x) * (1.0f + t);
}

/// One element: out = gelu(round_T(x + b)), with the bug's change.
inline uint16_t bias_gelu_element(bool bf16, uint16_t x, uint16_t b, Bug bug) {
  const bool ftz = !bf16 && bug == Bug::kFp16SubnormalFtz;
  Narrowing add_n, out_n;
  add_n.truncate = bug == Bug::kTruncatedAdd;
  add_n.fp16_ftz = ftz;
  out_n.fp16_ftz = ftz;
  if (bug == Bug::kNanPattern) out_n.nan = bf16 ? 0x7FC0 : 0x7E00;
  auto widen = [&](uint16_t h) { return bf16 ? bf16_widen(h) : fp16_widen(h, ftz); };
  auto narrow = [&](float f, const Narrowing& n) { return bf16 ? bf16_narrow(f, n) : fp16_narrow(f, n); };
  const float sum = widen(x) + widen(b);
  const float g = bug == Bug::kUnroundedSum ? gelu_tanh_f32(sum, bug) : gelu_tanh_f32(widen(narrow(sum, add_n)), bug);
  uint16_t y = narrow(g, out_n);
  if (bug == Bug::kZeroSignLost && (y & 0x7FFFu) == 0) y = 0;
  return y;
}

/// The whole op on host memory, V elements per "vector", after validation.
inline void bias_gelu_host(uint16_t* out, const uint16_t* x, const uint16_t* bias, int64_t rows, int64_t width,
                           bool bf16, int64_t v, Bug bug) {
  int64_t vecs = width / v, tail = width % v;
  if (bug == Bug::kTailOverread && tail) vecs += 1, tail = 0;  // ceil: the last vector runs past the row
  if (bug == Bug::kSkipLastVector) vecs -= 1;
  if (bug == Bug::kRowsOver65535 && rows > 65535) rows = 65535;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t base = r * width;
    for (int64_t i = 0; i < vecs * v + tail; ++i) {
      const int64_t c = i;
      int64_t bc = c % width;
      if (bug == Bug::kBiasOffByOne) bc = (c + 1) % width;
      if (bug == Bug::kBiasByRow) bc = r % width;
      if (bug == Bug::kBiasCache8192) bc = c % 8192;
      int64_t xi = base + c;
      if (bug == Bug::kOobRead && r == rows - 1 && i == vecs * v + tail - 1) xi += int64_t(1) << 30;
      out[base + c] = bias_gelu_element(bf16, x[xi], bias[bc], bug);
    }
  }
}

}  // namespace fuseproof::mutants
