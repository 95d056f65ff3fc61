// bias_gelu_tanh_cuda_exhaustive_test.cpp: the CUDA kernel at every valid width up to 65,536, and over all 2^32
// (x, bias) pairs against the golden digest (golden/sm_90/digests.json) and the reference, per dtype and policy.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common/golden_library.h"
#include "common/sha256.h"
#include "property_tests/kernels/bias_gelu_tanh_testbed.h"
#include "property_tests/kernels/cuda_test_kernels.h"
#include "property_tests/support/golden_paths.h"
#include "reference/sweep_row.h"
#include "common/parallel_for.h"

namespace fuseproof::test {
namespace {

constexpr Device kCuda0{DeviceKind::kCuda, 0};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// Every multiple of the vector's element count up to 65,536 with 1-3 rows. Each width writes its own region of one
/// poisoned output buffer, launched from the last region to the first so that a write past a region's end lands in
/// one already written and is caught; one copy back, then a parallel host check against the reference.
void every_valid_width(ScalarType t, VectorPolicy v, GeluMath m) {
  FUSEPROOF_REQUIRE_CUDA();
  const ref::Dtype d = ref_dtype(t);
  constexpr int64_t kMaxWidth = 65536;
  const int64_t elems = bias_gelu_tanh_vector_elems(t, v);
  std::vector<uint16_t> x(static_cast<size_t>(3 * kMaxWidth)), bias(static_cast<size_t>(kMaxWidth));
  fill_half_bits(x.data(), x.size(), d, 5);
  fill_half_bits(bias.data(), bias.size(), d, 6);
  struct Region {
    int64_t width, rows, offset;
  };
  std::vector<Region> regions;
  int64_t total = 0;
  for (int64_t w = elems; w <= kMaxWidth; w += elems) {
    const int64_t rows = 1 + (w / elems) % 3;
    regions.push_back({w, rows, total});
    total += rows * w;
  }
  DeviceBuffer dx(x.size() * 2), db(bias.size() * 2), dout(static_cast<size_t>(total + 4096) * 2);
  dx.upload(x.data(), x.size() * 2);
  db.upload(bias.data(), bias.size() * 2);
  dout.poison();
  const auto t0 = std::chrono::steady_clock::now();
  BiasGeluOptions opt;
  opt.vector = v;
  opt.math = m;
  for (auto it = regions.rbegin(); it != regions.rend(); ++it) {
    const LaunchStatus st = bias_gelu_tanh(contiguous_view(dout.u16() + it->offset, t, {it->rows, it->width}, kCuda0),
                                           contiguous_view(dx.get(), t, {it->rows, it->width}, kCuda0),
                                           contiguous_view(db.get(), t, {it->width}, kCuda0), opt);
    ASSERT_TRUE(st.ok) << "width " << it->width << ": " << st.message;
  }
  cuda_check(cudaDeviceSynchronize(), "kernels");
  const double launch_s = seconds_since(t0);
  std::vector<uint16_t> out(static_cast<size_t>(total + 4096));
  dout.download(out.data(), out.size() * 2);
  const BiasGeluOracle& oracle = BiasGeluOracle::cuda(d);
  const unsigned workers = worker_count();
  std::vector<MismatchLog> logs(workers, MismatchLog("bias_gelu_tanh", d));
  run_workers(workers, [&](unsigned w) {
    for (size_t k = w; k < regions.size(); k += workers) {
      const Region& g = regions[k];
      MismatchLog& log = logs[w];
      for (int64_t r = 0; r < g.rows; ++r)
        for (int64_t c = 0; c < g.width; ++c) {
          const uint16_t xv = x[size_t(r * g.width + c)], got = out[size_t(g.offset + r * g.width + c)];
          const uint16_t expected = oracle(xv, bias[size_t(c)]);
          if (got != expected)
            log.record("w=" + std::to_string(g.width) + ",r=" + std::to_string(r) + ",c=" + std::to_string(c), xv,
                       bias[size_t(c)], got, expected);
        }
    }
  });
  MismatchLog log("bias_gelu_tanh", d);
  for (const auto& l : logs) log.merge(l);
  EXPECT_TRUE(std::all_of(out.begin() + total, out.end(), [](uint16_t h) { return h == 0xA5A5; }))
      << "write past the last region";
  std::printf("%s, %s math: %zu widths up to %lld, %lld elements, kernels %.3f s\n", policy_label(t, v).c_str(),
              gelu_math_name(m), regions.size(),
              static_cast<long long>(kMaxWidth), static_cast<long long>(total), launch_s);
  FUSEPROOF_EXPECT_CLEAN(log, uint64_t(total));
}

void every_valid_width_16(ScalarType t) {
  for (GeluMath m : kAllGeluMaths) every_valid_width(t, VectorPolicy::kBytes16, m);
}
void every_valid_width_32(ScalarType t) {
  for (GeluMath m : kAllGeluMaths) every_valid_width(t, VectorPolicy::kBytes32, m);
}

std::string golden_digest(ScalarType t) {
  return test::golden().require_digest("bias_gelu_tanh", ref_dtype(t));
}

/// Runs the kernel over the domain (x: 65,536 x 65,536, bias: 65,536) into `out` and waits; the seconds it took.
/// Throws std::runtime_error with the launcher's message when the launch is rejected.
double run_domain(ScalarType t, const DeviceBuffer& out, const DeviceBuffer& dx, const DeviceBuffer& db,
                  const BiasGeluOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  const LaunchStatus st = bias_gelu_tanh(contiguous_view(out.get(), t, {65536, 65536}, kCuda0),
                                         contiguous_view(dx.get(), t, {65536, 65536}, kCuda0),
                                         contiguous_view(db.get(), t, {65536}, kCuda0), opt);
  if (!st.ok) throw std::runtime_error(st.message);
  cuda_check(cudaDeviceSynchronize(), gelu_math_name(opt.math));
  return seconds_since(t0);
}

/// All 2^32 pairs: x[r, c] = r, bias[c] = c, out transposed on the device into canonical order (bias outer) in chunks
/// of 256 biases, copied back (double-buffered), hashed with SHA-256 and compared with sweep_row of the reference
/// (CUDA tanh model) on the other host threads; then the table kernel's output is compared with it on the device.
void all_pairs_vs_golden(ScalarType t) {
  FUSEPROOF_REQUIRE_CUDA();
  const ref::Dtype d = ref_dtype(t);
  constexpr uint64_t kN = uint64_t(1) << 32;
  constexpr uint32_t kChunk = 256;
  size_t free_b = 0, total_b = 0;
  cuda_check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  if (free_b < kN * 6 + (size_t(1) << 30)) GTEST_SKIP() << "needs 25 GiB of device memory, " << (free_b >> 30) << " free";
  const std::string expected_digest = golden_digest(t);
  DeviceBuffer dx(kN * 2), db(65536 * 2), dout(kN * 2), dtable(kN * 2), staging0(size_t(kChunk) * 65536 * 2),
      staging1(size_t(kChunk) * 65536 * 2);
  fill_domain(dx.u16(), db.u16());
  uint16_t* host[2] = {nullptr, nullptr};
  // Pinned buffers when the machine grants them (a VM may cap locked memory); pageable ones otherwise, which only
  // makes the copies synchronous.
  std::vector<std::vector<uint16_t>> pageable;
  bool pinned = true;
  for (auto& h : host) {
    if (cudaMallocHost(reinterpret_cast<void**>(&h), size_t(kChunk) * 65536 * 2) != cudaSuccess) {
      cudaGetLastError();
      pinned = false;
      pageable.emplace_back(size_t(kChunk) * 65536);
      h = pageable.back().data();
    }
  }
  if (!pinned) std::printf("cudaMallocHost refused: copying through pageable memory\n");
  cudaStream_t stream = nullptr;
  cuda_check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  const std::vector<uint16_t>& table = BiasGeluOracle::cuda(d).table();
  const unsigned workers = std::max(2u, std::thread::hardware_concurrency()) - 1;

  for (VectorPolicy v : {VectorPolicy::kBytes16, VectorPolicy::kBytes32}) {
    const GeluMath m = GeluMath::kDirect;
    dout.poison();
    const auto t0 = std::chrono::steady_clock::now();
    BiasGeluOptions opt;
    opt.vector = v;
    opt.math = m;
    const double kernel_s = run_domain(t, dout, dx, db, opt);

    Sha256 sha;
    MismatchLog log("bias_gelu_tanh", d);
    DeviceBuffer* staging[2] = {&staging0, &staging1};
    cudaEvent_t ready[2];
    for (auto& e : ready) cuda_check(cudaEventCreate(&e), "cudaEventCreate");
    auto enqueue = [&](uint32_t chunk) {
      const int s = chunk & 1;
      transpose_domain_chunk(dout.u16(), staging[s]->u16(), chunk * kChunk, kChunk, stream);
      cuda_check(cudaMemcpyAsync(host[s], staging[s]->get(), size_t(kChunk) * 65536 * 2, cudaMemcpyDeviceToHost, stream),
                 "cudaMemcpyAsync");
      cuda_check(cudaEventRecord(ready[s], stream), "cudaEventRecord");
    };
    constexpr uint32_t kChunks = 65536 / kChunk;
    enqueue(0);
    for (uint32_t chunk = 0; chunk < kChunks; ++chunk) {
      const int s = chunk & 1;
      cuda_check(cudaEventSynchronize(ready[s]), "cudaEventSynchronize");
      if (chunk + 1 < kChunks) enqueue(chunk + 1);  // the other buffer was consumed in the previous round
      const uint16_t* rows = host[s];
      auto hashed = std::async(std::launch::async, [&] { sha.update(rows, size_t(kChunk) * 65536 * 2); });
      std::vector<MismatchLog> logs(workers, MismatchLog("bias_gelu_tanh", d));
      run_workers(workers, [&](unsigned w) {
        std::vector<uint16_t> expected(65536);
        for (uint32_t j = w; j < kChunk; j += workers) {
          const uint16_t b = uint16_t(chunk * kChunk + j);
          ref::sweep_row(d, table.data(), ref::NanPolicy::kCudaCvtRn, b, expected.data());
          const uint16_t* got = rows + size_t(j) * 65536;
          for (uint32_t xb = 0; xb < 65536; ++xb)
            if (got[xb] != expected[xb]) logs[w].record("", uint16_t(xb), b, got[xb], expected[xb]);
        }
      });
      hashed.get();
      for (const auto& l : logs) log.merge(l);
    }
    for (auto& e : ready) cudaEventDestroy(e);
    const std::string got_digest = sha.hex();
    std::printf("%s, %s math: all 2^32 pairs, kernel %.3f s, transpose+copy+SHA-256+reference %.1f s, sha256 %s\n",
                policy_label(t, v).c_str(), gelu_math_name(m), kernel_s, seconds_since(t0) - kernel_s,
                got_digest.c_str());
    EXPECT_EQ(got_digest, expected_digest) << policy_label(t, v) << ", " << gelu_math_name(m)
                                           << " math: digest differs from golden/sm_90/digests.json";
    FUSEPROOF_EXPECT_CLEAN(log, kN);

    // Every table kernel over the same 2^32 pairs, compared on the device with the direct output just checked against
    // the golden digest and the reference: equal everywhere means it passes both checks as well.
    for (GeluMath tm : kAllGeluMaths) {
      if (tm == GeluMath::kDirect) continue;
      dtable.poison();
      opt.math = tm;
      const double table_s = run_domain(t, dtable, dx, db, opt);
      DeviceMismatch recs[8];
      const uint64_t bad = count_mismatches(dtable.u16(), dout.u16(), int64_t(kN), recs, 8);
      MismatchLog table_log("bias_gelu_tanh", d);
      for (uint64_t i = 0; i < bad && i < 8; ++i)
        table_log.record(std::string(gelu_math_name(tm)) + " vs direct", uint16_t(recs[i].index >> 16),
                         uint16_t(recs[i].index & 0xFFFF), recs[i].got, recs[i].expected);
      std::printf("%s, %s math: all 2^32 pairs, kernel %.3f s (with the table build on first use), %llu differ from "
                  "the digest-checked direct output\n",
                  policy_label(t, v).c_str(), gelu_math_name(tm), table_s, static_cast<unsigned long long>(bad));
      if (bad == 0) {
        FUSEPROOF_EXPECT_CLEAN(table_log, kN);
      } else {
        ADD_FAILURE() << gelu_math_name(tm) << " math: " << table_log.report(kN) << "\n(" << bad
                      << " mismatches in all)";
      }
    }
  }
  cudaStreamDestroy(stream);
  if (pinned) for (auto& h : host) cudaFreeHost(h);
}

FUSEPROOF_BOTH_DTYPES(Cuda, BitExactVsReference_EveryValidWidth_16ByteVectors, every_valid_width_16)
FUSEPROOF_BOTH_DTYPES(Cuda, BitExactVsReference_EveryValidWidth_32ByteVectors, every_valid_width_32)
FUSEPROOF_BOTH_DTYPES(Cuda, BitExactVsGoldenDigest_AllPairs, all_pairs_vs_golden)

}  // namespace
}  // namespace fuseproof::test
