// torch_bias_gelu_tanh_stream_test.cpp: the libtorch adapter launches on PyTorch's current stream, so the kernel reads
// x only after the work a side stream enqueued before it; on the legacy default stream (the control) it reads stale x.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/cuda/Sleep.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "adapters/torch_bias_gelu_tanh.h"

namespace fuseproof::test {
namespace {

constexpr int64_t kRows = 1024, kWidth = 4096;
/// About 34 ms at the H200's 1.98 GHz: the side stream is still asleep when the kernel is launched.
constexpr int64_t kSleepCycles = int64_t(1) << 26;

bool cuda_usable() { return at::globalContext().hasCUDA() && c10::cuda::device_count() > 0; }

/// Elements of out that differ (bit patterns) from eager gelu(fresh + bias), when a side stream (PyTorch's pool:
/// non-blocking) sleeps and then writes x = fresh, and the kernel is launched inside that stream's guard, either by
/// the adapter (the current stream: the side stream) or on the legacy default stream, as e2e/ launches today.
int64_t elements_not_eager(at::ScalarType dt, bool adapter) {
  const auto opts = at::TensorOptions().device(at::kCUDA).dtype(dt);
  at::manual_seed(20261201);
  const at::Tensor fresh = at::randn({kRows, kWidth}, opts), bias = at::randn({kWidth}, opts);
  at::Tensor x = at::zeros({kRows, kWidth}, opts);  // stale contents: zeros
  at::Tensor out = at::empty({kRows, kWidth}, opts);
  c10::cuda::device_synchronize();
  const c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool();
  LaunchStatus st;
  {
    c10::cuda::CUDAStreamGuard guard(side);
    at::cuda::sleep(kSleepCycles);
    x.copy_(fresh);
    if (adapter) {
      st = torch_bias_gelu_tanh(out, x, bias);
    } else {
      BiasGeluOptions legacy;
      legacy.stream = nullptr;
      st = bias_gelu_tanh(torch_tensor_view(out), torch_tensor_view(x), torch_tensor_view(bias), legacy);
    }
  }
  EXPECT_TRUE(st.ok) << st.message;
  c10::cuda::device_synchronize();
  const at::Tensor eager = at::gelu(fresh + bias, "tanh");
  return out.view(at::kShort).ne(eager.view(at::kShort)).sum().item<int64_t>();
}

TEST(Cuda_TorchAdapter_bf16, OrderedAfterSideStreamWork) {
  if (!cuda_usable()) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(elements_not_eager(at::kBFloat16, true), 0);
}

TEST(Cuda_TorchAdapter_fp16, OrderedAfterSideStreamWork) {
  if (!cuda_usable()) GTEST_SKIP() << "no CUDA device";
  EXPECT_EQ(elements_not_eager(at::kHalf, true), 0);
}

// The control: the same launch on the legacy default stream is not ordered after the side stream and reads zeros.
TEST(Cuda_TorchAdapter_bf16, LegacyDefaultStreamReadsStaleInput_NegativeControl) {
  if (!cuda_usable()) GTEST_SKIP() << "no CUDA device";
  EXPECT_GT(elements_not_eager(at::kBFloat16, false), kRows * kWidth / 2);
}

}  // namespace
}  // namespace fuseproof::test
