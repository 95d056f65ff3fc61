// gelu_tanh_eager_test.cpp: tests reference/gelu_tanh_eager.h and the tanh models against golden/sm_90.
#include <cmath>
#include <cstdio>
#include <vector>

#include <gtest/gtest.h>

#include "common/golden_library.h"
#include "property_tests/support/golden_paths.h"
#include "property_tests/support/mismatch_log.h"
#include "reference/activation_table.h"
#include "reference/gelu_tanh_eager.h"
#include "reference/tanh_models.h"
#include "reference/half_codec.h"

namespace fuseproof::ref {
namespace {

MathConfig cuda_cfg() { return MathConfig{MathModel::kCuda, Contraction::kFma, NanPolicy::kCudaCvtRn, &test::arch_mufu()}; }

std::vector<uint16_t> golden_table(Dtype d) {
  // Verified against provenance.json first: a table whose SHA-256 differs is refused.
  return test::golden().u16_table(golden_table_file(Activation::kGeluTanh, d, false));
}

/// Compares two tables entry by entry; returns the log.
test::MismatchLog compare_tables(const std::string& op, Dtype d, const std::vector<uint16_t>& got,
                                 const std::vector<uint16_t>& want) {
  test::MismatchLog log(op, d);
  for (size_t i = 0; i < kPatterns; ++i) log.check("", uint16_t(i), 0, got[i], want[i], false);
  return log;
}

TEST(Reference_GeluTanhEager_constants, BetaAndKappa) {
  // kBeta = float(M_SQRT2 * M_2_SQRTPI * 0.5) = 0.7978845608... ; kKappa = 0.044715f.
  EXPECT_EQ(f32_bits(float(1.41421356237309504880 * 1.12837916709551257390 * 0.5)), 0x3F4C422Au);
  EXPECT_EQ(f32_bits(0.044715f), 0x3D372713u);
}

TEST(Reference_GeluTanhEager_both, SpecialValuesAsEager) {
  const MathConfig cfg = cuda_cfg();
  EXPECT_TRUE(std::isnan(gelu_tanh_eager_f32(-INFINITY, cfg))) << "eager gelu(-inf) is (-inf) * 0 = NaN";
  EXPECT_EQ(gelu_tanh_eager_f32(INFINITY, cfg), INFINITY);
  EXPECT_EQ(f32_bits(gelu_tanh_eager_f32(0.0f, cfg)), 0u);
  EXPECT_EQ(f32_bits(gelu_tanh_eager_f32(-0.0f, cfg)), 0x80000000u);
  EXPECT_TRUE(std::isnan(gelu_tanh_eager_f32(NAN, cfg)));
  EXPECT_EQ(gelu_tanh_eager(Dtype::kBf16, 0xFF80, cfg), 0x7FFF);
  EXPECT_EQ(gelu_tanh_eager(Dtype::kFp16, 0xFC00, cfg), 0x7FFF);
}

TEST(Reference_GeluTanhEager_both, ContractionSwitchChangesTheBinary32Value) {
  // The FMA and the separate multiply-add must differ somewhere, or the switch models nothing.
  MathConfig fma = cuda_cfg(), sep = cuda_cfg();
  sep.contraction = Contraction::kSeparate;
  int differ = 0;
  for (uint32_t h = 0; h < 65536; ++h) {
    const float x = bf16_to_f32(uint16_t(h));
    if (std::isnan(x)) continue;
    differ += f32_bits(gelu_tanh_eager_f32(x, fma)) != f32_bits(gelu_tanh_eager_f32(x, sep));
  }
  std::printf("binary32 GELU values where FMA and separate multiply-add differ (bf16 inputs): %d\n", differ);
  EXPECT_GT(differ, 0);
}

TEST(Reference_GeluTanhEager_both, CudaModelReproducesGoldenSm90AllInputs) {
  for (Dtype d : kAllDtypes) {
    auto log = compare_tables("gelu_tanh", d, activation_table(Activation::kGeluTanh, d, cuda_cfg()), golden_table(d));
    FUSEPROOF_EXPECT_CLEAN(log, kPatterns);
  }
}

/// The inputs where a tanh model's table differs from golden/sm_90, under both contractions (the 16-bit outputs
/// do not depend on contraction: docs/REFERENCE.md), printed with their records.
std::vector<uint16_t> inputs_differing_from_golden(Dtype d, MathModel m) {
  std::vector<uint16_t> diff_fma;
  for (Contraction c : {Contraction::kFma, Contraction::kSeparate}) {
    MathConfig cfg = cuda_cfg();
    cfg.math = m;
    cfg.contraction = c;
    const auto got = activation_table(Activation::kGeluTanh, d, cfg), want = golden_table(d);
    auto log = compare_tables(std::string("gelu_tanh/") + math_model_name(m), d, got, want);
    std::printf("tanh=%s contraction=%s %s:\n%s\n", math_model_name(m), c == Contraction::kFma ? "fma" : "separate",
                dtype_name(d), log.report(kPatterns).c_str());
    std::vector<uint16_t> diff;
    for (size_t i = 0; i < kPatterns; ++i)
      if (got[i] != want[i]) diff.push_back(uint16_t(i));
    if (c == Contraction::kFma)
      diff_fma = diff;
    else
      EXPECT_EQ(diff, diff_fma) << "the contraction changed a 16-bit output of tanh=" << math_model_name(m);
  }
  return diff_fma;
}

TEST(Reference_GeluTanhEager_both, ExactMathModelDiffersFromGoldenSm90WhereDocumented) {
  // docs/REFERENCE.md: tanh = exact differs from the device at one fp16 input (0xC007) and no bf16 input.
  EXPECT_EQ(inputs_differing_from_golden(Dtype::kBf16, MathModel::kExact), std::vector<uint16_t>{});
  EXPECT_EQ(inputs_differing_from_golden(Dtype::kFp16, MathModel::kExact), std::vector<uint16_t>{0xC007});
}

TEST(Reference_GeluTanhEager_both, LibmMathModelDiffersFromGoldenSm90WhereDocumented) {
  // docs/REFERENCE.md: glibc 2.36's tanhf differs at two fp16 inputs (0xB3FE, 0xC007) and no bf16 input. Another
  // libm may round differently, so the counts are pinned for the glibc they were measured on.
#if defined(__GLIBC__) && __GLIBC__ == 2 && __GLIBC_MINOR__ == 36
  EXPECT_EQ(inputs_differing_from_golden(Dtype::kBf16, MathModel::kLibm), std::vector<uint16_t>{});
  EXPECT_EQ(inputs_differing_from_golden(Dtype::kFp16, MathModel::kLibm), (std::vector<uint16_t>{0xB3FE, 0xC007}));
#else
  GTEST_SKIP() << "the libm counts in docs/REFERENCE.md were measured on glibc 2.36; this C library is another";
#endif
}

TEST(Reference_GeluTanhEager_both, NegativeControlCorruptedGoldenIsReported) {
  for (Dtype d : kAllDtypes) {
    auto want = golden_table(d);
    want[0x3F80] ^= 1;  // one flipped bit in one entry
    auto log = compare_tables("gelu_tanh", d, activation_table(Activation::kGeluTanh, d, cuda_cfg()), want);
    EXPECT_EQ(log.count(), 1u);
    ASSERT_EQ(log.lines().size(), 1u);
    EXPECT_NE(log.lines()[0].find("x=0x3F80"), std::string::npos) << log.lines()[0];
    EXPECT_NE(log.lines()[0].find("(1 ulp)"), std::string::npos) << log.lines()[0];
  }
}

TEST(Reference_MufuModel_sm90, RefusesInputsOutsideTheCapturedRange) {
  const MufuModel& m = test::arch_mufu();
  EXPECT_THROW(m.ex2_approx_ftz(0.5f), std::domain_error);
  EXPECT_THROW(m.ex2_approx_ftz(32.0f), std::domain_error);
  EXPECT_THROW(m.rcp_approx_ftz(0.75f), std::domain_error);
  EXPECT_THROW(m.rcp_approx_ftz(NAN), std::domain_error);
  EXPECT_EQ(m.rcp_approx_ftz(1.0f), 1.0f);
  EXPECT_EQ(m.ex2_approx_ftz(1.0f), 2.0f);
  EXPECT_THROW(MufuModel::load("/nonexistent"), std::runtime_error);
}

TEST(Reference_MathModels_both, CudaModelSaturatesAndKeepsSign) {
  const MufuModel& m = test::arch_mufu();
  EXPECT_EQ(tanhf_cuda_model(9.5f, m), 1.0f);
  EXPECT_EQ(tanhf_cuda_model(-INFINITY, m), -1.0f);
  EXPECT_EQ(f32_bits(tanhf_cuda_model(-0.0f, m)), 0x80000000u);
  EXPECT_TRUE(std::isnan(tanhf_cuda_model(NAN, m)));
}

}  // namespace
}  // namespace fuseproof::ref
