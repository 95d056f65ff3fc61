// cuda_test_kernels.h: device helpers for the GPU tests (fill, transpose, compare, PDL producer); host-callable C++.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/cuda_device.h"

namespace fuseproof::test {

/// Skips the current test, loudly, when no CUDA device is usable (reported as skipped by ctest, never as passed).
#define FUSEPROOF_REQUIRE_CUDA()                                                                              \
  do {                                                                                                        \
    if (!::fuseproof::cuda_device_available())                                                               \
      GTEST_SKIP() << "no CUDA device in this process (needs a GPU and driver; this build has CUDA="         \
                   << (FUSEPROOF_HAVE_CUDA ? "on" : "off") << ")";                                            \
  } while (0)

/// Throws std::runtime_error naming `what` and the CUDA error when `status` (a cudaError_t) is not cudaSuccess.
void cuda_check(int status, const char* what);

/// Owning device allocation (cudaMalloc, 256-byte aligned); 0xA5 poison on request.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  uint16_t* u16() const { return static_cast<uint16_t*>(p_); }
  void* get() const { return p_; }
  size_t bytes() const { return bytes_; }
  void poison(uint8_t byte = 0xA5);
  void upload(const void* host, size_t bytes, size_t offset = 0);
  void download(void* host, size_t bytes, size_t offset = 0) const;

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

/// Stateless 16-bit pattern of element k in run `seed` (splitmix64), the same on host and device.
uint16_t pattern_bits(uint64_t seed, uint64_t k);

/// x[r * 65536 + c] = r and bias[c] = c: every (x, bias) pair once, with out[r, c] = f(x = r, bias = c).
void fill_domain(uint16_t* x, uint16_t* bias);
/// p[k] = pattern_bits(seed, k) for k < n.
void fill_pattern(uint16_t* p, int64_t n, uint64_t seed);
/// staging[j * 65536 + r] = out[r * 65536 + first + j] for j < count: the domain's canonical order (bias outer).
void transpose_domain_chunk(const uint16_t* out, uint16_t* staging, uint32_t first, uint32_t count, void* stream);

/// One differing element as the device saw it.
struct DeviceMismatch {
  uint64_t index;
  uint16_t got, expected;
};
/// Counts a[i] != b[i] for i < n on the device and keeps up to `max_records` of them (in no particular order).
uint64_t count_mismatches(const uint16_t* a, const uint16_t* b, int64_t n, DeviceMismatch* records, int max_records);

/// The PDL producer: triggers its dependents first, sleeps about `spin_ns`, then writes
/// x[k] = pattern_bits(seed, k) for k < n; launched plainly (no PDL attribute) with `blocks` x 256 threads.
void launch_pdl_producer(uint16_t* x, int64_t n, uint64_t seed, uint32_t spin_ns, int blocks, void* stream);

/// cudaGetErrorName(cudaPeekAtLastError()): "cudaSuccess" when nothing is pending.
std::string pending_cuda_error();

}  // namespace fuseproof::test
