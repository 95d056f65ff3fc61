// f32_to_e4m3_test.cpp: tests reference/f32_to_e4m3.h: every constant, the ties and overflow of both conventions,
// every rounding boundary against the independent model, the decode; negative controls.
#include <cmath>
#include <cstring>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "property_tests/reference/narrow_format_oracle.h"
#include "property_tests/support/bit_patterns.h"
#include "reference/f32_to_e4m3.h"

namespace fuseproof::ref {
namespace {

constexpr E4m3Overflow kSat = E4m3Overflow::kSaturate;
constexpr E4m3Overflow kNanOv = E4m3Overflow::kNan;

TEST(Reference_F32ToE4m3_constants, EachConstantOnItsOwn) {
  EXPECT_EQ(e4m3_to_f32(kE4m3MaxFinite), 448.0f);
  EXPECT_TRUE(std::isnan(e4m3_to_f32(kE4m3Nan)));
  EXPECT_TRUE(std::isnan(e4m3_to_f32(0xFF)));
  EXPECT_EQ(f32_from_bits(kE4m3OverflowTieBits), 464.0f);
  EXPECT_EQ(f32_from_bits(kE4m3MinNormalBits), 0x1p-6f);
  EXPECT_EQ(e4m3_to_f32(0x08), 0x1p-6f) << "0x08 is the smallest normal";
  EXPECT_EQ(e4m3_to_f32(0x01), 0x1p-9f) << "0x01 is the smallest subnormal";
  EXPECT_EQ(e4m3_to_f32(0x07), 7 * 0x1p-9f) << "0x07 is the largest subnormal";
  EXPECT_EQ(e4m3_to_f32(0x38), 1.0f);
  EXPECT_EQ(e4m3_to_f32(0x77), 240.0f);
  EXPECT_EQ(e4m3_to_f32(0x78), 256.0f);
  EXPECT_EQ(f32_bits(e4m3_to_f32(0x80)), 0x80000000u) << "0x80 is -0";
  EXPECT_EQ(f32_bits(e4m3_to_f32(0x7F)), 0x7FF00000u);
  EXPECT_EQ(f32_bits(e4m3_to_f32(0xFF)), 0xFFF00000u);
  EXPECT_STREQ(e4m3_overflow_name(kSat), "saturate");
  EXPECT_STREQ(e4m3_overflow_name(kNanOv), "nan");
  EXPECT_EQ(parse_e4m3_overflow("saturate"), kSat);
  EXPECT_EQ(parse_e4m3_overflow("nan"), kNanOv);
  EXPECT_FALSE(parse_e4m3_overflow("satfinite").has_value());
}

struct Case {
  uint32_t in;
  uint8_t sat, nan;
};

TEST(Reference_F32ToE4m3_both, SpecialValuesOfBothConventions) {
  const Case cases[] = {
      {0x00000000, 0x00, 0x00},  // +0
      {0x80000000, 0x80, 0x80},  // -0 keeps its sign
      {0x3F800000, 0x38, 0x38},  // 1
      {0x43E00000, 0x7E, 0x7E},  // 448
      {0xC3E00000, 0xFE, 0xFE},  // -448
      {0x43E7FFFF, 0x7E, 0x7E},  // just below the tie 464
      {0x43E80000, 0x7E, 0x7E},  // 464: the tie goes to even 0x7E in both (measured on the H200: torch 0x7E)
      {0x43E80001, 0x7E, 0x7F},  // 464.00003: overflow; torch's carry gives NaN (measured: 0x7F)
      {0xC3E80001, 0xFE, 0xFF},  // -464.00003
      {0x43F00000, 0x7E, 0x7F},  // 480 (measured: 0x7F)
      {0x43EFFFFF, 0x7E, 0x7F},  // just below 480: torch rounds up into 0x7F
      {0x7F7FFFFF, 0x7E, 0x7F},  // FLT_MAX
      {0x7F800000, 0x7E, 0x7F},  // +Inf (measured: 0x7F)
      {0xFF800000, 0xFE, 0xFF},  // -Inf: sign kept in both
      {0x3B000000, 0x01, 0x01},  // 2^-9, the smallest subnormal
      {0x3A800000, 0x00, 0x00},  // 2^-10: the tie between 0 and 2^-9 goes to 0
      {0xBA800000, 0x80, 0x80},  // -2^-10 -> -0
      {0x3A800001, 0x01, 0x01},  // just above 2^-10
      {0x3A7FFFFF, 0x00, 0x00},  // just below
      {0x3B400000, 0x02, 0x02},  // 1.5 * 2^-9: tie between 0x01 and 0x02 -> even 0x02
      {0x3BA00000, 0x02, 0x02},  // 2.5 * 2^-9: tie -> 0x02
      {0x3C700000, 0x08, 0x08},  // 7.5 * 2^-9: tie between 0x07 and 0x08 (2^-6) -> even 0x08
      {0x3C800000, 0x08, 0x08},  // 2^-6
      {0x3F880000, 0x38, 0x38},  // 1.0625: tie between 1 and 1.125 -> 1
      {0x3F980000, 0x3A, 0x3A},  // 1.1875: tie between 1.125 (0x39) and 1.25 (0x3A) -> 0x3A
      {0x00000001, 0x00, 0x00},  // the smallest binary32 subnormal
      {0x80000001, 0x80, 0x80},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(f32_to_e4m3(f32_from_bits(c.in), kSat), c.sat) << std::hex << "saturate x=0x" << c.in;
    EXPECT_EQ(f32_to_e4m3(f32_from_bits(c.in), kNanOv), c.nan) << std::hex << "nan x=0x" << c.in;
  }
}

TEST(Reference_F32ToE4m3_both, EveryNanClassAndPayload) {
  // Saturate: CUDA canonicalises the NaN first, so 0x7F whatever its sign or payload. torch: 0x7F | sign.
  for (uint32_t n : {0x7FC00000u, 0x7F800001u, 0x7FFFFFFFu, 0x7FA5A5A5u, 0xFFC00000u, 0xFF800001u, 0xFFFFFFFFu}) {
    const float f = f32_from_bits(n);
    EXPECT_EQ(f32_to_e4m3(f, kSat), 0x7F) << std::hex << n;
    EXPECT_EQ(f32_to_e4m3(f, kNanOv), (n >> 31) ? 0xFF : 0x7F) << std::hex << n;
  }
}

TEST(Reference_E4m3ToF32_e4m3, EveryCodeFromTheDefinition) {
  for (int c = 0; c < 256; ++c) {
    const float got = e4m3_to_f32(uint8_t(c));
    const int s = c >> 7, e = (c >> 3) & 15, m = c & 7;
    if (e == 15 && m == 7) {
      EXPECT_TRUE(std::isnan(got)) << c;
      continue;
    }
    const double mag = e == 0 ? std::ldexp(m / 8.0, -6) : std::ldexp(1.0 + m / 8.0, e - 7);
    EXPECT_EQ(double(got), s ? -mag : mag) << c;
    EXPECT_EQ(std::signbit(got), bool(s)) << c;
    // A finite code survives the round trip in both conventions.
    EXPECT_EQ(f32_to_e4m3(got, kSat), c) << c;
    EXPECT_EQ(f32_to_e4m3(got, kNanOv), c) << c;
  }
}

/// Every rounding boundary of the model and its binary32 neighbours (+-1, +-2 patterns), both signs.
std::vector<uint32_t> boundary_neighbourhoods() {
  std::vector<uint32_t> out;
  for (int c = 0; c + 1 < 0x7F; ++c) {
    const double mid = (double(e4m3_to_f32(uint8_t(c))) + double(e4m3_to_f32(uint8_t(c + 1)))) / 2;
    const uint32_t b = f32_bits(float(mid));
    for (int d = -2; d <= 2; ++d) out.push_back(uint32_t(int64_t(b) + d));
  }
  for (uint32_t b : {kE4m3OverflowTieBits, 0x43F00000u, 0x7F800000u})
    for (int d = -2; d <= 2; ++d) out.push_back(uint32_t(int64_t(b) + d));
  const size_t n = out.size();
  for (size_t i = 0; i < n; ++i) out.push_back(out[i] | 0x80000000u);
  return out;
}

TEST(Reference_F32ToE4m3_both, EveryBoundaryAndNeighbourVsModel) {
  for (bool sat : {true, false}) {
    const test::BoundaryModel model(test::e4m3_format(sat));
    test::CodeLog log(std::string("f32_to_e4m3 ") + (sat ? "saturate" : "nan"));
    const auto cases = boundary_neighbourhoods();
    for (uint32_t u : cases) {
      const uint8_t got = f32_to_e4m3(f32_from_bits(u), sat ? kSat : kNanOv);
      if (got != model.expect(u)) log.record(u, got, model.expect(u));
    }
    EXPECT_EQ(log.count(), 0u) << log.report(cases.size());
  }
}

RC_GTEST_PROP(Reference_F32ToE4m3_both, NearestEvenVsModel, ()) {
  const uint32_t u = *test::gen_f32_bits();
  static const test::BoundaryModel sat(test::e4m3_format(true)), nan(test::e4m3_format(false));
  RC_ASSERT(f32_to_e4m3(f32_from_bits(u), kSat) == sat.expect(u));
  RC_ASSERT(f32_to_e4m3(f32_from_bits(u), kNanOv) == nan.expect(u));
}

TEST(Reference_F32ToE4m3_both, ModelAgreesWithTheMeasuredDevicePoints) {
  // The model's own constants, checked on their own: the H200 measurements of torch's cast and the definition's ties.
  const test::BoundaryModel nan(test::e4m3_format(false)), sat(test::e4m3_format(true));
  EXPECT_EQ(nan.expect(0x43E80000u), 0x7E);  // 464
  EXPECT_EQ(nan.expect(0x43E80001u), 0x7F);  // 464.00003
  EXPECT_EQ(nan.expect(0x43F00000u), 0x7F);  // 480
  EXPECT_EQ(nan.expect(0x7F800000u), 0x7F);  // +Inf
  EXPECT_EQ(nan.expect(0xFF800000u), 0xFF);  // -Inf
  EXPECT_EQ(sat.expect(0xFF800000u), 0xFE);
  EXPECT_EQ(sat.expect(0xFFC00000u), 0x7F);
  EXPECT_EQ(sat.expect(0x3A800000u), 0x00);  // 2^-10 ties to 0
}

// Negative controls: wrong variants of the cast fail the same model checks.
uint8_t truncating_e4m3(float f) {  // rounds toward zero instead of to nearest
  const uint32_t a = f32_bits(f) & 0x7FFFFFFFu;
  const uint8_t s = uint8_t((f32_bits(f) >> 24) & 0x80u);
  if (a > 0x7F800000u) return uint8_t(s | 0x7F);
  if (a > kE4m3OverflowTieBits) return uint8_t(s | 0x7F);
  if (a >= kE4m3MinNormalBits) return uint8_t(s | ((a - (120u << 23)) >> 20));
  return uint8_t(s | uint8_t(std::ldexp(double(f32_from_bits(a)), 9)));
}

TEST(Reference_F32ToE4m3_both, NegativeControlsFailTheModel) {
  const test::BoundaryModel nan(test::e4m3_format(false)), sat(test::e4m3_format(true));
  const auto cases = boundary_neighbourhoods();
  uint64_t trunc_bad = 0, swapped_bad = 0, swapped_back = 0;
  for (uint32_t u : cases) {
    const float f = f32_from_bits(u);
    trunc_bad += truncating_e4m3(f) != nan.expect(u);
    swapped_bad += f32_to_e4m3(f, kSat) != nan.expect(u);    // saturate judged as the NaN convention
    swapped_back += f32_to_e4m3(f, kNanOv) != sat.expect(u);  // and the reverse
  }
  EXPECT_GT(trunc_bad, 100u) << "truncation must miss many of the ties' upper neighbours";
  EXPECT_GT(swapped_bad, 0u);
  EXPECT_GT(swapped_back, 0u);
  // And the sweep driver reports what it finds: a truncating cast over the magnitudes [1, 2) fails.
  test::CodeLog log("truncating e4m3");
  test::sweep_against_model(nan, truncating_e4m3, log, 0x3F800000u, 0x40000000u);
  EXPECT_GT(log.count(), 0u);
  EXPECT_NE(log.report(1).find("truncating e4m3 x=0x"), std::string::npos) << log.report(1);
}

}  // namespace
}  // namespace fuseproof::ref
