// device_slot.h: what the CUDA runners share: FP_CUDA_TRY (a CUDA error as a returned one-line string) and
// DeviceSlot, a device allocation reused while it is large enough.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

/// Returns "<expr>: <CUDA error>" from the enclosing function (which returns std::string) when expr fails.
#define FP_CUDA_TRY(expr)                                                                   \
  do {                                                                                      \
    const cudaError_t fp_e_ = (expr);                                                       \
    if (fp_e_ != cudaSuccess) return std::string(#expr) + ": " + cudaGetErrorString(fp_e_); \
  } while (0)

namespace fuseproof::audit {

/// A device allocation reused from call to call (or batch to batch) while it is large enough: the classes make
/// thousands of calls, and cudaMalloc/cudaFree (which synchronise) per call cost more than the calls.
struct DeviceSlot {
  uint8_t* base = nullptr;
  size_t capacity = 0;
  std::string reserve(size_t bytes) {
    if (capacity >= bytes) return "";
    release();
    FP_CUDA_TRY(cudaMalloc(&base, bytes));
    capacity = bytes;
    return "";
  }
  void release() {
    if (base) cudaFree(base);
    base = nullptr;
    capacity = 0;
  }
  DeviceSlot() = default;
  DeviceSlot(DeviceSlot&& o) noexcept : base(o.base), capacity(o.capacity) { o.base = nullptr, o.capacity = 0; }
  DeviceSlot& operator=(DeviceSlot&&) = delete;
  ~DeviceSlot() { release(); }
};

}  // namespace fuseproof::audit
