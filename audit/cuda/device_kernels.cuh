// device_kernels.cuh: the device helpers the CUDA runners share: fills from the counter generator and their checks,
// the streams class's gate, a one-off guarded device buffer, and the streams and events of one class.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "audit/call_watch.h"
#include "audit/counter_patterns.h"
#include "audit/cuda/device_slot.h"
#include "audit/guarded_image.h"
#include "common/phase_clock.h"

namespace fuseproof::audit {

// Internal linkage: each runner's translation unit has its own copies of the kernels.
namespace {

__global__ void fill_u16(uint16_t* p, size_t n, uint16_t v) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) p[i] = v;
}

__device__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// x[i] = counter_pattern(seed, i) for i < n.
__global__ void fill_counter(uint16_t* x, size_t n, bool bf16, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    x[i] = counter_pattern(bf16, seed, i);
}

/// Counts elements of x that differ from counter_pattern(seed, i).
__global__ void count_changed(const uint16_t* x, size_t n, bool bf16, uint64_t seed, unsigned long long* changed) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    local += x[i] != counter_pattern(bf16, seed, i);
  if (local) atomicAdd(changed, local);
}

/// Counts the elements where a and b differ (an input image after a call against its copy from before it).
__global__ void count_different(const uint16_t* a, const uint16_t* b, size_t n, unsigned long long* changed) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    local += a[i] != b[i];
  if (local) atomicAdd(changed, local);
}

/// out [rows, width] row-major against table[in1 * 65536 + in0], in0 = a[r * a0 + c * a1], in1 = b[r * b0 + c * b1]:
/// counts the differing elements, and flags the expected value of every 61st element (row-major index) in `seen`
/// (65,536 bits), as the host comparison samples the distinct expected outputs.
__global__ void compare_with_table(const uint16_t* out, int64_t rows, int64_t width, const uint16_t* a, int64_t a0,
                                   int64_t a1, const uint16_t* b, int64_t b0, int64_t b1, const uint16_t* table,
                                   unsigned long long* mismatches, unsigned int* seen) {
  unsigned long long local = 0;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y)
    for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < width; c += int64_t(gridDim.x) * blockDim.x) {
      const uint16_t e = table[(size_t(b[r * b0 + c * b1]) << 16) | a[r * a0 + c * a1]];
      const int64_t i = r * width + c;
      local += out[i] != e;
      if (i % 61 == 0) atomicOr(seen + (e >> 5), 1u << (e & 31));
    }
  if (local) atomicAdd(mismatches, local);
}

/// One region of a batched call (CudaRunner::calls_compared): [guard | n data | guard], the guards `fill`, the data
/// by `kind`: 0 counter_pattern(seed, i), 1 weighted_pattern_at(seed, i) over `special`, 2 the constant `fill`.
__global__ void fill_region(uint16_t* base, size_t guard, size_t n, uint16_t fill, int kind, bool bf16,
                            uint64_t seed, const uint16_t* special, uint64_t specials) {
  const size_t total = 2 * guard + n;
  for (size_t j = blockIdx.x * size_t(blockDim.x) + threadIdx.x; j < total; j += size_t(gridDim.x) * blockDim.x) {
    uint16_t v = fill;
    if (j >= guard && j < guard + n) {
      const size_t i = j - guard;
      if (kind == 0) v = counter_pattern(bf16, seed, i);
      else if (kind == 1) v = weighted_pattern_at(bf16, seed, i, special, specials);
    }
    base[j] = v;
  }
}

/// A 2-input op's grid over its views: a[r * a0 + c * a1] = r, b[r * b0 + c * b1] = col0 + c.
__global__ void write_grid(uint16_t* a, int64_t a0, int64_t a1, uint16_t* b, int64_t b0, int64_t b1, int64_t rows,
                          int64_t width, uint32_t col0) {
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y)
    for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < width; c += int64_t(gridDim.x) * blockDim.x) {
      a[r * a0 + c * a1] = uint16_t(r);
      b[r * b0 + c * b1] = uint16_t(col0 + uint32_t(c));
    }
}

