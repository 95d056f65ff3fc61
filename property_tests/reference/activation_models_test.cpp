// activation_models_test.cpp: tests reference/expf_models.h, erff_models.h, silu_eager.h, gelu_erf_eager.h against
// the device: every activation's cuda model equals the captured tables of all 65,536 inputs per dtype, in binary32
// and after rounding, and computes the ex2 arguments the device computed.
#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>

#include "common/golden_library.h"
#include "property_tests/support/golden_paths.h"
#include "property_tests/support/mismatch_log.h"
#include "reference/activation_table.h"
#include "reference/erff_models.h"
#include "reference/expf_models.h"
#include "reference/gelu_erf_eager.h"
#include "reference/half_codec.h"

namespace fuseproof::ref {
namespace {

MathConfig config(MathModel m) {
  MathConfig c;
  c.math = m;
  if (m == MathModel::kCuda) c.mufu = &test::arch_mufu();
  return c;
}

bool f32_nan(uint32_t u) { return (u & 0x7FFFFFFFu) > 0x7F800000u; }

/// Inputs where the model's table differs from the device's (binary32: NaN equals NaN, whatever the payload: cvt.rn
/// writes 0x7FFF for every NaN after the last rounding).
std::vector<uint16_t> differing(Activation a, Dtype d, MathModel m, bool f32) {
  std::vector<uint16_t> v;
  const std::string file = golden_table_file(a, d, f32);
  if (f32) {
    const auto want = test::golden().u32_table(file);
    const auto got = activation_table_f32(a, d, config(m));
    for (size_t i = 0; i < 65536; ++i)
      if (got[i] != want[i] && !(f32_nan(got[i]) && f32_nan(want[i]))) v.push_back(uint16_t(i));
  } else {
    const auto want = test::golden().u16_table(file);
    const auto got = activation_table(a, d, config(m));
    for (size_t i = 0; i < 65536; ++i)
      if (got[i] != want[i]) v.push_back(uint16_t(i));
  }
  return v;
}

class Reference_ActivationModels : public ::testing::TestWithParam<std::tuple<Activation, Dtype>> {};

TEST_P(Reference_ActivationModels, CudaModelEqualsTheDeviceTables) {
  const auto [a, d] = GetParam();
  for (bool f32 : {false, true}) {
    const auto diff = differing(a, d, MathModel::kCuda, f32);
    EXPECT_TRUE(diff.empty()) << activation_name(a) << " " << dtype_name(d) << (f32 ? " binary32" : "") << ": "
                              << diff.size() << " inputs differ from " << test::golden().label() << ", first x=0x"
                              << std::hex << (diff.empty() ? 0 : diff[0]);
    if (diff.empty())
      std::printf("In 65536 cases, no errors found in %s %s%s (cuda model vs %s).\n", activation_name(a), dtype_name(d),
                  f32 ? " binary32" : "", test::golden().label().c_str());
  }
}

TEST_P(Reference_ActivationModels, CudaModelComputesTheDevicesEx2Arguments) {
  const auto [a, d] = GetParam();
  if (!activation_needs_ex2_points(a)) GTEST_SKIP() << activation_name(a) << " calls ex2 in [1, 32) only";
  const auto& pts = test::arch_mufu().ex2_points(std::string(activation_name(a)) + "_" + dtype_name(d));
  ASSERT_EQ(pts.size(), 65536u) << "no captured ex2 points for " << activation_name(a) << " " << dtype_name(d);
  uint32_t differ = 0;
  for (uint32_t p = 0; p < 65536; ++p) {
    const float x = half_to_f32(d, uint16_t(p));
    if (std::isnan(x)) continue;  // NaN arguments carry payloads of no meaning
    const uint32_t got = f32_bits(activation_ex2_argument(a, x));
    EXPECT_EQ(got, pts[p].first) << activation_name(a) << " " << dtype_name(d) << " x=0x" << std::hex << p;
    differ += got != pts[p].first;
  }
  if (!differ) std::printf("In 65536 cases, the reference computes the device's ex2 arguments (%s %s).\n",
                           activation_name(a), dtype_name(d));
}

INSTANTIATE_TEST_SUITE_P(EveryActivationDtype, Reference_ActivationModels,
                         ::testing::Combine(::testing::ValuesIn(kAllActivations), ::testing::ValuesIn(kAllDtypes)),
                         [](const auto& info) {
                           return std::string(activation_name(std::get<0>(info.param))) + "_" +
                                  dtype_name(std::get<1>(info.param));
                         });

// Negative control: the host's libm is not the device's everywhere (the comparison above can fail), and the exact
// model neither; their counts are printed (docs/REFERENCE.md), never asserted beyond "not all equal".
TEST(Reference_ActivationModels_both, OtherModelsDifferSomewhere) {
  uint64_t total = 0;
  for (Activation a : kAllActivations)
    for (Dtype d : kAllDtypes)
      for (MathModel m : {MathModel::kLibm, MathModel::kExact}) {
        const auto n = differing(a, d, m, true).size();
        std::printf("%s %s math=%s: %zu binary32 values differ from the device\n", activation_name(a), dtype_name(d),
                    math_model_name(m), n);
        total += n;
      }
  EXPECT_GT(total, 0u);
}

TEST(Reference_ExpfModel_both, ReductionAtKnownPoints) {
  // expf(0): k = 0 and r = +0, whose ex2 is 1 exactly.
  EXPECT_EQ(f32_bits(expf_cuda_ex2_argument(0.0f)), 0u);
  EXPECT_EQ(expf_cuda_model(0.0f, test::arch_mufu()), 1.0f);
  // -inf saturates to k = -126 and r = -inf: the product is +0; +inf gives +inf.
  EXPECT_EQ(f32_bits(expf_cuda_model(-INFINITY, test::arch_mufu())), 0u);
  EXPECT_EQ(expf_cuda_model(INFINITY, test::arch_mufu()), INFINITY);
  // 1: k = 1, r = log2(e) - 1 in [0, 1).
  const float r = expf_cuda_ex2_argument(1.0f);
  EXPECT_GT(r, 0.44f);
  EXPECT_LT(r, 0.45f);
}

TEST(Reference_ErffModel_both, BranchesAndSigns) {
  const MufuModel& m = test::arch_mufu();
  EXPECT_FALSE(erff_cuda_uses_ex2(1.0f));
  EXPECT_TRUE(erff_cuda_uses_ex2(1.01f));
  EXPECT_EQ(erff_cuda_model(INFINITY, m), 1.0f);
  EXPECT_EQ(erff_cuda_model(-INFINITY, m), -1.0f);
  EXPECT_EQ(f32_bits(erff_cuda_model(-0.0f, m)), 0x80000000u);
  EXPECT_TRUE(std::isnan(erff_cuda_model(NAN, m)));
  // Odd: at arguments of GELU's bf16 inputs (the ex2 points hold those, below 1 as well as above).
  for (uint16_t h : {uint16_t(0x3E80), uint16_t(0x3FC0), uint16_t(0x4040)}) {
    const float x = gelu_erf_argument(bf16_to_f32(h));
    EXPECT_EQ(f32_bits(erff_cuda_model(-x, m)), f32_bits(-erff_cuda_model(x, m))) << "odd at " << x;
  }
}

}  // namespace
}  // namespace fuseproof::ref
