// audit_inputs.cpp: special patterns, ties and random patterns for the two 16-bit formats.
#include "audit/audit_inputs.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "reference/half_codec.h"

namespace fuseproof::audit {

namespace {

constexpr bool bf(ref::Dtype d) { return d == ref::Dtype::kBf16; }
int mant_bits(ref::Dtype d) { return bf(d) ? 7 : 10; }
int exp_bias(ref::Dtype d) { return bf(d) ? 127 : 15; }
uint16_t exp_mask(ref::Dtype d) { return bf(d) ? 0x7F80 : 0x7C00; }

/// The pattern of a binary32 value that is exactly representable in d.
uint16_t exact(ref::Dtype d, float v) { return ref::f32_to_half(d, v, ref::NanPolicy::kCudaCvtRn); }

}  // namespace

int min_normal_exponent(ref::Dtype d) { return 1 - exp_bias(d); }
int max_exponent(ref::Dtype d) { return exp_bias(d); }

std::vector<uint16_t> extreme_patterns(ref::Dtype d) {
  std::vector<uint16_t> p;
  const uint16_t m = uint16_t((1u << mant_bits(d)) - 1);
  const uint16_t mag[] = {
      0x0000, 0x0001, uint16_t(m / 2), m,                            // zero, subnormals
      uint16_t(1u << mant_bits(d)),                                  // min normal
      exact(d, 0.5f), exact(d, 1.0f), exact(d, 2.0f), exact(d, 3.0f), exact(d, 0.75f), exact(d, 5.0f),
      exact(d, 9.0f), exact(d, 10.0f), uint16_t(exp_mask(d) - 1),    // max finite
      exp_mask(d),                                                   // Inf
      uint16_t(exp_mask(d) | 1), uint16_t(exp_mask(d) | (1u << (mant_bits(d) - 1))), uint16_t(exp_mask(d) | m),
      uint16_t(exp_mask(d) | 0x0005),                                // signalling and quiet NaNs
  };
  for (uint16_t v : mag) {
    p.push_back(v);
    p.push_back(uint16_t(v | 0x8000));
  }
  std::sort(p.begin(), p.end());
  p.erase(std::unique(p.begin(), p.end()), p.end());
  return p;
}

std::vector<uint16_t> tie_biases(ref::Dtype d, int e) {
  // ulp of binade e is 2^(e - mant_bits); half of it must itself be a pattern of d.
  const int h = e - mant_bits(d) - 1;
  const int min_sub = min_normal_exponent(d) - mant_bits(d);
  if (h < min_sub || h > max_exponent(d)) return {};
  const uint16_t half = exact(d, std::ldexp(1.0f, h));
  std::vector<uint16_t> b;
  for (uint16_t v : {half, uint16_t(half - 1), uint16_t(half + 1)}) {
    if (v == 0) continue;
    b.push_back(v);
    b.push_back(uint16_t(v | 0x8000));
  }
  return b;
}

std::vector<uint16_t> binade_patterns(ref::Dtype d, int e) {
  std::vector<uint16_t> p;
  const uint32_t biased = uint32_t(e + exp_bias(d));
  for (uint32_t mant = 0; mant < (1u << mant_bits(d)); ++mant) {
    const uint16_t v = uint16_t((biased << mant_bits(d)) | mant);
    p.push_back(v);
    p.push_back(uint16_t(v | 0x8000));
  }
  return p;
}

uint16_t random_pattern(ref::Dtype d, std::mt19937_64& rng) {
  const uint32_t pick = uint32_t(rng() % 100);
  const uint16_t sign = (rng() & 1) ? 0x8000 : 0;
  const uint16_t m = uint16_t((1u << mant_bits(d)) - 1);
  if (pick < 40) {
    const int e = -8 + int(rng() % 12);  // [2^-8, 16)
    return uint16_t(sign | (uint32_t(e + exp_bias(d)) << mant_bits(d)) | (rng() & m));
  }
  if (pick < 60) return uint16_t(rng());
  if (pick < 75) {
    static thread_local std::vector<uint16_t> bf_special = extreme_patterns(ref::Dtype::kBf16);
    static thread_local std::vector<uint16_t> fp_special = extreme_patterns(ref::Dtype::kFp16);
    const auto& s = bf(d) ? bf_special : fp_special;
    return s[rng() % s.size()];
  }
  if (pick < 85) return uint16_t(sign | (1 + rng() % m));
  const uint32_t e = 1 + uint32_t(rng() % ((exp_mask(d) >> mant_bits(d)) - 1));
  return uint16_t(sign | (e << mant_bits(d)) | (rng() & m));
}

std::vector<uint16_t> domain_subset_biases(ref::Dtype d, uint32_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::set<uint16_t> s;
  for (uint16_t v : extreme_patterns(d)) s.insert(v);
  const uint32_t exps = uint32_t(exp_mask(d) >> mant_bits(d)) + 1;  // biased exponents, subnormal and Inf/NaN included
  const uint16_t m = uint16_t((1u << mant_bits(d)) - 1);
  for (uint32_t e = 0; e < exps; ++e)
    for (uint16_t sign : {uint16_t(0), uint16_t(0x8000)}) s.insert(uint16_t(sign | (e << mant_bits(d)) | (rng() & m)));
  while (s.size() < std::min<uint32_t>(count, 65536)) s.insert(uint16_t(rng()));
  return {s.begin(), s.end()};
}

}  // namespace fuseproof::audit
