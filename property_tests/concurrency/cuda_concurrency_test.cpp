// cuda_concurrency_test.cpp: the CUDA launcher called from several host threads, each on its own stream, at once:
// every output equals the reference bit for bit (labels gpu;exactness; skipped without a device).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>
#include <iterator>
#include <vector>

#include "kernels/cuda_device.h"
#include "property_tests/kernels/bias_gelu_tanh_testbed.h"
#include "property_tests/kernels/cuda_test_kernels.h"
#include "common/parallel_for.h"

namespace fuseproof::test {
namespace {

constexpr Device kCuda0{DeviceKind::kCuda, 0};
constexpr int kThreads = 4;
constexpr int kLaunchesPerThread = 8;

/// One host thread: its own stream, buffers and inputs; launches kLaunchesPerThread times with a different GELU math
/// and PDL setting each time, then checks the last output (each launch overwrites the whole of out).
void thread_body(ScalarType t, int id, std::string* error) {
  try {
    const ref::Dtype d = ref_dtype(t);
    const int64_t rows = 300 + 37 * id, width = 5120 + 1024 * id;
    const size_t n = size_t(rows * width);
    std::vector<uint16_t> x(n), bias(static_cast<size_t>(width)), out(n);
    fill_half_bits(x.data(), n, d, 0xD00Dull + uint64_t(id));
    fill_half_bits(bias.data(), bias.size(), d, ~(0xD00Dull + uint64_t(id)));
    cudaStream_t stream = nullptr;
    // A blocking stream: DeviceBuffer's uploads and poison run on the legacy default stream and must precede the launch.
    cuda_check(cudaStreamCreate(&stream), "cudaStreamCreate");
    DeviceBuffer dx(n * 2), db(size_t(width) * 2), dout(n * 2);
    dx.upload(x.data(), n * 2);
    db.upload(bias.data(), size_t(width) * 2);
    for (int k = 0; k < kLaunchesPerThread; ++k) {
      dout.poison();
      BiasGeluOptions opt;
      opt.stream = stream;
      opt.math = kAllGeluMaths[(id + k) % std::size(kAllGeluMaths)];
      opt.pdl = k % 2 == 0;
      const LaunchStatus st = bias_gelu_tanh(contiguous_view(dout.get(), t, {rows, width}, kCuda0),
                                             contiguous_view(dx.get(), t, {rows, width}, kCuda0),
                                             contiguous_view(db.get(), t, {width}, kCuda0), opt);
      if (!st.ok) throw std::runtime_error(st.message);
      cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
      cuda_check(cudaMemcpy(out.data(), dout.get(), n * 2, cudaMemcpyDeviceToHost), "cudaMemcpy");
      MismatchLog log("bias_gelu_tanh", d);
      verify_bias_gelu(log, BiasGeluOracle::cuda(d), rows, width, x.data(), bias.data(), out.data());
      if (!log.clean()) throw std::runtime_error(std::string(gelu_math_name(opt.math)) + ": " + log.report(n));
      if (output_is_trivial(out.data(), n)) throw std::runtime_error("trivial output");
    }
    cuda_check(cudaStreamDestroy(stream), "cudaStreamDestroy");
  } catch (const std::exception& e) {
    *error = "thread " + std::to_string(id) + ": " + e.what();
  }
}

void launches_from_many_threads(ScalarType t) {
  FUSEPROOF_REQUIRE_CUDA();
  std::vector<std::string> errors(kThreads);
  run_workers(unsigned(kThreads), [&](unsigned i) { thread_body(t, int(i), &errors[i]); });
  for (const std::string& e : errors) EXPECT_EQ(e, "");
  EXPECT_EQ(pending_cuda_error(), "cudaSuccess");
}
FUSEPROOF_BOTH_DTYPES(Cuda, ConcurrentStreamsFromHostThreadsBitExact, launches_from_many_threads)

}  // namespace
}  // namespace fuseproof::test
