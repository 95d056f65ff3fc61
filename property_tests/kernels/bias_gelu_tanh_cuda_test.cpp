// bias_gelu_tanh_cuda_test.cpp: the CUDA kernel equals the reference (CUDA tanh model): random shapes, in place,
// PDL ordering behind a producer, and more than 2^31 elements.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "kernels/cuda_device.h"
#include "property_tests/kernels/bias_gelu_tanh_testbed.h"
#include "property_tests/kernels/cuda_test_kernels.h"
#include "common/parallel_for.h"

namespace fuseproof::test {
namespace {

constexpr Device kCuda0{DeviceKind::kCuda, 0};

/// Runs one shape on the device from host inputs and returns the output (inputs and output via DeviceBuffers).
std::vector<uint16_t> run_on_device(ScalarType t, int64_t rows, int64_t width, const std::vector<uint16_t>& x,
                                    const std::vector<uint16_t>& bias, const BiasGeluOptions& opt) {
  const size_t n = size_t(rows * width);
  DeviceBuffer dx(n * 2), db(static_cast<size_t>(width) * 2), dout(n * 2);
  dx.upload(x.data(), n * 2);
  db.upload(bias.data(), size_t(width) * 2);
  dout.poison();
  const LaunchStatus st = bias_gelu_tanh(contiguous_view(dout.get(), t, {rows, width}, kCuda0),
                                         contiguous_view(dx.get(), t, {rows, width}, kCuda0),
                                         contiguous_view(db.get(), t, {width}, kCuda0), opt);
  if (!st.ok) throw std::runtime_error(st.message);
  std::vector<uint16_t> out(n);
  dout.download(out.data(), n * 2);  // synchronizes the legacy default stream
  return out;
}

void random_shapes(ScalarType t) {
  FUSEPROOF_REQUIRE_CUDA();
  const ref::Dtype d = ref_dtype(t);
  const bool ok = rc::check(std::string("Cuda_BiasGeluTanh_") + scalar_type_name(t) + " random shapes", [t, d] {
    const RandomLaunch l = gen_random_launch(t);
    const int64_t rows = l.rows, width = l.width;
    std::vector<uint16_t> x(static_cast<size_t>(rows * width)), bias(static_cast<size_t>(width));
    fill_random_launch(l, x.data(), bias.data());
    BiasGeluOptions opt;
    opt.vector = l.vector;
    opt.pdl = *rc::gen::arbitrary<bool>();
    opt.math = l.math;
    const std::vector<uint16_t> out = run_on_device(t, rows, width, x, bias, opt);
    MismatchLog log("bias_gelu_tanh", d);
    verify_bias_gelu(log, BiasGeluOracle::cuda(d), rows, width, x.data(), bias.data(), out.data());
    if (!log.clean()) RC_FAIL(log.report(uint64_t(rows * width)));
  });
  EXPECT_TRUE(ok);
}

/// out == x, every math and vector policy, on random 16-bit patterns, `rows` x 5,120. With `max_grid` blocks (0: the
/// device's grid) each block of the bulk ring takes several chunks and refills its slots: 64 rows on 3 blocks is 7
/// chunks of 1,952 vectors a block (bulk_plan), 2-3 turns of each slot, with consumer threads idle in each chunk. That
/// is a shape compute-sanitizer's racecheck and synccheck can afford (scripts/gpu_sanitize.sh); on the device's grid no
/// block reuses a slot at 333 rows, so the ring's race (docs/PERFORMANCE.md, The bulk ring) could not show there.
void in_place_on(ScalarType t, int64_t rows, int max_grid) {
  FUSEPROOF_REQUIRE_CUDA();
  const ref::Dtype d = ref_dtype(t);
  const int64_t width = 5120;
  std::vector<uint16_t> x(static_cast<size_t>(rows * width)), bias(static_cast<size_t>(width));
  fill_half_bits(x.data(), x.size(), d, 3);
  fill_half_bits(bias.data(), bias.size(), d, 4);
  for (GeluMath m : kAllGeluMaths)
  for (VectorPolicy v : {VectorPolicy::kBytes16, VectorPolicy::kBytes32}) {
    DeviceBuffer dx(x.size() * 2), db(bias.size() * 2);
    dx.upload(x.data(), x.size() * 2);
    db.upload(bias.data(), bias.size() * 2);
    BiasGeluOptions opt;
    opt.vector = v;
    opt.math = m;
    opt.max_grid_for_test = max_grid;
    const TensorView xv = contiguous_view(dx.get(), t, {rows, width}, kCuda0);
    ASSERT_TRUE(bias_gelu_tanh(xv, xv, contiguous_view(db.get(), t, {width}, kCuda0), opt).ok);
    std::vector<uint16_t> out(x.size());
    dx.download(out.data(), out.size() * 2);
    MismatchLog log("bias_gelu_tanh", d);
    FUSEPROOF_EXPECT_CLEAN(log, verify_bias_gelu(log, BiasGeluOracle::cuda(d), rows, width, x.data(), bias.data(),
                                                 out.data()));
  }
}

void in_place(ScalarType t) { in_place_on(t, 333, 0); }
void in_place_ring_refills(ScalarType t) { in_place_on(t, 64, 3); }

/// A producer rewrites x before every fused launch (PDL, stream serialization); returns elements that were computed
/// from a stale x over `iterations` rounds. With the wait in place it must be 0.
uint64_t pdl_stale_elements(ScalarType t, GeluMath math, bool skip_wait, int iterations) {
  const ref::Dtype d = ref_dtype(t);
  const int64_t rows = 128, width = 8192, n = rows * width;
  DeviceBuffer dx(static_cast<size_t>(n) * 2), db(static_cast<size_t>(width) * 2), dout(static_cast<size_t>(n) * 2);
  std::vector<uint16_t> bias(static_cast<size_t>(width)), out(static_cast<size_t>(n));
  fill_half_bits(bias.data(), bias.size(), d, 99);
  db.upload(bias.data(), bias.size() * 2);
  fill_pattern(dx.u16(), n, 1000);  // iteration "-1"
  cudaStream_t stream = nullptr;
  cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  const int sms = cuda_device_sm_count(0);
  const BiasGeluOracle& oracle = BiasGeluOracle::cuda(d);
  uint64_t stale = 0;
  for (int it = 0; it < iterations; ++it) {
    const uint64_t seed = 2000 + uint64_t(it);
    // The producer occupies half the SMs: a table kernel whose block needs a whole SM's register file (1,024 threads
    // x 64 registers) cannot start beside a producer block, but its blocks on the free SMs can start early.
    launch_pdl_producer(dx.u16(), n, seed, 200000, std::max(1, sms / 2), stream);
    BiasGeluOptions opt;
    opt.stream = stream;
    opt.pdl = true;
    opt.pdl_skip_wait_for_test = skip_wait;
    opt.math = math;
    const LaunchStatus st = bias_gelu_tanh(contiguous_view(dout.get(), t, {rows, width}, kCuda0),
                                           contiguous_view(dx.get(), t, {rows, width}, kCuda0),
                                           contiguous_view(db.get(), t, {width}, kCuda0), opt);
    if (!st.ok) throw std::runtime_error(st.message);
    cuda_check(cudaMemcpyAsync(out.data(), dout.get(), out.size() * 2, cudaMemcpyDeviceToHost, stream), "memcpy");
    cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    for (int64_t i = 0; i < n; ++i)
      stale += out[size_t(i)] != oracle(pattern_bits(seed, uint64_t(i)), bias[size_t(i % width)]);
  }
  cudaStreamDestroy(stream);
  return stale;
}

void pdl_ordering(ScalarType t) {
  FUSEPROOF_REQUIRE_CUDA();
  if (cuda_device_compute_capability(0) < 90) GTEST_SKIP() << "PDL needs sm_90+";
  // The table kernel copies its table into shared memory before the wait; x and bias only after it.
  for (GeluMath m : kAllGeluMaths) {
    const uint64_t stale = pdl_stale_elements(t, m, false, 16);
    EXPECT_EQ(stale, 0u) << gelu_math_name(m) << ": the fused kernel read x before the producer had written it";
    std::printf("PDL with griddepcontrol.wait, %s math: 16 rounds x 1048576 elements, %llu stale\n", gelu_math_name(m),
                static_cast<unsigned long long>(stale));
  }
}

/// Negative control: without griddepcontrol.wait the same schedule must produce stale reads, which shows that the
/// fused kernel really starts before the producer finishes, so the test above can fail.
void pdl_without_wait_reads_stale(ScalarType t) {
  FUSEPROOF_REQUIRE_CUDA();
  if (cuda_device_compute_capability(0) < 90) GTEST_SKIP() << "PDL needs sm_90+";
  for (GeluMath m : kAllGeluMaths) {
    const uint64_t stale = pdl_stale_elements(t, m, true, 4);
    EXPECT_GT(stale, 0u) << gelu_math_name(m)
                         << ": no stale read without the wait: the PDL ordering test cannot detect a missing wait";
    std::printf("negative control, PDL without griddepcontrol.wait, %s math: 4 rounds x 1048576 elements, %llu stale\n",
                gelu_math_name(m), static_cast<unsigned long long>(stale));
  }
  EXPECT_EQ(pending_cuda_error(), "cudaSuccess");
}

/// rows x width = 2^31 + 2^16 elements: indices past 2^31 need 64 bits. The whole output of direct math at 16 bytes
/// is checked on the host; every other math and policy is compared with it on the device.
void more_than_2_31_elements(ScalarType t) {
  FUSEPROOF_REQUIRE_CUDA();
  const ref::Dtype d = ref_dtype(t);
  const int64_t rows = 32769, width = 65536, n = rows * width;
  ASSERT_GT(n, int64_t(1) << 31);
  size_t free_b = 0, total_b = 0;
  cuda_check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  DeviceBuffer dx(static_cast<size_t>(n) * 2), db(static_cast<size_t>(width) * 2);
  const uint64_t seed = 31;
  fill_pattern(dx.u16(), n, seed);
  std::vector<uint16_t> bias(static_cast<size_t>(width));
  fill_half_bits(bias.data(), bias.size(), d, 32);
  db.upload(bias.data(), bias.size() * 2);
  // Every math at 16 bytes (the first, direct, is checked against the oracle below), and the 32-byte policies of
  // every math; each compared with the first on the device.
  struct Run {
    VectorPolicy v;
    GeluMath m;
  };
  std::vector<Run> runs;
  for (GeluMath m : kAllGeluMaths) runs.push_back({VectorPolicy::kBytes16, m});
  for (GeluMath m : kAllGeluMaths) runs.push_back({VectorPolicy::kBytes32, m});
  if (free_b < size_t(n) * 2 * (runs.size() + 1) + (size_t(1) << 30))
    GTEST_SKIP() << "needs " << ((n * 2 * int64_t(runs.size() + 1)) >> 30) << " GiB of device memory";
  std::vector<std::unique_ptr<DeviceBuffer>> outs;
  for (const Run& run : runs) {
    outs.push_back(std::make_unique<DeviceBuffer>(static_cast<size_t>(n) * 2));
    DeviceBuffer* buf = outs.back().get();
    buf->poison();
    BiasGeluOptions opt;
    opt.vector = run.v;
    opt.math = run.m;
    const LaunchStatus st = bias_gelu_tanh(contiguous_view(buf->get(), t, {rows, width}, kCuda0),
                                           contiguous_view(dx.get(), t, {rows, width}, kCuda0),
                                           contiguous_view(db.get(), t, {width}, kCuda0), opt);
    ASSERT_TRUE(st.ok) << st.message;
  }
  DeviceBuffer& d16 = *outs.front();
  cuda_check(cudaDeviceSynchronize(), "kernels");
  std::vector<uint16_t> out(static_cast<size_t>(n));
  d16.download(out.data(), out.size() * 2);
  const BiasGeluOracle& oracle = BiasGeluOracle::cuda(d);
  const unsigned workers = worker_count();
  std::vector<MismatchLog> logs(workers, MismatchLog("bias_gelu_tanh", d));
  run_workers(workers, [&](unsigned w) {
    for (int64_t r = w; r < rows; r += workers)
      for (int64_t c = 0; c < width; ++c) {
        const int64_t i = r * width + c;
        const uint16_t x = pattern_bits(seed, uint64_t(i)), expected = oracle(x, bias[size_t(c)]);
        if (out[size_t(i)] != expected)
          logs[w].record("r=" + std::to_string(r) + ",c=" + std::to_string(c), x, bias[size_t(c)], out[size_t(i)],
                         expected);
      }
  });
  MismatchLog log("bias_gelu_tanh", d);
  for (const auto& l : logs) log.merge(l);
  FUSEPROOF_EXPECT_CLEAN(log, uint64_t(n));
  DeviceMismatch recs[4];
  for (size_t k = 1; k < runs.size(); ++k)
    EXPECT_EQ(count_mismatches(d16.u16(), outs[k]->u16(), n, recs, 4), 0u)
        << "direct math 16 B and " << gelu_math_name(runs[k].m) << " " << int(runs[k].v) << " B differ";
}

FUSEPROOF_BOTH_DTYPES(Cuda, BitExactVsReference_RandomShapes, random_shapes)
FUSEPROOF_BOTH_DTYPES(Cuda, BitExactVsReference_InPlace, in_place)
FUSEPROOF_BOTH_DTYPES(Cuda, BitExactVsReference_InPlaceRingRefills, in_place_ring_refills)
FUSEPROOF_BOTH_DTYPES(Cuda, PdlOrdering_ProducerThenFused, pdl_ordering)
FUSEPROOF_BOTH_DTYPES(Cuda, NegativeControl_PdlWithoutWaitReadsStale, pdl_without_wait_reads_stale)
FUSEPROOF_BOTH_DTYPES(Cuda, BitExactVsReference_MoreThan2To31Elements, more_than_2_31_elements)

}  // namespace
}  // namespace fuseproof::test
