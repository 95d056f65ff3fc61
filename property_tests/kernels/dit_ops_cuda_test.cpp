// dit_ops_cuda_test.cpp: the built-in CUDA kernels of gated_residual and modulate: the hand-derived bit patterns, bit
// equality with the CPU emulation over seeded patterns and group sizes, a call above 2^31 elements (64-bit indices),
// and rejections that touch no device memory. Every case skips, reported as skipped, without a usable device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "property_tests/kernels/cuda_test_kernels.h"
#include "property_tests/kernels/dit_ops_cases.h"
#include "property_tests/kernels/dit_ops_testbed.h"

namespace fuseproof::test {
namespace {

using kernel::Contract;
using kernel::FamilyOp;

/// A stream of its own (the ABI: never the legacy default stream).
struct Stream {
  cudaStream_t s = nullptr;
  Stream() { cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~Stream() { cudaStreamDestroy(s); }
};

/// Runs the CUDA kernel over device buffers and waits; "" or the refusal.
std::string run_cuda(FamilyOp op, Contract contract, fuseproof_call_t c, const Stream& s) {
  c.stream = s.s;
  const std::string why = dit_run(dit_launch(op, contract, true), c);
  cuda_check(cudaStreamSynchronize(s.s), "cudaStreamSynchronize");
  return why;
}

TEST(Cuda_DitOps, DecisiveBitPatterns) {
  FUSEPROOF_REQUIRE_CUDA();
  constexpr int64_t kRows = 2, kW = 8, kN = kRows * kW;
  Stream s;
  int checked = 0;
  for (const Case& k : kCases)
    for (Contract contract : {Contract::kEager, Contract::kFma}) {
      DeviceBuffer x(kN * 2), a(kN * 2), b(kN * 2), out(kN * 2);
      const std::vector<uint16_t> hx(kN, k.x), ha(kN, k.a), hb(kN, k.b);
      x.upload(hx.data(), kN * 2);
      a.upload(ha.data(), kN * 2);
      b.upload(hb.data(), kN * 2);
      out.poison();
      ASSERT_EQ(run_cuda(k.op, contract, dit_call(k.dtype, kRows, kW, 1, out.get(), x.get(), a.get(), b.get()), s), "");
      std::vector<uint16_t> got(kN);
      out.download(got.data(), kN * 2);
      const uint16_t want = contract == Contract::kFma ? k.fma : k.eager;
      for (uint16_t g : got)
        ASSERT_EQ(g, want) << op_name(k.op) << " " << dtype_name(k.dtype) << " " << kernel::contract_name(contract)
                           << std::hex << " x=0x" << k.x << " in1=0x" << k.a << " in2=0x" << k.b << " => 0x" << g
                           << " expected 0x" << want << " (" << k.why << ")";
      ++checked;
    }
  std::printf("In %d cases, no errors found in the CUDA gated_residual and modulate (eager, fma).\n", checked);
}

/// Seeded patterns of every bit (pattern_bits), several group sizes, both contracts: the device's bits are the
/// emulation's (the same element code, and no contraction of the eager steps on the device).
void matches_the_emulation(int32_t dtype) {
  FUSEPROOF_REQUIRE_CUDA();
  constexpr int64_t kRows = 48, kW = 4104;  // width 513 vectors: rows do not fall on a block boundary
  constexpr int64_t kN = kRows * kW;
  Stream s;
  DeviceBuffer x(kN * 2), a(kN * 2), b(kN * 2), out(kN * 2);
  fill_pattern(x.u16(), kN, 11);
  fill_pattern(a.u16(), kN, 12);
  fill_pattern(b.u16(), kN, 13);
  std::vector<uint16_t> hx(kN), ha(kN), hb(kN), got(kN), want(kN);
  x.download(hx.data(), kN * 2);
  a.download(ha.data(), kN * 2);
  b.download(hb.data(), kN * 2);
  uint64_t cases = 0;
  for (FamilyOp op : {kGated, kModulate})
    for (Contract contract : {Contract::kEager, Contract::kFma})
      for (int64_t g : {int64_t(1), int64_t(3), int64_t(16), kRows}) {
        out.poison();
        ASSERT_EQ(run_cuda(op, contract, dit_call(dtype, kRows, kW, g, out.get(), x.get(), a.get(), b.get()), s), "");
        out.download(got.data(), kN * 2);
        ASSERT_EQ(dit_run(dit_launch(op, contract),
                          dit_call(dtype, kRows, kW, g, want.data(), hx.data(), ha.data(), hb.data())),
                  "");
        for (int64_t i = 0; i < kN; ++i)
          ASSERT_EQ(got[size_t(i)], want[size_t(i)])
              << op_name(op) << " " << dtype_name(dtype) << " " << kernel::contract_name(contract) << " group_rows "
              << g << " [r=" << i / kW << ",c=" << i % kW << "]";
        cases += uint64_t(kN);
      }
  std::printf("In %llu cases, no errors found in the CUDA gated_residual and modulate %s against the emulation.\n",
              static_cast<unsigned long long>(cases), dtype_name(dtype));
}
TEST(Cuda_DitOps_bf16, MatchesTheEmulation) { matches_the_emulation(kBf); }
TEST(Cuda_DitOps_fp16, MatchesTheEmulation) { matches_the_emulation(kFp); }

/// The envelope's call above 2^31 elements (419,431 x 5,120 = 2,147,486,720), gated_residual with one gate row per
/// output row, so that every buffer's indices pass 2^31: the last rows are checked against the element function.
TEST(Cuda_DitOps_bf16, AboveTwoToThe31Elements) {
  FUSEPROOF_REQUIRE_CUDA();
  constexpr int64_t kRows = 419431, kW = 5120, kN = kRows * kW;
  static_assert(kN > (int64_t(1) << 31));
  size_t free_bytes = 0, total = 0;
  cuda_check(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
  if (free_bytes < size_t(kN) * 2 * 4 + (size_t(1) << 30))
    GTEST_SKIP() << "needs " << ((kN * 8) >> 30) << " GiB of device memory, " << (free_bytes >> 30) << " GiB free";
  Stream s;
  DeviceBuffer x(size_t(kN) * 2), gate(size_t(kN) * 2), y(size_t(kN) * 2), out(size_t(kN) * 2);
  fill_pattern(x.u16(), kN, 21);
  fill_pattern(gate.u16(), kN, 22);
  fill_pattern(y.u16(), kN, 23);
  out.poison();
  ASSERT_EQ(run_cuda(kGated, Contract::kEager, dit_call(kBf, kRows, kW, 1, out.get(), x.get(), gate.get(), y.get()), s),
            "");
  constexpr int64_t kTail = 64 * kW;  // the last 64 rows, all above 2^31
  std::vector<uint16_t> got(kTail);
  out.download(got.data(), kTail * 2, size_t(kN - kTail) * 2);
  for (int64_t i = 0; i < kTail; ++i) {
    const uint64_t k = uint64_t(kN - kTail + i);
    const uint16_t want = kernel::family_element<kGated, kernel::Half::kBf16, Contract::kEager>(
        pattern_bits(21, k), pattern_bits(22, k), pattern_bits(23, k));
    ASSERT_EQ(got[size_t(i)], want) << "element " << k;
  }
  uint16_t first = 0;
  out.download(&first, 2);
  EXPECT_EQ(first, (kernel::family_element<kGated, kernel::Half::kBf16, Contract::kEager>(
                       pattern_bits(21, 0), pattern_bits(22, 0), pattern_bits(23, 0))));
}

/// A rejected call on device pointers writes nothing and leaves no CUDA error pending.
TEST(Cuda_DitOps, RejectionsTouchNoDeviceMemory) {
  FUSEPROOF_REQUIRE_CUDA();
  constexpr int64_t kRows = 8, kW = 64, kN = kRows * kW;
  Stream s;
  DeviceBuffer x(kN * 2), a(kN * 2), b(kN * 2), out(kN * 2);
  for (FamilyOp op : {kGated, kModulate}) {
    out.poison();
    fuseproof_call_t c = dit_call(kFp, kRows, kW, 3, out.get(), x.get(), a.get(), b.get());
    EXPECT_EQ(run_cuda(op, Contract::kEager, c, s),
              std::string(op_name(op)) + ": rows must be a multiple of group_rows (3), got 8");
    c = dit_call(kFp, kRows, kW, 4, out.get(), x.get(), a.get(), b.get());
    c.inputs[1].stride[0] = 0;
    EXPECT_NE(run_cuda(op, Contract::kEager, c, s), "");
    std::vector<uint8_t> h(kN * 2);
    out.download(h.data(), h.size());
    for (size_t i = 0; i < h.size(); ++i) ASSERT_EQ(h[i], 0xA5) << "byte " << i << " of out changed";
    EXPECT_EQ(pending_cuda_error(), "cudaSuccess");
  }
}

}  // namespace
}  // namespace fuseproof::test
