// bit_patterns_test.cpp: tests property_tests/support/bit_patterns.h: each generator, sampled at rapidcheck sizes 0
// and 100, yields every class it claims, every exponent, and ties that are exact ties in every binade.
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "property_tests/support/bit_patterns.h"
#include "reference/half_codec.h"

namespace fuseproof::test {
namespace {

using ref::Dtype;

constexpr int kSizes[] = {0, 100};  // rapidcheck starts at size 0; the classes must not depend on it

template <class T>
std::vector<T> sample(const rc::Gen<T>& g, int size, int n, uint64_t seed = 1) {
  rc::Random r(seed);
  std::vector<T> v;
  v.reserve(size_t(n));
  for (int i = 0; i < n; ++i) v.push_back(g(r.split(), size).value());
  return v;
}

int mant_bits(Dtype d) { return d == Dtype::kBf16 ? 7 : 10; }
int exp_bias(Dtype d) { return d == Dtype::kBf16 ? 127 : 15; }
uint16_t inf_bits(Dtype d) { return d == Dtype::kBf16 ? 0x7F80 : 0x7C00; }
int exponent_field(Dtype d, uint16_t h) { return (h & 0x7FFF) >> mant_bits(d); }

/// The class of one pattern, judged from its fields here (not with the generator's code).
HalfClass classify(Dtype d, uint16_t h) {
  const uint16_t mag = h & 0x7FFF, inf = inf_bits(d);
  const uint16_t quiet = uint16_t(1u << (mant_bits(d) - 1));
  if (mag == 0) return HalfClass::kZero;
  if (mag > inf) return (mag & quiet) ? HalfClass::kQuietNan : HalfClass::kSignalingNan;
  if (mag == inf) return HalfClass::kInf;
  if (mag >= inf - 4) return HalfClass::kNearOverflow;
  return exponent_field(d, h) == 0 ? HalfClass::kSubnormal : HalfClass::kNormal;
}

/// x + bias in double (exact for two halves): its binade E (at least emin) and its distance from the nearest tie in
/// ulps of E (0: an exact tie).
struct SumAtTie {
  int binade;
  double from_tie;
};
SumAtTie sum_at_tie(Dtype d, uint16_t x, uint16_t b) {
  const double s = std::fabs(double(ref::half_to_f32(d, x)) + double(ref::half_to_f32(d, b)));
  int e = 0;
  std::frexp(s, &e);  // s = f 2^e, f in [1/2, 1)
  const int binade = std::max(e - 1, 1 - exp_bias(d));
  const double q = s / std::ldexp(1.0, binade - mant_bits(d));  // exact: a power-of-two divisor
  return {binade, q - std::floor(q) - 0.5};
}

std::string hex4(uint16_t h) {
  char b[8];
  std::snprintf(b, sizeof b, "0x%04X", h);
  return b;
}

TEST(Support_GenHalfBits_both, EveryClassOccursAtEverySize) {
  for (Dtype d : ref::kAllDtypes) {
    for (int size : kSizes) {
      std::set<HalfClass> seen;
      for (uint16_t h : sample(gen_half_bits(d), size, 4000)) seen.insert(classify(d, h));
      for (HalfClass c : kAllHalfClasses)
        if (c != HalfClass::kAny)
          EXPECT_TRUE(seen.count(c)) << ref::dtype_name(d) << " size " << size << ": no " << half_class_name(c);
    }
  }
}

TEST(Support_GenHalfBitsOf_both, EachClassStaysInItsClassWithEveryField) {
  for (Dtype d : ref::kAllDtypes) {
    for (int size : kSizes) {
      for (HalfClass c : kAllHalfClasses) {
        if (c == HalfClass::kAny) continue;
        std::set<int> exponents, signs, low_bits, high_bits;
        for (uint16_t h : sample(gen_half_bits_of(d, c), size, 20000)) {
          // A normal may be one of the top few finite patterns, which classify() calls near-overflow.
          const HalfClass got = classify(d, h);
          ASSERT_TRUE(got == c || (c == HalfClass::kNormal && got == HalfClass::kNearOverflow))
              << ref::dtype_name(d) << " " << half_class_name(c) << " gave " << hex4(h);
          exponents.insert(exponent_field(d, h));
          signs.insert(h >> 15);
          low_bits.insert(h & 1);
          high_bits.insert((h >> (mant_bits(d) - 2)) & 1);
        }
        const std::string what = std::string(ref::dtype_name(d)) + " " + half_class_name(c) + " size " + std::to_string(size);
        EXPECT_EQ(signs.size(), 2u) << what << ": one sign only";
        if (c == HalfClass::kNormal) {
          // Every exponent 1 .. all-ones - 1 (drawn uniformly: small sizes once gave only tiny exponents).
          EXPECT_EQ(exponents.size(), size_t((inf_bits(d) >> mant_bits(d)) - 1)) << what;
          EXPECT_EQ(low_bits.size(), 2u) << what;
          EXPECT_EQ(high_bits.size(), 2u) << what;
        }
        if (c == HalfClass::kSubnormal || c == HalfClass::kQuietNan || c == HalfClass::kSignalingNan)
          EXPECT_EQ(low_bits.size(), 2u) << what << ": the payload or mantissa does not vary";
      }
    }
  }
}

TEST(Support_GenHalfPair_both, ExactTiesInEveryBinadeEitherSignAndOrder) {
  for (Dtype d : ref::kAllDtypes) {
    const int emin = 1 - exp_bias(d), emax = exp_bias(d);
    for (int size : kSizes) {
      std::set<int> binades;
      std::set<bool> signs, x_larger;
      for (auto [x, b] : sample(gen_half_pair_of(d, PairClass::kExactTie), size, 30000)) {
        const SumAtTie s = sum_at_tie(d, x, b);
        ASSERT_EQ(s.from_tie, 0.0) << ref::dtype_name(d) << " x=" << hex4(x) << " b=" << hex4(b) << " is not a tie";
        binades.insert(s.binade);
        signs.insert(x >> 15);
        x_larger.insert((x & 0x7FFF) > (b & 0x7FFF));
      }
      // Below emin + 1 no tie exists: every sum of two halves there is exact.
      EXPECT_EQ(binades.size(), size_t(emax - emin)) << ref::dtype_name(d) << " size " << size;
      EXPECT_EQ(*binades.begin(), emin + 1);
      EXPECT_EQ(*binades.rbegin(), emax);
      EXPECT_EQ(signs.size(), 2u);
      EXPECT_EQ(x_larger.size(), 2u) << "x and bias always in the same order";
    }
  }
}

TEST(Support_GenHalfPair_both, TieNeighboursMissTheTieOnBothSides) {
  for (Dtype d : ref::kAllDtypes) {
    for (int size : kSizes) {
      std::set<bool> above;
      for (auto [x, b] : sample(gen_half_pair_of(d, PairClass::kTieNeighbour), size, 5000)) {
        const SumAtTie s = sum_at_tie(d, x, b);
        ASSERT_NE(s.from_tie, 0.0) << ref::dtype_name(d) << " x=" << hex4(x) << " b=" << hex4(b) << " is a tie";
        above.insert(s.from_tie > 0);
      }
      EXPECT_EQ(above.size(), 2u) << ref::dtype_name(d) << " size " << size << ": neighbours on one side only";
    }
  }
}

TEST(Support_GenHalfPair_both, MixHoldsTiesAndIndependentPairs) {
  for (Dtype d : ref::kAllDtypes) {
    for (int size : kSizes) {
      int ties = 0, nan_or_inf = 0;
      for (auto [x, b] : sample(gen_half_pair(d), size, 4000)) {
        const bool special = (x & 0x7FFF) >= inf_bits(d) || (b & 0x7FFF) >= inf_bits(d);
        nan_or_inf += special;
        ties += !special && sum_at_tie(d, x, b).from_tie == 0.0;
      }
      EXPECT_GT(ties, 800) << ref::dtype_name(d) << " size " << size;
      EXPECT_GT(nan_or_inf, 100) << ref::dtype_name(d) << " size " << size;
    }
  }
}

/// What a binary32 pattern is, judged here from its bits and value.
std::set<std::string> f32_traits(uint32_t u) {
  std::set<std::string> t;
  const uint32_t mag = u & 0x7FFFFFFFu, ex = mag >> 23;
  const float f = std::fabs(ref::f32_from_bits(u));
  if (mag == 0) t.insert("zero");
  if (ex == 0 && mag != 0) t.insert("subnormal");
  if (ex > 0 && ex < 255) t.insert("normal");
  if (mag == 0x7F800000u) t.insert("inf");
  if (mag > 0x7F800000u) t.insert(mag & 0x00400000u ? "quiet-nan" : "signalling-nan");
  if (mag < 0x7F800000u) {
    const uint32_t low = mag & 0xFFFFu;
    if (low == 0x8000u) t.insert("bf16-tie");
    if (low == 0x7FFFu) t.insert("bf16-tie-1");
    if (low == 0x8001u) t.insert("bf16-tie+1");
    if (ex >= 113 && ex <= 142 && (mag & 0x1FFFu) == 0x1000u) t.insert("fp16-normal-tie");
    const double q = double(f) * 0x1p25;  // fp16 subnormal ties are odd multiples of 2^-25 below 2^-14
    if (f < 0x1p-14f && q == std::floor(q) && std::fmod(q, 2.0) == 1.0) t.insert("fp16-subnormal-tie");
    if (f >= 0x1p-25f && f < 0x1p-14f) t.insert("fp16-subnormal-range");
    if (f >= 65504.0f && f <= 65536.0f) t.insert("near-fp16-overflow");
    if (mag >= 0x7F7F0000u) t.insert("near-bf16-overflow");
  }
  return t;
}

TEST(Support_GenF32Bits_f32, EveryClassOccursAtEverySize) {
  const char* wanted[] = {"zero",          "subnormal",         "normal",          "inf",
                          "quiet-nan",     "signalling-nan",    "bf16-tie",        "bf16-tie-1",
                          "bf16-tie+1",    "fp16-normal-tie",   "fp16-subnormal-tie", "fp16-subnormal-range",
                          "near-fp16-overflow", "near-bf16-overflow"};
  for (int size : kSizes) {
    std::set<std::string> seen;
    std::set<bool> signs;
    for (uint32_t u : sample(gen_f32_bits(), size, 6000)) {
      for (const auto& t : f32_traits(u)) seen.insert(t);
      signs.insert(u >> 31);
    }
    for (const char* w : wanted) EXPECT_TRUE(seen.count(w)) << "size " << size << ": no " << w;
    EXPECT_EQ(signs.size(), 2u);
  }
}

TEST(Support_GenF32BitsOf_f32, TiesInEveryBinade) {
  for (int size : kSizes) {
    std::set<uint32_t> bf16_exponents, fp16_binades, offsets;
    for (uint32_t u : sample(gen_f32_bits_of(F32Class::kBf16Tie), size, 20000)) {
      const uint32_t mag = u & 0x7FFFFFFFu, off = (mag & 0xFFFFu) - 0x7FFFu;  // 0, 1, 2: tie - 1, tie, tie + 1
      ASSERT_LE(off, 2u) << std::hex << u << " is not within one binary32 ulp of a bf16 tie";
      bf16_exponents.insert(mag >> 23);
      offsets.insert(off);
    }
    EXPECT_EQ(offsets.size(), 3u) << "size " << size << ": tie - 1, tie and tie + 1 must all occur";
    EXPECT_EQ(bf16_exponents.size(), 255u) << "size " << size << ": binary32 exponents 0 .. 254";
    for (uint32_t u : sample(gen_f32_bits_of(F32Class::kFp16Tie), size, 20000)) {
      const auto t = f32_traits(u - 1), t0 = f32_traits(u), t1 = f32_traits(u + 1);
      const bool normal = t.count("fp16-normal-tie") || t0.count("fp16-normal-tie") || t1.count("fp16-normal-tie");
      const bool sub = t.count("fp16-subnormal-tie") || t0.count("fp16-subnormal-tie") || t1.count("fp16-subnormal-tie");
      ASSERT_TRUE(normal || sub) << std::hex << u << " is not within one ulp of an fp16 tie";
      fp16_binades.insert(normal ? (u & 0x7FFFFFFFu) >> 23 : 0u);
    }
    EXPECT_EQ(fp16_binades.size(), 31u) << "size " << size << ": fp16's 30 normal binades and its subnormals";
  }
}

}  // namespace
}  // namespace fuseproof::test
