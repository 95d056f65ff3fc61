// bias_gelu_tanh_eager_exhaustive_test.cpp: the CUDA kernel equals live eager torch::gelu(x + bias, "tanh") over all
// 2^32 (x, bias) pairs, per dtype, vector policy and GELU math (direct, table), compared on the device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <chrono>
#include <vector>

#include "kernels/bias_gelu_tanh_launcher.h"
#include "property_tests/kernels/bias_gelu_tanh_testbed.h"
#include "property_tests/kernels/cuda_test_kernels.h"
#include "adapters/torch_tensor_view.h"

namespace fuseproof::test {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// x[r, c] = r and bias[c] = c (every pair once); eager runs once per dtype, the kernel once per policy; the device
/// counts differing elements and keeps the first few. A flipped bit must then be counted exactly once (negative control).
void all_pairs_vs_eager(ScalarType t) {
  FUSEPROOF_REQUIRE_CUDA();
  if (!at::hasCUDA()) GTEST_SKIP() << "this libtorch has no CUDA backend";
  constexpr int64_t kN = int64_t(1) << 32;
  size_t free_b = 0, total_b = 0;
  cuda_check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  if (free_b < size_t(kN) * 2 * 5) GTEST_SKIP() << "needs 40 GiB of device memory, " << (free_b >> 30) << " free";
  const ref::Dtype d = ref_dtype(t);
  const at::ScalarType tt = t == ScalarType::kBf16 ? at::kBFloat16 : at::kHalf;
  const auto opts = at::TensorOptions().dtype(tt).device(at::kCUDA, 0);
  const at::Tensor x = at::empty({65536, 65536}, opts), bias = at::empty({65536}, opts);
  fill_domain(static_cast<uint16_t*>(x.data_ptr()), static_cast<uint16_t*>(bias.data_ptr()));

  auto t0 = std::chrono::steady_clock::now();
  const at::Tensor eager = at::gelu(x + bias, "tanh");
  cuda_check(cudaDeviceSynchronize(), "eager");
  const double eager_s = seconds_since(t0);
  const at::Tensor out = at::empty_like(x);
  for (GeluMath m : kAllGeluMaths)
  for (VectorPolicy v : {VectorPolicy::kBytes16, VectorPolicy::kBytes32}) {
    cuda_check(cudaMemset(out.data_ptr(), 0xA5, size_t(kN) * 2), "cudaMemset");
    t0 = std::chrono::steady_clock::now();
    BiasGeluOptions opt;
    opt.vector = v;
    opt.math = m;
    const LaunchStatus st = bias_gelu_tanh(torch_tensor_view(out), torch_tensor_view(x), torch_tensor_view(bias), opt);
    ASSERT_TRUE(st.ok) << st.message;
    cuda_check(cudaDeviceSynchronize(), "kernel");
    const double kernel_s = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    DeviceMismatch recs[8];
    const uint64_t bad = count_mismatches(static_cast<const uint16_t*>(out.data_ptr()),
                                          static_cast<const uint16_t*>(eager.data_ptr()), kN, recs, 8);
    const double compare_s = seconds_since(t0);
    MismatchLog log("bias_gelu_tanh", d);
    for (uint64_t i = 0; i < bad && i < 8; ++i)
      log.record("", uint16_t(recs[i].index >> 16), uint16_t(recs[i].index & 0xFFFF), recs[i].got, recs[i].expected);
    std::printf("%s, %s math vs eager: all 2^32 pairs, eager %.3f s, kernel %.3f s, device compare %.3f s, %llu mismatches\n",
                policy_label(t, v).c_str(), gelu_math_name(m), eager_s, kernel_s, compare_s, static_cast<unsigned long long>(bad));
    if (bad == 0) {
      FUSEPROOF_EXPECT_CLEAN(log, uint64_t(kN));
    } else {
      ADD_FAILURE() << gelu_math_name(m) << " math: " << log.report(uint64_t(kN)) << "\n(" << bad << " mismatches in all; the lines above are a sample)";
    }
  }
  // Negative control: one element flipped is exactly one mismatch.
  uint16_t* p = static_cast<uint16_t*>(out.data_ptr()) + (kN - 12345);
  uint16_t h = 0;
  cuda_check(cudaMemcpy(&h, p, 2, cudaMemcpyDeviceToHost), "cudaMemcpy");
  h ^= 1;
  cuda_check(cudaMemcpy(p, &h, 2, cudaMemcpyHostToDevice), "cudaMemcpy");
  DeviceMismatch rec[1];
  EXPECT_EQ(count_mismatches(static_cast<const uint16_t*>(out.data_ptr()),
                             static_cast<const uint16_t*>(eager.data_ptr()), kN, rec, 1),
            1u);
}

FUSEPROOF_BOTH_DTYPES(Cuda, BitExactVsEager_AllPairs, all_pairs_vs_eager)

}  // namespace
}  // namespace fuseproof::test
