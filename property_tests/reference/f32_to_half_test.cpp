// f32_to_half_test.cpp: tests reference/f32_to_bf16.h and reference/f32_to_fp16.h: ties, boundaries, NaN policies.
#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>
#include <immintrin.h>
#include <rapidcheck/gtest.h>

#include "common/testfloat_record.h"
#include "property_tests/support/bit_patterns.h"
#include "property_tests/support/mismatch_log.h"
#include "reference/half_codec.h"

namespace fuseproof::ref {
namespace {

/// Independent oracle: r is the correctly rounded (nearest, ties to even) pattern of f, judged in double.
bool is_nearest_even(Dtype d, float f, uint16_t r) {
  const double v = double(f);
  const double max_finite = d == Dtype::kBf16 ? double(bf16_to_f32(0x7F7F)) : 65504.0;
  const double half_ulp_top = d == Dtype::kBf16 ? std::ldexp(1.0, 127 - 8) : 16.0;
  const uint16_t mag = r & 0x7FFF;
  const uint16_t inf = d == Dtype::kBf16 ? 0x7F80 : 0x7C00;
  if (std::signbit(v) != bool(r & 0x8000)) return false;
  const double a = std::fabs(v);
  if (mag == inf) return a >= max_finite + half_ulp_top;  // ties at the top go to Inf (even)
  if (mag > inf) return false;
  const double got = std::fabs(double(half_to_f32(d, r)));
  const double err = std::fabs(a - got);
  for (int delta : {-1, 1}) {
    const int n = int(mag) + delta;
    if (n < 0 || n >= inf) continue;
    const double other = double(half_to_f32(d, uint16_t(n)));
    const double e2 = std::fabs(a - other);
    if (e2 < err) return false;
    if (e2 == err && (mag & 1)) return false;  // a tie must land on the even pattern
  }
  if (mag == inf - 1 && a >= max_finite + half_ulp_top) return false;
  return true;
}

/// The bf16 pattern is_nearest_even accepts for f: its truncation toward zero (the upper half of f's bits) or the next
/// pattern up in magnitude. Built from the oracle alone, so a failure record's "expected" is not f32_to_bf16's.
uint16_t nearest_even_bf16(float f) {
  const uint16_t down = uint16_t(f32_bits(f) >> 16);
  return is_nearest_even(Dtype::kBf16, f, down) ? down : uint16_t(down + 1);
}

rc::Gen<uint32_t> gen_f32_bits_nonnan() {
  return rc::gen::suchThat(test::gen_f32_bits(), [](uint32_t u) { return (u & 0x7FFFFFFFu) <= 0x7F800000u; });
}

TEST(Reference_F32ToHalf_constants, EachConstantOnItsOwn) {
  // PyTorch once shipped a "signalling NaN" that was infinity: every constant is checked for what it claims.
  EXPECT_TRUE(is_nan_bits(Dtype::kBf16, kCudaCanonicalNan));
  EXPECT_TRUE(is_nan_bits(Dtype::kFp16, kCudaCanonicalNan));
  EXPECT_TRUE(is_nan_bits(Dtype::kBf16, kC10ScalarBf16Nan));
  EXPECT_TRUE(kC10ScalarBf16Nan & 0x0040) << "0x7FC0 must be a quiet bf16 NaN";
  EXPECT_TRUE(is_nan_bits(Dtype::kBf16, kC10VectorBf16Nan));
  EXPECT_TRUE(is_nan_bits(Dtype::kFp16, kFp16QuietNan));
  EXPECT_TRUE(kFp16QuietNan & 0x0200) << "0x7E00 must be a quiet fp16 NaN";
  EXPECT_FALSE(is_nan_bits(Dtype::kFp16, 0x7C00)) << "0x7C00 is fp16 Inf, not NaN";
  EXPECT_FALSE(is_nan_bits(Dtype::kBf16, 0x7F80)) << "0x7F80 is bf16 Inf, not NaN";
  EXPECT_EQ(f32_from_bits(kF32ToFp16OverflowBits), 65520.0f);
}

struct Case {
  float in;
  uint16_t bf16, fp16;
};

TEST(Reference_F32ToHalf_both, TiesBoundariesAndOverflow) {
  const Case cases[] = {
      {0.0f, 0x0000, 0x0000},
      {-0.0f, 0x8000, 0x8000},
      {1.0f, 0x3F80, 0x3C00},
      // bf16 ties at 1: 1 + 2^-8 is halfway between 0x3F80 and 0x3F81 -> even 0x3F80; 1 + 3*2^-8 -> even 0x3F82.
      {1.0f + 0x1p-8f, 0x3F80, 0x3C04},
      {1.0f + 3 * 0x1p-8f, 0x3F82, 0x3C0C},
      {1.0f + 0x1p-8f + 0x1p-23f, 0x3F81, 0x3C04},
      // fp16 ties at 1: 1 + 2^-11 -> even 0x3C00; 1 + 3*2^-11 -> even 0x3C02; just above the tie rounds up.
      {1.0f + 0x1p-11f, 0x3F80, 0x3C00},
      {1.0f + 3 * 0x1p-11f, 0x3F80, 0x3C02},
      {1.0f + 0x1p-11f + 0x1p-23f, 0x3F80, 0x3C01},
      // fp16 largest finite, the overflow tie and beyond.
      {65504.0f, 0x4780, 0x7BFF},
      {65519.996f, 0x4780, 0x7BFF},
      {65520.0f, 0x4780, 0x7C00},
      {-65520.0f, 0xC780, 0xFC00},
      // bf16 largest finite and overflow.
      {f32_from_bits(0x7F7F7FFF), 0x7F7F, 0x7C00},
      {f32_from_bits(0x7F7F8000), 0x7F80, 0x7C00},
      {INFINITY, 0x7F80, 0x7C00},
      {-INFINITY, 0xFF80, 0xFC00},
      // fp16 subnormal boundaries: 2^-24 (smallest), half of it (tie to 0), just above half, 2^-14 (smallest normal).
      {0x1p-24f, 0x3380, 0x0001},
      {0x1p-25f, 0x3300, 0x0000},
      {0x1p-25f + 0x1p-40f, 0x3300, 0x0001},
      {3 * 0x1p-25f, 0x33C0, 0x0002},
      {0x1p-14f, 0x3880, 0x0400},
      {0x1p-14f - 0x1p-25f, 0x3880, 0x0400},
      {0x1p-14f - 0x1p-24f, 0x3880, 0x03FF},
      // binary32 subnormals: exact in bf16's range (same exponent), zero in fp16.
      {f32_from_bits(0x00010000), 0x0001, 0x0000},
      {f32_from_bits(0x00018000), 0x0002, 0x0000},
      {f32_from_bits(0x80008000), 0x8000, 0x8000},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(f32_to_bf16(c.in, NanPolicy::kCudaCvtRn), c.bf16) << std::hexfloat << c.in;
    EXPECT_EQ(f32_to_fp16(c.in, NanPolicy::kCudaCvtRn), c.fp16) << std::hexfloat << c.in;
  }
}

TEST(Reference_F32ToHalf_both, EveryNanClassUnderEveryPolicy) {
  struct NanCase {
    uint32_t in;
    uint16_t fp16_vec;  // VCVTPS2PH: sign | 0x7E00 | mantissa >> 13
  };
  const NanCase nans[] = {{0x7FC00000, 0x7E00}, {0xFFC00000, 0xFE00}, {0x7F800001, 0x7E00}, {0xFF800001, 0xFE00},
                          {0x7FFFFFFF, 0x7FFF}, {0xFFFFFFFF, 0xFFFF}, {0x7FA5A5A5, 0x7F2D}, {0xFFD0F00D, 0xFE87}};
  for (const NanCase& n : nans) {
    const float f = f32_from_bits(n.in);
    const uint16_t sign = uint16_t((n.in >> 16) & 0x8000);
    EXPECT_EQ(f32_to_bf16(f, NanPolicy::kCudaCvtRn), 0x7FFF);
    EXPECT_EQ(f32_to_fp16(f, NanPolicy::kCudaCvtRn), 0x7FFF);
    EXPECT_EQ(f32_to_bf16(f, NanPolicy::kC10Scalar), 0x7FC0);
    EXPECT_EQ(f32_to_fp16(f, NanPolicy::kC10Scalar), sign | 0x7E00);
    EXPECT_EQ(f32_to_bf16(f, NanPolicy::kC10Vectorized), 0xFFFF);
    EXPECT_EQ(f32_to_fp16(f, NanPolicy::kC10Vectorized), n.fp16_vec) << std::hex << n.in;
  }
}

RC_GTEST_PROP(Reference_F32ToBf16_bf16, NearestEven, ()) {
  const uint32_t u = *gen_f32_bits_nonnan();
  const float f = f32_from_bits(u);
  const uint16_t r = f32_to_bf16(f, NanPolicy::kCudaCvtRn);
  RC_ASSERT(is_nearest_even(Dtype::kBf16, f, r));
}

RC_GTEST_PROP(Reference_F32ToFp16_fp16, NearestEven, ()) {
  const uint32_t u = *gen_f32_bits_nonnan();
  const float f = f32_from_bits(u);
  const uint16_t r = f32_to_fp16(f, NanPolicy::kCudaCvtRn);
  RC_ASSERT(is_nearest_even(Dtype::kFp16, f, r));
}

TEST(Reference_F32ToBf16_bf16, EveryTieAndNeighbourVsOracle) {
  // All 65,536 upper halves with the low halves that decide rounding: 0, 1, 0x7FFF, 0x8000 (tie), 0x8001, 0xFFFF.
  test::MismatchLog log("f32_to_bf16", Dtype::kBf16);
  uint64_t cases = 0;
  for (uint32_t hi = 0; hi < 65536; ++hi) {
    for (uint32_t lo : {0x0000u, 0x0001u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu}) {
      const uint32_t u = (hi << 16) | lo;
      const float f = f32_from_bits(u);
      if (std::isnan(f)) continue;
      ++cases;
      const uint16_t r = f32_to_bf16(f, NanPolicy::kCudaCvtRn);
      if (!is_nearest_even(Dtype::kBf16, f, r))
        log.record_line(testfloat_record_from_f32("f32_to_bf16", Dtype::kBf16, u, r, nearest_even_bf16(f)));
    }
  }
  FUSEPROOF_EXPECT_CLEAN(log, cases);
}

TEST(Reference_F32ToBf16_bf16, FailureRecordNamesInputAndOracleValue) {
  // Negative control of the record above: a wrong rounding of the tie 0x3F808000 (even: 0x3F80) is logged with the
  // whole binary32 input in hex and the oracle's pattern as "expected".
  const float tie = f32_from_bits(0x3F808000u);
  EXPECT_FALSE(is_nearest_even(Dtype::kBf16, tie, 0x3F81));
  EXPECT_EQ(nearest_even_bf16(tie), 0x3F80);
  EXPECT_EQ(nearest_even_bf16(f32_from_bits(0x3F818000u)), 0x3F82);
  EXPECT_EQ(nearest_even_bf16(f32_from_bits(0x7F7FFFFFu)), 0x7F80);
  EXPECT_EQ(nearest_even_bf16(f32_from_bits(0xBF808001u)), 0xBF81);
  EXPECT_EQ(testfloat_record_from_f32("f32_to_bf16", Dtype::kBf16, 0x3F808000u, 0x3F81, nearest_even_bf16(tie)),
            "f32_to_bf16 bf16 x=0x3F808000 => 0x3F81 expected 0x3F80 (1 ulp)");
}

#if defined(__x86_64__)
__attribute__((target("f16c"))) uint16_t hw_f32_to_fp16(float f) {
  return uint16_t(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT));
}

TEST(Reference_F32ToFp16_fp16, AllBinary32PatternsVsX86F16c) {
  // VCVTPS2PH is an independent, hardware round-to-nearest-even; its NaN rule is the c10-vectorized policy.
  if (!__builtin_cpu_supports("f16c")) GTEST_SKIP() << "this CPU has no F16C: no hardware oracle to compare with";
  test::MismatchLog log("f32_to_fp16", Dtype::kFp16);
  for (uint64_t u = 0; u < (uint64_t(1) << 32); ++u) {
    const float f = f32_from_bits(uint32_t(u));
    const uint16_t mine = f32_to_fp16(f, NanPolicy::kC10Vectorized);
    const uint16_t hw = hw_f32_to_fp16(f);
    if (mine != hw) {
      log.record_line(testfloat_record_from_f32("f32_to_fp16", Dtype::kFp16, uint32_t(u), mine, hw));
      if (log.count() > 100) break;
    }
  }
  FUSEPROOF_EXPECT_CLEAN(log, uint64_t(1) << 32);
}
#endif

}  // namespace
}  // namespace fuseproof::ref
