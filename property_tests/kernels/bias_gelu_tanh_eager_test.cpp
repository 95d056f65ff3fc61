// bias_gelu_tanh_eager_test.cpp: the CUDA kernel equals live eager libtorch CUDA, torch::gelu(x + bias, "tanh"), and
// the reference, bit for bit, on random shapes; and torch tensors the launcher must refuse.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cstring>
#include <vector>

#include "kernels/bias_gelu_tanh_launcher.h"
#include "property_tests/kernels/bias_gelu_tanh_testbed.h"
#include "property_tests/kernels/cuda_test_kernels.h"
#include "adapters/torch_tensor_view.h"

namespace fuseproof::test {
namespace {

at::ScalarType torch_dtype(ScalarType t) { return t == ScalarType::kBf16 ? at::kBFloat16 : at::kHalf; }

/// Host 16-bit patterns -> a CUDA tensor of dtype t with those exact bits.
at::Tensor cuda_tensor(const std::vector<uint16_t>& bits, at::IntArrayRef sizes, ScalarType t) {
  at::Tensor host = at::empty(sizes, at::TensorOptions().dtype(at::kShort));
  std::memcpy(host.data_ptr(), bits.data(), bits.size() * 2);
  return host.to(at::kCUDA).view(torch_dtype(t));
}

std::vector<uint16_t> bits_of(const at::Tensor& t) {
  const at::Tensor h = t.contiguous().view(at::kShort).cpu();
  const auto* p = static_cast<const uint16_t*>(h.data_ptr());
  return std::vector<uint16_t>(p, p + h.numel());
}

void random_shapes_vs_eager(ScalarType t) {
  FUSEPROOF_REQUIRE_CUDA();
  if (!at::hasCUDA()) GTEST_SKIP() << "this libtorch has no CUDA backend";
  const ref::Dtype d = ref_dtype(t);
  const bool ok = rc::check(std::string("Cuda_BiasGeluTanh_") + scalar_type_name(t) + " vs eager", [t, d] {
    const RandomLaunch l = gen_random_launch(t);
    const int64_t rows = l.rows, width = l.width;
    std::vector<uint16_t> xb(static_cast<size_t>(rows * width)), bb(static_cast<size_t>(width));
    fill_random_launch(l, xb.data(), bb.data());
    const at::Tensor x = cuda_tensor(xb, {rows, width}, t), bias = cuda_tensor(bb, {width}, t);
    const at::Tensor out = at::empty_like(x);
    BiasGeluOptions opt;
    opt.vector = l.vector;
    opt.math = l.math;
    const LaunchStatus st = bias_gelu_tanh(torch_tensor_view(out), torch_tensor_view(x), torch_tensor_view(bias), opt);
    RC_ASSERT(st.ok);
    const at::Tensor eager = at::gelu(x + bias, "tanh");
    const std::vector<uint16_t> got = bits_of(out), want = bits_of(eager);
    MismatchLog vs_eager("bias_gelu_tanh", d);
    for (int64_t i = 0; i < rows * width; ++i)
      if (got[size_t(i)] != want[size_t(i)])
        vs_eager.record("r=" + std::to_string(i / width) + ",c=" + std::to_string(i % width), xb[size_t(i)],
                        bb[size_t(i % width)], got[size_t(i)], want[size_t(i)]);
    if (!vs_eager.clean()) RC_FAIL("vs eager: " + vs_eager.report(uint64_t(rows * width)));
    MismatchLog vs_ref("bias_gelu_tanh", d);
    verify_bias_gelu(vs_ref, BiasGeluOracle::cuda(d), rows, width, xb.data(), bb.data(), got.data());
    if (!vs_ref.clean()) RC_FAIL("vs reference: " + vs_ref.report(uint64_t(rows * width)));
  });
  EXPECT_TRUE(ok);
}

/// Real torch tensors the launcher must refuse: a transposed view, a sliced (misaligned) view, float32, a CPU bias.
void rejects_torch_tensors(ScalarType t) {
  FUSEPROOF_REQUIRE_CUDA();
  if (!at::hasCUDA()) GTEST_SKIP() << "this libtorch has no CUDA backend";
  const auto opts = at::TensorOptions().dtype(torch_dtype(t)).device(at::kCUDA);
  const at::Tensor x = at::randn({64, 64}, opts), bias = at::randn({64}, opts);
  const at::Tensor out = at::full({64, 64}, 0.5, opts);
  const std::vector<uint16_t> before = bits_of(out);
  auto expect = [&](const LaunchStatus& st, const std::string& prefix) {
    EXPECT_FALSE(st.ok);
    EXPECT_EQ(st.message.rfind(prefix, 0), 0u) << st.message;
    EXPECT_EQ(pending_cuda_error(), "cudaSuccess");
  };
  expect(bias_gelu_tanh(torch_tensor_view(out), torch_tensor_view(x.t()), torch_tensor_view(bias)),
         "bias_gelu_tanh: x must be contiguous (strides [64, 1]), got strides [1, 64]");
  const at::Tensor wide = at::randn({64, 72}, opts);
  expect(bias_gelu_tanh(torch_tensor_view(out), torch_tensor_view(wide.narrow(1, 0, 64)), torch_tensor_view(bias)),
         "bias_gelu_tanh: x must be contiguous (strides [64, 1]), got strides [72, 1]");
  const at::Tensor flat = at::randn({64 * 64 + 1}, opts);
  expect(bias_gelu_tanh(torch_tensor_view(out), torch_tensor_view(flat.narrow(0, 1, 64 * 64).view({64, 64})),
                        torch_tensor_view(bias)),
         "bias_gelu_tanh: x data pointer must be aligned to");
  expect(bias_gelu_tanh(torch_tensor_view(out), torch_tensor_view(x.to(at::kFloat)), torch_tensor_view(bias)),
         "bias_gelu_tanh: x dtype must be bf16 or fp16, got float32");
  expect(bias_gelu_tanh(torch_tensor_view(out), torch_tensor_view(x), torch_tensor_view(bias.cpu())),
         "bias_gelu_tanh: bias device must equal x device (cuda:0), got cpu");
  EXPECT_EQ(bits_of(out), before) << "a rejected call wrote out";
}

FUSEPROOF_BOTH_DTYPES(Cuda, BitExactVsEager_RandomShapes, random_shapes_vs_eager)
FUSEPROOF_BOTH_DTYPES(CudaLauncher, RejectsTorchTensors, rejects_torch_tensors)

}  // namespace
}  // namespace fuseproof::test
