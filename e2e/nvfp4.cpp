// nvfp4.cpp: E2M1 and E4M3 conversions and the two-level NVFP4 block quantisation.
#include "nvfp4.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace fuseproof::e2e {
namespace {
constexpr float kE2m1Magnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
}  // namespace

float e2m1_to_f32(uint8_t code) {
  const float m = kE2m1Magnitudes[code & 0x7];
  return (code & 0x8) ? -m : m;
}

uint8_t f32_to_e2m1(float v) {
  const uint8_t sign = std::signbit(v) ? 0x8 : 0x0;
  const float a = std::fabs(v);
  // Midpoints between neighbours; at a tie the even code (mantissa bit 0) wins: 0.25->0, 0.75->1, 1.25->1, 1.75->2,
  // 2.5->2, 3.5->4, 5->4.
  uint8_t code;
  if (a <= 0.25f) code = 0;
  else if (a < 0.75f) code = 1;
  else if (a <= 1.25f) code = 2;
  else if (a < 1.75f) code = 3;
  else if (a <= 2.5f) code = 4;
  else if (a < 3.5f) code = 5;
  else if (a <= 5.0f) code = 6;
  else code = 7;
  return sign | code;
}

float e4m3_to_f32(uint8_t code) {
  const int exp = (code >> 3) & 0xF;
  const int man = code & 0x7;
  const bool neg = code & 0x80;
  if (exp == 0xF && man == 0x7) return std::nanf("");
  // Subnormals: man/8 * 2^-6; normals: (1 + man/8) * 2^(exp-7). ldexp is exact here.
  const float mag = exp == 0 ? std::ldexp(static_cast<float>(man), -9) : std::ldexp(static_cast<float>(8 + man), exp - 10);
  return neg ? -mag : mag;
}

uint8_t f32_to_e4m3(float v) {
  const uint8_t sign = std::signbit(v) ? 0x80 : 0x00;
  const float a = std::fabs(v);
  if (std::isnan(v)) return sign | 0x7F;
  if (a >= kE4m3Max) return sign | 0x7E;  // satfinite
  if (a == 0.0f) return sign;
  int e = 0;
  std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1): the leading bit is 2^(e-1)
  const int lead = std::max(e - 1, -6);  // subnormals share the 2^-6 exponent
  const float quantum = std::ldexp(1.0f, lead - 3);
  const float q = std::nearbyint(a / quantum);  // a / quantum is exact (power-of-two divide); round half to even
  const float r = q * quantum;
  if (r >= kE4m3Max) return sign | 0x7E;
  // Re-encode r: it is representable, so its fields follow directly.
  if (r < 0x1p-6f) return sign | static_cast<uint8_t>(std::nearbyint(r / 0x1p-9f));
  int re = 0;
  const float rf = std::frexp(r, &re);  // r = rf * 2^re, rf in [0.5, 1)
  const int man = static_cast<int>(std::nearbyint(rf * 16.0f)) - 8;
  return sign | static_cast<uint8_t>(((re - 1 + 7) << 3) | man);
}

Nvfp4Matrix quantize_nvfp4(const float* w, int64_t rows, int64_t cols) {
  if (cols % kNvfp4BlockSize != 0) {
    throw std::invalid_argument("quantize_nvfp4: cols must be a multiple of 16, got " + std::to_string(cols));
  }
  Nvfp4Matrix m;
  m.rows = rows;
  m.cols = cols;
  m.codes.resize(static_cast<size_t>(rows * cols));
  m.block_scales.resize(static_cast<size_t>(rows * cols / kNvfp4BlockSize));
  float amax = 0.0f;
  for (int64_t i = 0; i < rows * cols; ++i) amax = std::max(amax, std::fabs(w[i]));
  m.tensor_scale = amax > 0.0f ? amax / (kE4m3Max * kE2m1Max) : 1.0f;
  for (int64_t b = 0; b < rows * cols / kNvfp4BlockSize; ++b) {
    const float* blk = w + b * kNvfp4BlockSize;
    float bmax = 0.0f;
    for (int i = 0; i < kNvfp4BlockSize; ++i) bmax = std::max(bmax, std::fabs(blk[i]));
    const uint8_t s = f32_to_e4m3(bmax / kE2m1Max / m.tensor_scale);
    m.block_scales[static_cast<size_t>(b)] = s;
    const float step = e4m3_to_f32(s) * m.tensor_scale;
    for (int i = 0; i < kNvfp4BlockSize; ++i) {
      m.codes[static_cast<size_t>(b * kNvfp4BlockSize + i)] = step > 0.0f ? f32_to_e2m1(blk[i] / step) : 0;
    }
  }
  return m;
}

std::vector<float> dequantize_nvfp4_unscaled(const Nvfp4Matrix& m) {
  std::vector<float> out(m.codes.size());
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = e2m1_to_f32(m.codes[i]) * e4m3_to_f32(m.block_scales[i / kNvfp4BlockSize]);
  }
  return out;
}

}  // namespace fuseproof::e2e