/// write_grid's own check, before the subject runs: counts the view elements that are not the grid's (two views
/// that overlap, or a layout the grid cannot express), so that a block that did not cover its pairs is never passed.
__global__ void count_off_grid(const uint16_t* a, int64_t a0, int64_t a1, const uint16_t* b, int64_t b0, int64_t b1,
                               int64_t rows, int64_t width, uint32_t col0, unsigned long long* off) {
  unsigned long long local = 0;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y)
    for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < width; c += int64_t(gridDim.x) * blockDim.x)
      local += (a[r * a0 + c * a1] != uint16_t(r)) + (b[r * b0 + c * b1] != uint16_t(col0 + uint32_t(c)));
  if (local) atomicAdd(off, local);
}

/// Up to four input views of a call (pointer and strides), for write_witness.
struct Views {
  uint16_t* p[4];
  int64_t s0[4], s1[4];
  int n;
};

/// A stage's pairs written into a call's views (WitnessPairs): element i of [rows, width] is pair p = i (i % pairs
/// past them); input q is b's tuple where b_bits has bit q, else a's.
__global__ void write_witness(Views v, int64_t rows, int64_t width, uint64_t pairs, uint32_t na, uint32_t b_first,
                              const uint16_t* a, const uint16_t* b, const uint32_t* b_index, uint32_t b_bits) {
  const uint64_t total = uint64_t(rows) * uint64_t(width);
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < total; i += uint64_t(gridDim.x) * blockDim.x) {
    const uint64_t p = i < pairs ? i : i % pairs;
    const uint32_t ia = uint32_t(p % na), ib = b_index[b_first + p / na];
    const int64_t r = int64_t(i / uint64_t(width)), c = int64_t(i % uint64_t(width));
    for (int q = 0; q < v.n; ++q)
      v.p[q][r * v.s0[q] + c * v.s1[q]] = (b_bits >> q & 1u) ? b[size_t(ib) * 4 + q] : a[size_t(ia) * 4 + q];
  }
}

/// A stage's outputs against its table: out[i] for i < pairs with table[b_index[b_first + i / na] * 65536 + i % na];
/// counts the differences and flags the expected value of every index_every-th element in `seen`.
__global__ void compare_pairs(const uint16_t* out, uint64_t pairs, uint32_t na, uint32_t b_first,
                              const uint32_t* b_index, const uint16_t* table, int64_t index_every,
                              unsigned long long* mismatches, unsigned int* seen) {
  __shared__ unsigned int bits[65536 / 32];
  for (int i = threadIdx.x; i < 65536 / 32; i += blockDim.x) bits[i] = 0;
  __syncthreads();
  unsigned long long local = 0;
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < pairs; i += uint64_t(gridDim.x) * blockDim.x) {
    const uint16_t e = table[(size_t(b_index[b_first + i / na]) << 16) | size_t(i % na)];
    local += out[i] != e;
    if (i % uint64_t(index_every) == 0) atomicOr(bits + (e >> 5), 1u << (e & 31));
  }
  if (local) atomicAdd(mismatches, local);
  __syncthreads();
  for (int i = threadIdx.x; i < 65536 / 32; i += blockDim.x)
    if (bits[i]) atomicOr(seen + i, bits[i]);
}

/// Bytes of p[0, n) that are no longer `fill`'s (little-endian words): a guard's writes, counted as the host does.
__global__ void count_fill_bytes_changed(const uint16_t* p, size_t n, uint16_t fill, unsigned long long* changed) {
  unsigned long long local = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    local += ((p[i] & 0xFFu) != (fill & 0xFFu)) + ((p[i] >> 8) != (fill >> 8));
  if (local) atomicAdd(changed, local);
}

