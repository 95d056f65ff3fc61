// ue8m0_test.cpp: tests reference/ue8m0.h: all 256 codes, the round-up encode at and around every power of two, the
// special inputs, sgl-kernel's group scale step; negative controls.
#include <cmath>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "reference/dtype.h"
#include "reference/ue8m0.h"

namespace fuseproof::ref {
namespace {

TEST(Reference_Ue8m0ToF32_ue8m0, EveryCodeFromTheDefinition) {
  for (int c = 0; c < 255; ++c) EXPECT_EQ(double(ue8m0_to_f32(uint8_t(c))), std::ldexp(1.0, c - 127)) << c;
  EXPECT_TRUE(std::isnan(ue8m0_to_f32(kUe8m0Nan)));
  EXPECT_EQ(f32_bits(ue8m0_to_f32(0x00)), 0x00400000u) << "2^-127 is a binary32 subnormal";
  EXPECT_EQ(ue8m0_to_f32(127), 1.0f);
  EXPECT_EQ(ue8m0_to_f32(0xFE), 0x1p127f);
  EXPECT_EQ(kUe8m0Nan, 0xFF);
}

/// Independent: the smallest k with 2^k >= s, judged in double; the code is k + 127.
int ceil_log2_by_search(float s) {
  const double v = std::fabs(double(s));
  int k = -149;
  while (std::ldexp(1.0, k) < v) ++k;
  return k;
}

TEST(Reference_F32ToUe8m0Ceil_ue8m0, EveryPowerOfTwoAndItsNeighbours) {
  uint64_t cases = 0;
  for (int k = -126; k <= 127; ++k) {
    const uint32_t p = uint32_t(k + 127) << 23;  // 2^k
    for (uint32_t u : {p, p + 1, p + 0x400000u, p + 0x7FFFFFu, p - 1}) {
      const float s = f32_from_bits(u);
      if (!(std::fabs(s) >= 0x1p-126f) || std::isinf(s)) continue;  // normal s only
      if (ceil_log2_by_search(s) > 127) continue;                   // no code above 2^127
      const int want = ceil_log2_by_search(s) + 127;
      EXPECT_EQ(f32_to_ue8m0_ceil(s), want) << std::hex << u;
      EXPECT_EQ(f32_to_ue8m0_ceil(-s), want) << "the sign is ignored: " << std::hex << u;
      EXPECT_GE(double(ue8m0_to_f32(uint8_t(want))), double(s));
      ++cases;
    }
  }
  EXPECT_GT(cases, 1000u);
}

TEST(Reference_F32ToUe8m0Ceil_ue8m0, SpecialInputsAreTheBitsTrickResults) {
  EXPECT_EQ(f32_to_ue8m0_ceil(0.0f), 0x00);
  EXPECT_EQ(f32_to_ue8m0_ceil(-0.0f), 0x00);
  EXPECT_EQ(f32_to_ue8m0_ceil(f32_from_bits(0x00000001)), 0x01) << "a subnormal gives 2^-126";
  EXPECT_EQ(f32_to_ue8m0_ceil(f32_from_bits(0x007FFFFF)), 0x01);
  EXPECT_EQ(f32_to_ue8m0_ceil(0x1p127f), 0xFE);
  EXPECT_EQ(f32_to_ue8m0_ceil(f32_from_bits(0x7F000001)), 0xFF) << "above 2^127: the NaN code";
  EXPECT_EQ(f32_to_ue8m0_ceil(INFINITY), 0xFF);
  EXPECT_EQ(f32_to_ue8m0_ceil(f32_from_bits(0x7FC00000)), 0x00) << "NaN: E + 1 = 256 wraps";
}

RC_GTEST_PROP(Reference_F32ToUe8m0Ceil_ue8m0, SmallestPowerOfTwoAtLeastS, (uint32_t bits)) {
  const uint32_t u = 0x00800000u + bits % (0x7F000000u - 0x00800000u);  // normal s up to 2^127
  const float s = f32_from_bits(u);
  const uint8_t c = f32_to_ue8m0_ceil(s);
  RC_ASSERT(double(ue8m0_to_f32(c)) >= double(s));
  RC_ASSERT(double(ue8m0_to_f32(c)) / 2 < double(s));
}

TEST(Reference_Ue8m0GroupScaleSgl_ue8m0, KernelArithmetic) {
  const Ue8m0GroupScale at448 = ue8m0_group_scale_sgl(448.0f);
  EXPECT_EQ(f32_bits(at448.s), 0x3F800000u) << "448 * binary32(1/448) rounds to exactly 1";
  EXPECT_EQ(at448.code, 127);
  EXPECT_EQ(at448.scale, 1.0f);
  const Ue8m0GroupScale one = ue8m0_group_scale_sgl(1.0f);
  EXPECT_EQ(f32_bits(one.s), 0x3B124925u);  // binary32(1/448)
  EXPECT_EQ(one.code, 127 - 8);             // 2^-9 < 1/448 <= 2^-8
  EXPECT_EQ(one.scale, 256.0f);
  EXPECT_EQ(one.scale_inv, 0x1p-8f);
  const Ue8m0GroupScale floor = ue8m0_group_scale_sgl(1e-10f);  // the kernel's amax floor
  EXPECT_EQ(f32_bits(floor.s), 0x2A7B5124u);
  EXPECT_EQ(floor.code, 0x55);  // 2^-42
  const Ue8m0GroupScale inf = ue8m0_group_scale_sgl(INFINITY);
  EXPECT_EQ(inf.code, 0xFF);
  EXPECT_EQ(f32_bits(inf.scale), 0xFF800000u) << "fast_pow2(-128) writes -Inf";
  EXPECT_EQ(f32_bits(inf.scale_inv), 0x7F800000u);
  for (float amax : {1.0f, 3.0f, 448.0f, 449.0f, 1e-10f, 65504.0f, 0x1p-20f}) {
    const Ue8m0GroupScale g = ue8m0_group_scale_sgl(amax);
    EXPECT_EQ(g.code, f32_to_ue8m0_ceil(g.s));
    EXPECT_EQ(g.scale * g.scale_inv, 1.0f);
    EXPECT_LE(double(amax) * double(g.scale), 448.0 * (1 + 0x1p-20)) << amax;
  }
}

TEST(Reference_F32ToUe8m0Ceil_ue8m0, NegativeControlFloorInsteadOfCeil) {
  // Rounding down (the exponent field alone) agrees at powers of two and fails just above each: the check above sees it.
  uint64_t bad = 0;
  for (int k = -126; k < 127; ++k) {
    const float s = f32_from_bits((uint32_t(k + 127) << 23) + 1);
    const uint8_t floor_code = uint8_t(f32_bits(s) >> 23);
    bad += floor_code != ceil_log2_by_search(s) + 127;
  }
  EXPECT_EQ(bad, 253u);
}

}  // namespace
}  // namespace fuseproof::ref
