// half_to_f32_test.cpp: tests reference/bf16_to_f32.h and reference/fp16_to_f32.h over all 65,536 patterns each.
#include <cmath>

#include <gtest/gtest.h>
#include <immintrin.h>

#include "common/testfloat_record.h"
#include "property_tests/support/mismatch_log.h"
#include "reference/half_codec.h"

namespace fuseproof::ref {
namespace {

#if defined(__x86_64__)
__attribute__((target("f16c"))) float hw_fp16_to_f32(uint16_t h) { return _cvtsh_ss(h); }

TEST(Reference_Fp16ToF32_fp16, AllPatternsVsX86F16c) {
  if (!__builtin_cpu_supports("f16c")) GTEST_SKIP() << "this CPU has no F16C: no hardware oracle to compare with";
  test::MismatchLog log("fp16_to_f32", Dtype::kFp16);
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint32_t mine = f32_bits(fp16_to_f32(uint16_t(h)));
    const uint32_t hw = f32_bits(hw_fp16_to_f32(uint16_t(h)));
    // The hardware quiets signalling NaNs; the reference keeps the payload as is (c10's fp16_ieee_to_fp32_bits).
    const bool nan = is_nan_bits(Dtype::kFp16, uint16_t(h));
    if (nan ? (mine | 0x00400000u) != hw : mine != hw)
      log.record_line(testfloat_record_to_f32("fp16_to_f32", Dtype::kFp16, uint16_t(h), mine, hw));
  }
  FUSEPROOF_EXPECT_CLEAN(log, 65536);
}
#endif

TEST(Reference_Fp16ToF32_fp16, FailureRecordShowsAll32Bits) {
  // Negative control of the record above: results that differ only in their lower 16 bits must read as different.
  EXPECT_EQ(testfloat_record_to_f32("fp16_to_f32", Dtype::kFp16, 0x7E01, 0x7FC02000u, 0x7FC03000u),
            "fp16_to_f32 fp16 x=0x7E01 => 0x7FC02000 expected 0x7FC03000 (NaN pattern)");
  EXPECT_EQ(testfloat_record_to_f32("fp16_to_f32", Dtype::kFp16, 0x0001, 0x33800001u, 0x33800000u),
            "fp16_to_f32 fp16 x=0x0001 => 0x33800001 expected 0x33800000 (1 ulp)");
}

TEST(Reference_HalfToF32_both, RoundTripEveryPattern) {
  for (Dtype d : kAllDtypes) {
    test::MismatchLog log("half_to_f32 round trip", d);
    for (uint32_t h = 0; h < 65536; ++h) {
      if (is_nan_bits(d, uint16_t(h))) continue;
      log.check("", uint16_t(h), 0, f32_to_half(d, half_to_f32(d, uint16_t(h)), NanPolicy::kCudaCvtRn), uint16_t(h), false);
    }
    FUSEPROOF_EXPECT_CLEAN(log, 65536);
  }
}

TEST(Reference_HalfToF32_both, SpecialValues) {
  EXPECT_EQ(f32_bits(bf16_to_f32(0x8000)), 0x80000000u);
  EXPECT_EQ(f32_bits(fp16_to_f32(0x8000)), 0x80000000u);
  EXPECT_EQ(fp16_to_f32(0x0001), 0x1p-24f);
  EXPECT_EQ(fp16_to_f32(0x03FF), 0x1p-14f - 0x1p-24f);
  EXPECT_EQ(fp16_to_f32(0x0400), 0x1p-14f);
  EXPECT_EQ(fp16_to_f32(0x7BFF), 65504.0f);
  EXPECT_EQ(fp16_to_f32(0x7C00), INFINITY);
  EXPECT_EQ(fp16_to_f32(0xFC00), -INFINITY);
  EXPECT_EQ(f32_bits(fp16_to_f32(0x7E01)), 0x7FC02000u);  // payload shifted into bits 22..13
  EXPECT_EQ(bf16_to_f32(0x0001), f32_from_bits(0x00010000));
  EXPECT_EQ(f32_bits(bf16_to_f32(0xFF81)), 0xFF810000u);
}

}  // namespace
}  // namespace fuseproof::ref