/// out [rows, width] row-major against table[in1 * 65536 + in0] (the views as in compare_with_table): counts the
/// differing elements, and flags in `seen` (65,536 bits) the expected value of each element the Sampling picks,
/// through a bitmap in shared memory, so that sampling every element costs no global atomic per element.
__global__ void compare_sampled(const uint16_t* out, int64_t rows, int64_t width, const uint16_t* a, int64_t a0,
                                int64_t a1, const uint16_t* b, int64_t b0, int64_t b1, const uint16_t* table,
                                int64_t row_every, int64_t index_every, unsigned long long* mismatches,
                                unsigned int* seen) {
  __shared__ unsigned int bits[65536 / 32];
  for (int i = threadIdx.x; i < 65536 / 32; i += blockDim.x) bits[i] = 0;
  __syncthreads();
  unsigned long long local = 0;
  for (int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const bool row_sampled = r % row_every == 0;
    for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < width; c += int64_t(gridDim.x) * blockDim.x) {
      const uint16_t e = table[(size_t(b[r * b0 + c * b1]) << 16) | a[r * a0 + c * a1]];
      const int64_t i = r * width + c;
      local += out[i] != e;
      if (row_sampled && i % index_every == 0) atomicOr(bits + (e >> 5), 1u << (e & 31));
    }
  }
  if (local) atomicAdd(mismatches, local);
  __syncthreads();
  for (int i = threadIdx.x; i < 65536 / 32; i += blockDim.x)
    if (bits[i]) atomicOr(seen + i, bits[i]);
}

/// The streams class's gate: spins `ns` on the origin stream while the calls are enqueued behind it.
__global__ void spin_ns(uint64_t ns) {
  const uint64_t t0 = global_ns();
  while (global_ns() - t0 < ns) {
  }
}

/// A one-off device buffer of guard + data + guard for a large call.
struct DeviceGuarded {
  uint8_t* base = nullptr;
  size_t bytes = 0;
  std::string alloc(size_t elems, uint16_t fill, cudaStream_t s) {
    bytes = (2 * kGuardElems + elems) * 2;
    FP_CUDA_TRY(cudaMalloc(&base, bytes));
    fill_u16<<<256, 256, 0, s>>>(reinterpret_cast<uint16_t*>(base), bytes / 2, fill);
    FP_CUDA_TRY(cudaGetLastError());
    return "";
  }
  uint16_t* data() const { return reinterpret_cast<uint16_t*>(base + kGuardElems * 2); }
  /// Guard bytes (head and tail around `elems`) that are no longer `fill`.
  std::string guard_changes(size_t elems, uint16_t fill, uint64_t* count) const {
    std::vector<uint8_t> head(kGuardElems * 2), tail(bytes - kGuardElems * 2 - elems * 2);
    FP_CUDA_TRY(cudaMemcpy(head.data(), base, head.size(), cudaMemcpyDeviceToHost));
    FP_CUDA_TRY(cudaMemcpy(tail.data(), base + kGuardElems * 2 + elems * 2, tail.size(), cudaMemcpyDeviceToHost));
    const uint8_t f[2] = {uint8_t(fill & 0xFF), uint8_t(fill >> 8)};
    for (size_t i = 0; i < head.size(); ++i) *count += head[i] != f[i & 1];
    for (size_t i = 0; i < tail.size(); ++i) *count += tail[i] != f[i & 1];  // data ends on an even byte
    return "";
  }
  ~DeviceGuarded() {
    if (base) cudaFree(base);
  }
};

/// A large call's inputs made on the device: buffer k of elems[k] elements between guards of input_guard_fill(k),
/// its data the counter pattern of seeds[k] (fill_counter), and a counter of the elements a call changed.
struct DeviceInputs {
  std::vector<DeviceGuarded> bufs;
  std::vector<uint8_t*> data;  ///< each buffer's data start
  std::vector<size_t> elems;
  std::vector<uint64_t> seeds;
  bool bf16 = false;
  unsigned long long* changed = nullptr;

