// torch_cpu_eager_test.cpp: the reference against live eager libtorch on the CPU (add all pairs; GELU all inputs).
#include <cstdio>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "property_tests/support/mismatch_log.h"
#include "reference/add_round.h"
#include "reference/activation_table.h"

namespace fuseproof::ref {
namespace {

torch::Dtype torch_dtype(Dtype d) { return d == Dtype::kBf16 ? torch::kBFloat16 : torch::kHalf; }

torch::Tensor patterns(Dtype d, int64_t first, int64_t count) {
  return torch::arange(first, first + count, torch::kInt32).to(torch::kInt16).view(torch_dtype(d));
}

const uint16_t* bits(const torch::Tensor& t) { return reinterpret_cast<const uint16_t*>(t.data_ptr()); }

/// The NaN pattern libtorch's vectorized CPU add gives, by version: bf16 always blends 0xFFFF (cvtfp32_bf16);
/// fp16 went through c10's scalar conversion (sign | 0x7E00) until 2.x vectorised it with VCVTPS2PH.
NanPolicy cpu_vector_nan_policy(Dtype d) {
  if (d == Dtype::kBf16) return NanPolicy::kC10Vectorized;
  return TORCH_VERSION_MAJOR < 2 ? NanPolicy::kC10Scalar : NanPolicy::kC10Vectorized;
}

void add_all_pairs(Dtype d) {
  const NanPolicy policy = cpu_vector_nan_policy(d);
  test::MismatchLog log("add_round", d);
  const auto x = patterns(d, 0, 65536).reshape({1, 65536});
  constexpr int64_t kBlock = 512;
  for (int64_t b0 = 0; b0 < 65536; b0 += kBlock) {
    const auto b = patterns(d, b0, kBlock).reshape({kBlock, 1});
    const auto s = (x + b).contiguous();  // the broadcast add of eager `x + bias`
    const uint16_t* got = bits(s);
    for (int64_t r = 0; r < kBlock; ++r) {
      for (uint32_t xi = 0; xi < 65536; ++xi) {
        const uint16_t g = got[r * 65536 + xi];
        const uint16_t want = add_round(d, uint16_t(xi), uint16_t(b0 + r), policy);
        if (g != want) log.record("", uint16_t(xi), uint16_t(b0 + r), g, want);
      }
    }
  }
  std::printf("libtorch %s CPU, NaN policy %s\n", TORCH_VERSION, nan_policy_name(policy));
  FUSEPROOF_EXPECT_CLEAN(log, uint64_t(1) << 32);
}

TEST(TorchCpu_AddRound_bf16, BitExactVsEager_AllPairs) { add_all_pairs(Dtype::kBf16); }
TEST(TorchCpu_AddRound_fp16, BitExactVsEager_AllPairs) { add_all_pairs(Dtype::kFp16); }

TEST(TorchCpu_AddRound_bf16, EagerCpuDisagreesWithItselfOnNan) {
  // The vectorized body and the scalar tail of one CPU add narrow NaN differently: 0xFFFF vs 0x7FC0.
  const auto nan = torch::full({67}, 0, torch::kInt16).fill_(int16_t(0x7FC1)).view(torch::kBFloat16);
  const auto one = torch::full({67}, 1.0, torch::kBFloat16);
  const auto s = (nan + one).contiguous();
  const uint16_t body = bits(s)[0], tail = bits(s)[66];
  std::printf("bf16 NaN + 1 on the CPU: vector body 0x%04X, scalar tail 0x%04X\n", body, tail);
  EXPECT_EQ(body, add_round(Dtype::kBf16, 0x7FC1, 0x3F80, NanPolicy::kC10Vectorized));
  EXPECT_EQ(tail, add_round(Dtype::kBf16, 0x7FC1, 0x3F80, NanPolicy::kC10Scalar));
}

}  // namespace
}  // namespace fuseproof::ref
