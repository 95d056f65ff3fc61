// torch_cpu_gelu_test.cpp: eager libtorch CPU GELU(tanh) against the reference: its known differences, counted.
#include <cmath>
#include <cstdio>
#include <map>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "property_tests/support/mismatch_log.h"
#include "reference/activation_table.h"
#include "reference/gelu_tanh_eager.h"
#include "reference/half_codec.h"

namespace fuseproof::ref {
namespace {

torch::Tensor patterns(Dtype d, int64_t first, int64_t count) {
  return torch::arange(first, first + count, torch::kInt32).to(torch::kInt16).view(d == Dtype::kBf16 ? torch::kBFloat16 : torch::kHalf);
}

const uint16_t* bits(const torch::Tensor& t) { return reinterpret_cast<const uint16_t*>(t.data_ptr()); }

/// libtorch 1.13's CPU GELU on BFloat16 computes in BFloat16 arithmetic: every intermediate is rounded to bf16
/// (c10::BFloat16 operators widen, compute in float, narrow). This is that model, written here for the comparison.
uint16_t gelu_bf16_every_op_rounded(uint16_t h) {
  auto r = [](float f) { return bf16_to_f32(f32_to_bf16(f, NanPolicy::kC10Vectorized)); };
  const float kBeta = float(1.41421356237309504880 * 1.12837916709551257390 * 0.5);
  const float x = bf16_to_f32(h);
  const float x_cube = r(r(x * x) * x);
  const float inner = r(r(kBeta) * r(x + r(r(0.044715f) * x_cube)));
  const float t = r(std::tanh(inner));
  return f32_to_bf16(r(r(r(0.5f) * x) * r(1.0f + t)), NanPolicy::kC10Vectorized);
}

TEST(TorchCpu_GeluTanh_bf16, DifferencesFromLibmModelCountedAndExplained) {
  // The CPU GELU is not CUDA's: libtorch 1.13 rounds every intermediate to bf16, so it differs from the float-opmath
  // model at about 1.5% of inputs, most by 1 ulp, and by many ulps for x < -3 where 1 + tanh cancels. The
  // differences are counted and pinned for the libtorch measured here, and the bf16-every-op model must explain
  // every one of them (0 mismatches) — so nothing is hidden behind a bound.
  const auto y = torch::gelu(patterns(Dtype::kBf16, 0, 65536), "tanh").contiguous();
  MathConfig libm{MathModel::kLibm, Contraction::kFma, NanPolicy::kC10Vectorized, nullptr};
  test::MismatchLog log("gelu_tanh(torch cpu vs libm model)", Dtype::kBf16, 12);
  std::map<uint32_t, int> by_ulp;
  int below_minus3 = 0;
  for (uint32_t x = 0; x < 65536; ++x) {
    const uint16_t want = gelu_tanh_eager(Dtype::kBf16, uint16_t(x), libm);
    const uint16_t got = bits(y)[x];
    if (got == want) continue;
    log.record("", uint16_t(x), 0, got, want, false);
    ++by_ulp[ulp_distance(got, want) <= 4 ? ulp_distance(got, want) : 5];
    below_minus3 += bf16_to_f32(uint16_t(x)) < -3.0f;
  }
  std::printf("%s\n", log.report(65536).c_str());
  for (auto [u, n] : by_ulp) std::printf("  %s%u ulp: %d inputs\n", u == 5 ? ">=" : "", u, n);
  std::printf("  of which x < -3: %d\n", below_minus3);
  if (!(TORCH_VERSION_MAJOR == 1 && TORCH_VERSION_MINOR == 13))
    GTEST_SKIP() << "the counts and the bf16-every-op model were measured on libtorch 1.13; this is libtorch "
                 << TORCH_VERSION << ", whose CPU GELU is not pinned (its differences are printed above)";
  EXPECT_EQ(log.count(), 1014u) << "libtorch 1.13's CPU GELU differences changed";
  EXPECT_EQ(by_ulp[1], 786) << "docs/REFERENCE.md: 786 differ by 1 ulp";
  EXPECT_EQ(by_ulp[5], 161) << "docs/REFERENCE.md: 161 differ by 5 ulp or more";
  EXPECT_EQ(below_minus3, 101) << "docs/REFERENCE.md: 101 at x < -3";
  test::MismatchLog explained("gelu_tanh(torch cpu vs bf16-every-op model)", Dtype::kBf16);
  for (uint32_t x = 0; x < 65536; ++x) explained.check("", uint16_t(x), 0, bits(y)[x], gelu_bf16_every_op_rounded(uint16_t(x)), false);
  FUSEPROOF_EXPECT_CLEAN(explained, 65536);
}

TEST(TorchCpu_GeluTanh_fp16, DifferencesFromLibmModelCounted) {
  try {
    (void)torch::gelu(patterns(Dtype::kFp16, 0, 8), "tanh");
  } catch (const c10::Error& e) {
    GTEST_SKIP() << "libtorch " << TORCH_VERSION << " has no CPU GELU for Half: " << e.what_without_backtrace();
  }
  const auto y = torch::gelu(patterns(Dtype::kFp16, 0, 65536), "tanh").contiguous();
  MathConfig libm{MathModel::kLibm, Contraction::kFma, NanPolicy::kC10Vectorized, nullptr};
  test::MismatchLog log("gelu_tanh(torch cpu vs libm model)", Dtype::kFp16, 12);
  for (uint32_t x = 0; x < 65536; ++x)
    log.check("", uint16_t(x), 0, bits(y)[x], gelu_tanh_eager(Dtype::kFp16, uint16_t(x), libm), false);
  std::printf("%s\n", log.report(65536).c_str());
  // No libtorch with a CPU Half GELU has been measured here, so there is no count to pin: say so rather than pass.
  GTEST_SKIP() << "libtorch " << TORCH_VERSION << "'s CPU fp16 GELU differs from the libm model at " << log.count()
               << " of 65536 inputs; no measured count for this version is pinned, so nothing is asserted";
}

}  // namespace
}  // namespace fuseproof::ref