  DeviceInputs() = default;
  DeviceInputs(const DeviceInputs&) = delete;
  DeviceInputs& operator=(const DeviceInputs&) = delete;
  ~DeviceInputs() {
    if (changed) cudaFree(changed);
  }
  /// Allocates and fills every buffer and the counter on `s`, then waits for them.
  std::string make(std::vector<size_t> n, std::vector<uint64_t> seed, bool is_bf16, cudaStream_t s) {
    elems = std::move(n), seeds = std::move(seed), bf16 = is_bf16;
    bufs = std::vector<DeviceGuarded>(elems.size());
    for (size_t k = 0; k < elems.size(); ++k) {
      if (auto e = bufs[k].alloc(elems[k], input_guard_fill(int(k)), s); !e.empty()) return e;
      fill_counter<<<4096, 256, 0, s>>>(bufs[k].data(), elems[k], bf16, seeds[k]);
      FP_CUDA_TRY(cudaGetLastError());
      data.push_back(reinterpret_cast<uint8_t*>(bufs[k].data()));
    }
    FP_CUDA_TRY(cudaMalloc(&changed, sizeof *changed));
    FP_CUDA_TRY(cudaMemsetAsync(changed, 0, sizeof *changed, s));
    FP_CUDA_TRY(cudaStreamSynchronize(s));
    FP_CUDA_TRY(cudaGetLastError());
    return "";
  }
  /// What a call changed, checked where the inputs live: elements that are no longer their pattern, plus guard
  /// elements no longer their fill ((bytes + 1) / 2 per buffer).
  std::string changes(cudaStream_t s, uint64_t* count) const {
    for (size_t k = 0; k < elems.size(); ++k)
      count_changed<<<4096, 256, 0, s>>>(bufs[k].data(), elems[k], bf16, seeds[k], changed);
    FP_CUDA_TRY(cudaGetLastError());
    unsigned long long ch = 0;
    FP_CUDA_TRY(cudaMemcpyAsync(&ch, changed, sizeof ch, cudaMemcpyDeviceToHost, s));
    FP_CUDA_TRY(cudaStreamSynchronize(s));
    *count = ch;
    for (size_t k = 0; k < elems.size(); ++k) {
      uint64_t g = 0;
      if (auto e = bufs[k].guard_changes(elems[k], input_guard_fill(int(k)), &g); !e.empty()) return e;
      *count += (g + 1) / 2;
    }
    return "";
  }
};

/// The subject's call `c` on `s` inside watch_begin(what)/watch_end and the phase "kernel", waited for: *rc and
/// *message are its answer. *subject_fault is true from the call on while a CUDA error would be the subject's; it
/// stays true when one is returned, and is false again after a clean wait.
template <class Plugin>
std::string watched_call(const Plugin& p, const fuseproof_call_t& c, const std::string& what, cudaStream_t s, int* rc,
                         std::string* message, bool* subject_fault) {
  const PhaseClock kernel("kernel");
  watch_begin(what);
  *rc = p.call(c, message);
  *subject_fault = true;
  FP_CUDA_TRY(cudaStreamSynchronize(s));
  FP_CUDA_TRY(cudaGetLastError());
  watch_end();
  *subject_fault = false;
  return "";
}

/// Streams and events made for one class, destroyed with it.
struct StreamSet {
  std::vector<cudaStream_t> streams;
  std::vector<cudaEvent_t> events;
  std::string make(int n_streams, size_t n_events) {
    for (int i = 0; i < n_streams; ++i) {
      streams.push_back(nullptr);
      FP_CUDA_TRY(cudaStreamCreateWithFlags(&streams.back(), cudaStreamNonBlocking));
    }
    for (size_t i = 0; i < n_events; ++i) {
      events.push_back(nullptr);
      FP_CUDA_TRY(cudaEventCreate(&events.back()));
    }
    return "";
  }
  ~StreamSet() {
    for (auto e : events)
      if (e) cudaEventDestroy(e);
    for (auto s : streams)
      if (s) cudaStreamDestroy(s);
  }
};

}  // namespace

}  // namespace fuseproof::audit
