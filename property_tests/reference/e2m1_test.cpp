// e2m1_test.cpp: tests reference/e2m1.h: every constant, the ties, saturation, signed zeros, NaN, the vLLM table's
// one difference, the decode; negative controls.
#include <cmath>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "property_tests/reference/narrow_format_oracle.h"
#include "property_tests/support/bit_patterns.h"
#include "reference/dtype.h"
#include "reference/e2m1.h"

namespace fuseproof::ref {
namespace {

TEST(Reference_F32ToE2m1_constants, EachConstantOnItsOwn) {
  EXPECT_EQ(e2m1_to_f32(kE2m1MaxFinite), 6.0f);
  EXPECT_EQ(f32_bits(e2m1_to_f32(kE2m1NegZero)), 0x80000000u) << "0x8 is -0";
  const float want[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.0f, -0.5f, -1, -1.5f, -2, -3, -4, -6};
  for (int c = 0; c < 16; ++c) {
    EXPECT_EQ(f32_bits(e2m1_to_f32(uint8_t(c))), f32_bits(want[c])) << c;
    EXPECT_EQ(f32_to_e2m1(want[c]), c) << c;  // every code survives the round trip
  }
}

TEST(Reference_E2m1ToF32_e2m1, EveryCodeFromTheDefinition) {
  for (int c = 0; c < 16; ++c) {
    const int s = (c >> 3) & 1, e = (c >> 1) & 3, m = c & 1;
    const double mag = e == 0 ? m * 0.5 : std::ldexp(1.0 + m / 2.0, e - 1);
    EXPECT_EQ(double(e2m1_to_f32(uint8_t(c))), s ? -mag : mag) << c;
    EXPECT_EQ(std::signbit(e2m1_to_f32(uint8_t(c))), bool(s)) << c;
  }
  EXPECT_EQ(e2m1_to_f32(0x17), 6.0f) << "only the low nibble is read";
}

TEST(Reference_F32ToE2m1_e2m1, TiesSaturationZerosAndNan) {
  struct Case {
    float in;
    uint8_t code;
  };
  const Case cases[] = {
      {0.25f, 0x0},  {0.75f, 0x2},   {1.25f, 0x2},  {1.75f, 0x4},  {2.5f, 0x4},  {3.5f, 0x6},  {5.0f, 0x6},
      {-0.25f, 0x8}, {-0.75f, 0xA},  {-1.25f, 0xA}, {-1.75f, 0xC}, {-2.5f, 0xC}, {-3.5f, 0xE}, {-5.0f, 0xE},
      {std::nextafter(0.25f, 1.0f), 0x1},  {std::nextafter(0.75f, 0.0f), 0x1}, {std::nextafter(5.0f, 9.0f), 0x7},
      {std::nextafter(1.25f, 2.0f), 0x3},  {std::nextafter(2.5f, 3.0f), 0x5},
      {6.0f, 0x7},   {6.5f, 0x7},    {7.0f, 0x7},   {8.0f, 0x7},   {1e30f, 0x7}, {INFINITY, 0x7},
      {-6.5f, 0xF},  {-INFINITY, 0xF},
      {0.0f, 0x0},   {-0.0f, 0x8},   {-0.1f, 0x8},  {f32_from_bits(0x80000001), 0x8},
  };
  for (const Case& c : cases) EXPECT_EQ(f32_to_e2m1(c.in), c.code) << std::hexfloat << c.in;
  for (uint32_t n : {0x7FC00000u, 0xFFC00000u, 0x7F800001u, 0xFFFFFFFFu})
    EXPECT_EQ(f32_to_e2m1(f32_from_bits(n)), kE2m1MaxFinite) << std::hex << n << ": NaN gives +6";
}

std::vector<uint32_t> e2m1_boundary_neighbourhoods() {
  std::vector<uint32_t> out;
  for (float b : {0.25f, 0.75f, 1.25f, 1.75f, 2.5f, 3.5f, 5.0f, 6.0f, 7.0f, 0.5f, 1.0f, INFINITY})
    for (int d = -2; d <= 2; ++d) {
      out.push_back(uint32_t(int64_t(f32_bits(b)) + d));
      out.push_back(uint32_t(int64_t(f32_bits(b)) + d) | 0x80000000u);
    }
  return out;
}

TEST(Reference_F32ToE2m1_e2m1, EveryBoundaryAndNeighbourVsModel) {
  const test::BoundaryModel model(test::e2m1_format());
  test::CodeLog log("f32_to_e2m1");
  const auto cases = e2m1_boundary_neighbourhoods();
  for (uint32_t u : cases) {
    const uint8_t got = f32_to_e2m1(f32_from_bits(u));
    if (got != model.expect(u)) log.record(u, got, model.expect(u));
  }
  EXPECT_EQ(log.count(), 0u) << log.report(cases.size());
}

RC_GTEST_PROP(Reference_F32ToE2m1_e2m1, NearestEvenVsModel, ()) {
  const uint32_t u = *test::gen_f32_bits();
  static const test::BoundaryModel model(test::e2m1_format());
  RC_ASSERT(f32_to_e2m1(f32_from_bits(u)) == model.expect(u));
}

/// The vLLM table's value as the cvt's decoded code, and whether they agree bit for bit.
bool table_agrees(uint32_t u) {
  const float f = f32_from_bits(u);
  return f32_bits(e2m1_vllm_table(f)) == f32_bits(e2m1_to_f32(f32_to_e2m1(f)));
}

TEST(Reference_E2m1VllmTable_e2m1, EqualsTheCvtExceptAtMinusZeroAndNan) {
  for (uint32_t u : e2m1_boundary_neighbourhoods()) {
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) continue;
    EXPECT_EQ(table_agrees(u), u != 0x80000000u) << std::hex << u;
  }
  EXPECT_EQ(f32_bits(e2m1_vllm_table(-0.0f)), 0x00000000u) << "torch.sign(-0.0) is +0: the table gives +0";
  EXPECT_EQ(f32_bits(e2m1_vllm_table(-0.1f)), 0x80000000u) << "0 * -1: the table gives -0";
  EXPECT_TRUE(std::isnan(e2m1_vllm_table(f32_from_bits(0xFFC00000u))));
  EXPECT_EQ(e2m1_vllm_table(-INFINITY), -6.0f);
}

// Negative controls: a cast rounding ties away from zero, and one that loses the sign of zero, fail the model.
uint8_t ties_away_e2m1(float f) {
  const float a = std::fabs(f);
  const uint8_t s = std::signbit(f) ? 0x8 : 0x0;
  static const float mags[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  uint8_t best = 0;
  for (uint8_t c = 1; c < 8; ++c)
    if (std::fabs(mags[c] - a) <= std::fabs(mags[best] - a)) best = c;  // a tie goes to the larger magnitude
  return uint8_t(s | best);
}

TEST(Reference_F32ToE2m1_e2m1, NegativeControlsFailTheModel) {
  const test::BoundaryModel model(test::e2m1_format());
  uint64_t away_bad = 0, unsigned_zero_bad = 0;
  for (uint32_t u : e2m1_boundary_neighbourhoods()) {
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) continue;
    away_bad += ties_away_e2m1(f32_from_bits(u)) != model.expect(u);
  }
  for (uint32_t u : {0x80000000u, 0xBE000000u /* -0.125 */}) {
    const uint8_t unsigned_zero = uint8_t(f32_to_e2m1(f32_from_bits(u)) & 0x7);  // -0 coded as +0
    unsigned_zero_bad += unsigned_zero != model.expect(u);
  }
  EXPECT_EQ(away_bad, 8u) << "the ties 0.25, 1.25, 2.5 and 5 go down to the even code, both signs";
  EXPECT_EQ(unsigned_zero_bad, 2u);
}

}  // namespace
}  // namespace fuseproof::ref
