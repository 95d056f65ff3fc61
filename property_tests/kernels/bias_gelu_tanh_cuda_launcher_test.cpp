// bias_gelu_tanh_cuda_launcher_test.cpp: rejections of device views: the message, out untouched on the device, no CUDA
// error pending, and the context still working afterwards.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <vector>

#include "kernels/bias_gelu_tanh_cuda.h"
#include "kernels/cuda_device.h"
#include "property_tests/kernels/bias_gelu_tanh_testbed.h"
#include "property_tests/kernels/cuda_test_kernels.h"

namespace fuseproof::test {
namespace {

constexpr Device kCuda0{DeviceKind::kCuda, 0};
constexpr int64_t kRows = 8, kWidth = 4096;

struct DeviceBench {
  ScalarType t;
  DeviceBuffer x{size_t(2 * kRows * kWidth) * 2}, bias{size_t(2 * kWidth) * 2}, out{size_t(2 * kRows * kWidth) * 2};
  std::vector<uint16_t> hx, hb;
  TensorView xv, bv, ov;
  explicit DeviceBench(ScalarType dtype) : t(dtype), hx(size_t(2 * kRows * kWidth)), hb(size_t(2 * kWidth)) {
    fill_half_bits(hx.data(), hx.size(), ref_dtype(t), 1);
    fill_half_bits(hb.data(), hb.size(), ref_dtype(t), 2);
    x.upload(hx.data(), hx.size() * 2);
    bias.upload(hb.data(), hb.size() * 2);
    out.poison();
    xv = contiguous_view(x.get(), t, {kRows, kWidth}, kCuda0);
    bv = contiguous_view(bias.get(), t, {kWidth}, kCuda0);
    ov = contiguous_view(out.get(), t, {kRows, kWidth}, kCuda0);
  }
  /// Empty when every byte of out (the whole allocation) still holds 0xA5.
  std::string out_untouched() const {
    std::vector<uint8_t> h(out.bytes());
    out.download(h.data(), h.size());
    for (size_t i = 0; i < h.size(); ++i)
      if (h[i] != 0xA5) return "byte " + std::to_string(i) + " of out changed";
    return {};
  }
};

/// A valid launch on the same context computes the right answer (the context was not poisoned).
void expect_context_works(ScalarType t) {
  DeviceBench b(t);
  ASSERT_TRUE(bias_gelu_tanh(b.ov, b.xv, b.bv).ok);
  std::vector<uint16_t> out(static_cast<size_t>(kRows * kWidth));
  b.out.download(out.data(), out.size() * 2);
  MismatchLog log("bias_gelu_tanh", ref_dtype(t));
  verify_bias_gelu(log, BiasGeluOracle::cuda(ref_dtype(t)), kRows, kWidth, b.hx.data(), b.hb.data(), out.data());
  EXPECT_TRUE(log.clean()) << log.report(uint64_t(kRows * kWidth));
  EXPECT_EQ(cudaGetErrorName(cudaDeviceSynchronize()), std::string("cudaSuccess"));
}

void expect_rejected(DeviceBench& b, const std::string& expected_prefix, const BiasGeluOptions& opt = {}) {
  const LaunchStatus st = bias_gelu_tanh(b.ov, b.xv, b.bv, opt);
  EXPECT_FALSE(st.ok);
  EXPECT_EQ(st.message.rfind(expected_prefix, 0), 0u) << st.message;
  EXPECT_EQ(st.message.find('\n'), std::string::npos);
  EXPECT_EQ(pending_cuda_error(), "cudaSuccess") << "after: " << st.message;
  EXPECT_EQ(cudaGetErrorName(cudaDeviceSynchronize()), std::string("cudaSuccess"));
  EXPECT_EQ(b.out_untouched(), "") << st.message;
}

void misaligned_device_pointers(ScalarType t) {
  FUSEPROOF_REQUIRE_CUDA();
  for (VectorPolicy v : {VectorPolicy::kBytes16, VectorPolicy::kBytes32}) {
    BiasGeluOptions opt;
    opt.vector = v;
    for (const char* which : {"x", "bias", "out"}) {
      DeviceBench b(t);
      TensorView& view = std::string(which) == "x" ? b.xv : std::string(which) == "bias" ? b.bv : b.ov;
      view.data = static_cast<uint16_t*>(view.data) + 1;
      expect_rejected(b, std::string("bias_gelu_tanh: ") + which + " data pointer must be aligned to " +
                             std::to_string(static_cast<int>(v)) + " bytes",
                      opt);
    }
  }
  expect_context_works(t);
}

void every_invalid_width_on_device(ScalarType t) {
  FUSEPROOF_REQUIRE_CUDA();
  DeviceBench b(t);
  for (int64_t w = 1; w <= kWidth; ++w) {
    if (w % 8 == 0) continue;
    b.xv = contiguous_view(b.x.get(), t, {2, w}, kCuda0);
    b.ov = contiguous_view(b.out.get(), t, {2, w}, kCuda0);
    b.bv = contiguous_view(b.bias.get(), t, {w}, kCuda0);
    const LaunchStatus st = bias_gelu_tanh(b.ov, b.xv, b.bv, {});
    ASSERT_EQ(st.message.rfind("bias_gelu_tanh: width must be a positive multiple of ", 0), 0u) << st.message;
  }
  EXPECT_EQ(pending_cuda_error(), "cudaSuccess");
  EXPECT_EQ(b.out_untouched(), "");
  expect_context_works(t);
}

void wrong_memory_and_devices(ScalarType t) {
  FUSEPROOF_REQUIRE_CUDA();
  alignas(64) static uint16_t host_x[kRows * kWidth], host_bias[kWidth];
  {
    DeviceBench b(t);  // a host pointer labelled cuda:0: the kernel would fault and poison the context
    b.xv.data = host_x;
    expect_rejected(b, "bias_gelu_tanh: x data pointer must be device memory on cuda:0, got host memory");
  }
  {
    DeviceBench b(t);
    b.bv.data = host_bias;
    expect_rejected(b, "bias_gelu_tanh: bias data pointer must be device memory on cuda:0, got host memory");
  }
  {
    DeviceBench b(t);  // device memory in views labelled cpu: the emulation would dereference it on the host
    b.xv.device = b.bv.device = b.ov.device = Device{};
    expect_rejected(b, "bias_gelu_tanh: x data pointer must be host memory for device cpu, got device memory on cuda:0");
  }
  {
    DeviceBench b(t);
    b.bv.device = Device{};
    expect_rejected(b, "bias_gelu_tanh: bias device must equal x device (cuda:0), got cpu");
  }
  {
    DeviceBench b(t);
    const int n = cuda_device_count();
    b.xv.device = b.bv.device = b.ov.device = Device{DeviceKind::kCuda, n};
    expect_rejected(b, "bias_gelu_tanh: x device must be one of the " + std::to_string(n) + " CUDA devices, got cuda:" +
                           std::to_string(n));
  }
  {
    DeviceBench b(t);  // partial overlap on the device: out lies in x's allocation, which must keep every byte
    b.ov.data = b.x.u16() + kWidth;
    const LaunchStatus st = bias_gelu_tanh(b.ov, b.xv, b.bv);
    EXPECT_EQ(st.message.rfind("bias_gelu_tanh: out must be x itself or not overlap it", 0), 0u) << st.message;
    EXPECT_EQ(pending_cuda_error(), "cudaSuccess");
    std::vector<uint16_t> x_after(b.hx.size());
    b.x.download(x_after.data(), x_after.size() * 2);
    EXPECT_EQ(x_after, b.hx) << "x, which holds the overlapping out, was written by a rejected call";
  }
  expect_context_works(t);
}

void auto_policy_follows_architecture(ScalarType t) {
  FUSEPROOF_REQUIRE_CUDA();
  const int cc = cuda_device_compute_capability(0);
  const VectorPolicy v = bias_gelu_tanh_resolve_vector(kCuda0, VectorPolicy::kAuto);
  EXPECT_EQ(v, cc >= 100 ? VectorPolicy::kBytes32 : VectorPolicy::kBytes16) << "sm_" << cc;
  std::printf("cuda:0 is sm_%d with %d SMs; auto picks %d-byte vectors for %s\n", cc, cuda_device_sm_count(0),
              static_cast<int>(v), scalar_type_name(t));
}

/// docs/KERNEL.md: a table's first use builds it synchronously, which graph capture forbids: an explicit table math is
/// then rejected, kAuto falls back to direct math; once the table exists, capture takes the table kernel.
void graph_capture_before_the_table_exists(ScalarType t) {
  FUSEPROOF_REQUIRE_CUDA();
  const kernel::Half h = t == ScalarType::kBf16 ? kernel::Half::kBf16 : kernel::Half::kFp16;
  const struct {
    GeluMath math;
    kernel::TableKind kind;
  } tables[] = {{GeluMath::kTableBulk, kernel::TableKind::kFull},
                {GeluMath::kTableRangeBulk, kernel::TableKind::kRange}};
  for (const auto& tb : tables)
    if (kernel::bias_gelu_tanh_cuda_table(0, h, false, nullptr, tb.kind))
      GTEST_SKIP() << gelu_math_name(tb.math) << " table already built in this process: this case needs a process of "
                   << "its own (ctest runs each case in its own process)";
  // kAuto's table size: 2^23 elements, the smallest launch for which it picks kAutoLargeMath.
  const int64_t rows = kAutoTableMinElements / kWidth;
  std::vector<uint16_t> hx(size_t(rows * kWidth)), hb(static_cast<size_t>(kWidth));
  fill_half_bits(hx.data(), hx.size(), ref_dtype(t), 11);
  fill_half_bits(hb.data(), hb.size(), ref_dtype(t), 12);
  DeviceBuffer x(hx.size() * 2), bias(hb.size() * 2), out(hx.size() * 2);
  x.upload(hx.data(), hx.size() * 2);
  bias.upload(hb.data(), hb.size() * 2);
  const TensorView xv = contiguous_view(x.get(), t, {rows, kWidth}, kCuda0);
  const TensorView bv = contiguous_view(bias.get(), t, {kWidth}, kCuda0);
  const TensorView ov = contiguous_view(out.get(), t, {rows, kWidth}, kCuda0);
  ASSERT_EQ(bias_gelu_tanh_resolve_math(kCuda0, rows * kWidth, GeluMath::kAuto), kAutoLargeMath);
  cudaStream_t s = nullptr;
  cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  BiasGeluOptions opt;
  opt.stream = s;

  // Capture: every explicit table math is refused in one line; kAuto is accepted.
  out.poison();
  cuda_check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  for (const auto& tb : tables) {
    if (!kernel::bias_gelu_tanh_cuda_table_check(0, tb.kind).empty()) continue;  // the device lacks its shared memory
    opt.math = tb.math;
    const LaunchStatus st = bias_gelu_tanh(ov, xv, bv, opt);
    EXPECT_FALSE(st.ok) << gelu_math_name(tb.math) << " accepted during capture before its table exists";
    EXPECT_EQ(st.message, "bias_gelu_tanh: options.math table must be built before graph capture (one launch outside "
                          "the capture), got its first use on cuda:0 while capturing");
  }
  opt.math = GeluMath::kAuto;
  const LaunchStatus auto_st = bias_gelu_tanh(ov, xv, bv, opt);
  cudaGraph_t graph = nullptr;
  cuda_check(cudaStreamEndCapture(s, &graph), "cudaStreamEndCapture");
  ASSERT_TRUE(auto_st.ok) << auto_st.message;
  for (const auto& tb : tables)
    EXPECT_EQ(kernel::bias_gelu_tanh_cuda_table(0, h, false, nullptr, tb.kind), nullptr)
        << gelu_math_name(tb.math) << " table built during capture";

  // Replay: the captured kAuto launch (direct math, the fallback) computes the right answer.
  cudaGraphExec_t exec = nullptr;
  cuda_check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  cuda_check(cudaGraphLaunch(exec, s), "cudaGraphLaunch");
  cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  std::vector<uint16_t> got(hx.size());
  out.download(got.data(), got.size() * 2);
  ASSERT_FALSE(output_is_trivial(got.data(), got.size()));
  MismatchLog log("bias_gelu_tanh", ref_dtype(t));
  const uint64_t cases = verify_bias_gelu(log, BiasGeluOracle::cuda(ref_dtype(t)), rows, kWidth, hx.data(), hb.data(),
                                          got.data());
  FUSEPROOF_EXPECT_CLEAN(log, cases);

  // Negative control of the refusal: with kAuto's table built outside capture, the same capture takes it.
  opt.math = kAutoLargeMath;
  ASSERT_TRUE(bias_gelu_tanh(ov, xv, bv, opt).ok);
  cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  cuda_check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  const LaunchStatus built_st = bias_gelu_tanh(ov, xv, bv, opt);
  cuda_check(cudaStreamEndCapture(s, &graph), "cudaStreamEndCapture");
  cudaGraphDestroy(graph);
  EXPECT_TRUE(built_st.ok) << built_st.message;
  EXPECT_EQ(pending_cuda_error(), "cudaSuccess");
  cudaStreamDestroy(s);
}

FUSEPROOF_BOTH_DTYPES(CudaLauncher, GraphCaptureRejectsUnbuiltTableAndAutoFallsBack, graph_capture_before_the_table_exists)
FUSEPROOF_BOTH_DTYPES(CudaLauncher, RejectsMisalignedDevicePointers, misaligned_device_pointers)
FUSEPROOF_BOTH_DTYPES(CudaLauncher, RejectsEveryInvalidWidth, every_invalid_width_on_device)
FUSEPROOF_BOTH_DTYPES(CudaLauncher, RejectsWrongMemoryAndDevices, wrong_memory_and_devices)
FUSEPROOF_BOTH_DTYPES(CudaLauncher, AutoPolicyFollowsArchitecture, auto_policy_follows_architecture)

}  // namespace
}  // namespace fuseproof::test
