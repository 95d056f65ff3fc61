// bias_gelu_tanh.cu: the fused bias + GELU(tanh) CUDA kernel, one template over the math policies of
// bias_gelu_tanh_policies.h (vectorized, grid-stride, 64-bit offsets, PDL on sm_90+), and the GELU-table fill kernel.
// Geometry, caches and launch: bias_gelu_tanh_cuda_launch.cpp.
#include <cuda_runtime.h>

#include "bias_gelu_tanh_cuda.h"
#include "bias_gelu_tanh_policies.h"

namespace fuseproof::kernel {

namespace {

/// griddepcontrol.wait under PDL: a dependent launch may start while the previous kernel on the stream still writes
/// x or bias, so no global read of them may come before it.
__device__ __forceinline__ void pdl_wait(int flags) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (flags & kFlagWait) asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

/// griddepcontrol.launch_dependents after the last store: the next kernel on the stream may start its prologue.
__device__ __forceinline__ void pdl_trigger(int flags) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (flags & kFlagTrigger) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/// Copies the policy's GELU table into shared memory, 16 bytes per thread per step. It reads only the table, which a
/// synchronous fill wrote before any launch could use it, so it runs BEFORE pdl_wait: under PDL it overlaps the
/// previous kernel's tail. Direct math stages nothing.
template <class P>
__device__ __forceinline__ void stage_table(const uint16_t* __restrict__ table, uint4* smem) {
  if constexpr (!std::is_void_v<typename P::Table>) {
    constexpr int kVecs = P::Table::kBytes / 16;
    const uint4* src = reinterpret_cast<const uint4*>(table);
#pragma unroll
    for (int i = 0; i < (kVecs + P::kThreads - 1) / P::kThreads; ++i) {
      const int k = i * P::kThreads + int(threadIdx.x);
      if (kVecs % P::kThreads == 0 || k < kVecs) smem[k] = __ldg(src + k);
    }
  }
}

/// The kernel: stage the table (if any), wait for the previous kernel (PDL), one grid-stride loop, trigger.
template <class P>
__global__ void __launch_bounds__(P::kThreads, P::kLaunchMinBlocks)
    bias_gelu_tanh_kernel(BodyArgs args, const uint16_t* __restrict__ table, int flags) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 1000
  if constexpr (P::kWideOnlyFromSm100 && P::kVectorBytes == 32) {
    __trap();  // never launched here (range_access_bytes): no code, so no registers spilled for nothing
    return;
  }
#endif
  extern __shared__ uint4 smem_table[];
  stage_table<P>(table, smem_table);
  pdl_wait(flags);
  if constexpr (!std::is_void_v<typename P::Table>) __syncthreads();
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  bias_gelu_tanh_thread<P>(args, reinterpret_cast<const uint16_t*>(smem_table), first, stride);
  pdl_trigger(flags);
}

/// Entry i = gelu_tanh_half<D>(T::pattern(i)): the direct kernel's own GELU, evaluated once per table entry.
template <Half D, class T>
__global__ void __launch_bounds__(kFillBlockThreads) gelu_table_fill_kernel(uint16_t* table) {
  const int i = int(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < T::kEntries) table[i] = gelu_tanh_half<D>(T::pattern(uint32_t(i)));
}

}  // namespace

const void* bias_gelu_tanh_kernel_for(Half dtype, int vector_bytes, TableKind kind) {
  return with_policy(dtype, vector_bytes, kind, [](auto tag) {
    return reinterpret_cast<const void*>(&bias_gelu_tanh_kernel<typename decltype(tag)::type>);
  });
}

namespace {

/// The fill kernel of the table that policy P of format D reads (nullptr for direct math).
template <Half D>
const void* fill_kernel_for(TableKind kind) {
  return with_policy_for<D>(16, kind, [](auto tag) -> const void* {
    using P = typename decltype(tag)::type;
    if constexpr (std::is_void_v<typename P::Table>) return nullptr;
    else return reinterpret_cast<const void*>(&gelu_table_fill_kernel<D, typename P::Table>);
  });
}

}  // namespace

const void* gelu_table_fill_kernel_for(Half dtype, TableKind kind) {
  return dtype == Half::kBf16 ? fill_kernel_for<Half::kBf16>(kind) : fill_kernel_for<Half::kFp16>(kind);
}

}  // namespace fuseproof::kernel
