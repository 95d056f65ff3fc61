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

// --- The bulk ring's mbarriers and bulk copy (PTX ISA: mbarrier, cp.async.bulk; sm_90+).

__device__ __forceinline__ uint32_t shared_address(const void* p) {
  return uint32_t(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(arrivals) : "memory");
}

/// Spins until the barrier's phase of parity `parity` has completed.
__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
        : "=r"(done)
        : "r"(shared_address(bar)), "r"(parity)
        : "memory");
  } while (!done);
}

__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(bar)) : "memory");
}

/// Orders this thread's shared-memory accesses through the generic proxy (ld.shared) before later ones through the
/// async proxy (the bulk copies). Without it a bulk copy may refill a slot before a consumer's reads of it have been
/// performed, although the mbarriers say the slot is free: the GPU tests caught exactly that on an H200 (a few
/// hundred elements in 10^9 computed from the chunk S turns later; docs/PERFORMANCE.md, The bulk ring).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/// The producer's arrival on a "full" barrier, announcing the bytes its bulk copy will complete.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)), "r"(bytes)
               : "memory");
}

/// `bytes` (a multiple of 16) from global `src` to shared `dst` (both 16-byte aligned) by the TMA; completes on `bar`.
__device__ __forceinline__ void bulk_copy_to_shared(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   shared_address(dst)),
               "l"(src), "r"(bytes), "r"(shared_address(bar))
               : "memory");
}

/// The ring's slots and barriers, after the table in the block's shared memory.
struct Ring {
  uint16_t* slots;  ///< kBulkStages slots of kChunkVectors vectors
  uint64_t* full;   ///< per slot: the bulk copy has landed (1 arrival + the bytes)
  uint64_t* empty;  ///< per slot: every consumer warp has its vectors in registers (kConsumers / 32 arrivals)
  uint64_t* table;  ///< the table's bulk copy has landed (1 arrival + the bytes; one phase per launch)
};

template <class P>
__device__ __forceinline__ Ring ring_of(uint4* smem) {
  auto* base = reinterpret_cast<unsigned char*>(smem) + policy_table_bytes<P>();
  Ring r;
  r.slots = reinterpret_cast<uint16_t*>(base);
  r.full = reinterpret_cast<uint64_t*>(base + P::kRingBytes);
  r.empty = r.full + P::kBulkStages;
  r.table = r.empty + P::kBulkStages;
  return r;
}

/// The producer lane initialises the ring's and the table's barriers, visible to the bulk copies (async proxy) and,
/// after the block's barrier that follows, to the consumers.
template <class P>
__device__ __forceinline__ void ring_init(const Ring& r) {
  if (threadIdx.x == P::kConsumers) {
    for (int s = 0; s < P::kBulkStages; ++s) {
      mbarrier_init(&r.full[s], 1);
      mbarrier_init(&r.empty[s], P::kConsumers / 32);
    }
    mbarrier_init(r.table, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
}

/// The producer lane's bulk copy of the policy's GELU table (global, written by a synchronous fill before any launch
/// could use it) into the start of shared memory; it completes on r.table. It reads nothing the previous kernel on the
/// stream writes, so it is issued BEFORE pdl_wait, and, being the TMA's, it costs the consumers no instructions: they
/// staged the table with 16-byte loads before (8 per thread for the full table), then waited at a block barrier before
/// the first chunk was even requested.
template <class P>
__device__ __forceinline__ void ring_stage_table(const Ring& r, const uint16_t* table, void* smem) {
  static_assert(P::Table::kBytes % 16 == 0 && P::Table::kBytes < (1 << 20), "one bulk copy, one mbarrier tx count");
  if (threadIdx.x == P::kConsumers) {
    mbarrier_arrive_expect_tx(r.table, uint32_t(P::Table::kBytes));
    bulk_copy_to_shared(smem, table, uint32_t(P::Table::kBytes), r.table);
  }
}

/// The block's chunks b, b + grid, ... of bulk_plan's plan through the ring: the producer lane waits for a slot to be
/// empty, then bulk copies the next chunk of x into it; each consumer waits once for the table, then per chunk loads
/// its vectors' bias, waits for its slot to be full, takes its vectors into registers, fences its reads against the
/// async proxy and frees the slot (one arrival per warp), and computes and stores them. Chunk k uses slot k mod S in
/// phase (k / S) mod 2; a fresh "empty" barrier counts as complete in the phase before its first, so the first S
/// copies do not wait.
template <class P>
__device__ __forceinline__ void bulk_ring_loop(const BodyArgs& a, const Ring& r, const uint16_t* table) {
  constexpr int kStages = P::kBulkStages;
  constexpr int kElems = P::kVectorBytes / 2;
  const BulkPlan plan = bulk_plan<P>(a.n_vectors, gridDim.x);
  const int t = int(threadIdx.x);
  if (t >= P::kConsumers) {
    if (t == P::kConsumers) {
      uint32_t k = 0;
      for (int64_t c = blockIdx.x; c < plan.n_chunks; c += gridDim.x, ++k) {
        const uint32_t s = k % kStages, phase = (k / kStages) & 1u;
        mbarrier_wait(&r.empty[s], phase ^ 1u);
        fence_proxy_async_shared();  // the consumers fenced their reads before arriving; this orders the wait too
        const int64_t left = a.n_vectors - c * plan.chunk;
        const uint32_t bytes = uint32_t((left < plan.chunk ? left : plan.chunk) * P::kVectorBytes);
        mbarrier_arrive_expect_tx(&r.full[s], bytes);
        bulk_copy_to_shared(r.slots + s * P::kChunkVectors * kElems, a.x + c * plan.chunk * kElems, bytes,
                            &r.full[s]);
      }
    }
    return;
  }
  BulkColumns cols = bulk_columns<P>(a, plan.chunk, blockIdx.x, gridDim.x, t);
  mbarrier_wait(r.table, 0);
  uint32_t k = 0;
  for (int64_t c = blockIdx.x; c < plan.n_chunks; c += gridDim.x, ++k) {
    const uint32_t s = k % kStages, phase = (k / kStages) & 1u;
    bias_gelu_tanh_bulk_consume<P>(
        a, table, r.slots + s * P::kChunkVectors * kElems, c * plan.chunk, plan.chunk, t, cols,
        [&] { mbarrier_wait(&r.full[s], phase); },
        [&] {
          fence_proxy_async_shared();  // every lane's reads of the slot, before the arrival that frees it
          __syncwarp();
          if ((t & 31) == 0) mbarrier_arrive(&r.empty[s]);
        });
  }
}

/// The kernel. Direct math: wait for the previous kernel (PDL), one grid-stride loop. A table: its barriers, the
/// table's bulk copy (before the wait: under PDL it overlaps the previous kernel's tail), the wait, the ring. Then the
/// trigger.
template <class P>
__global__ void __launch_bounds__(P::kThreads, P::kLaunchMinBlocks)
    bias_gelu_tanh_kernel(BodyArgs args, const uint16_t* __restrict__ table, int flags) {
  static_assert(std::is_void_v<typename P::Table> == (P::kBulkStages == 0), "a table is read through the bulk ring");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 1000
  if constexpr (P::kWideOnlyFromSm100 && P::kVectorBytes == 32) {
    __trap();  // never launched here (table_access_bytes): no code, so no registers spilled for nothing
    return;
  }
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
  if constexpr (P::kBulkStages > 0) {
    __trap();  // never launched here (bias_gelu_tanh_cuda_table_check): the bulk copies and mbarriers are sm_90's
    return;
  }
#endif
  extern __shared__ uint4 smem[];
  if constexpr (P::kBulkStages > 0) {
    const Ring r = ring_of<P>(smem);
    ring_init<P>(r);
    __syncthreads();
    ring_stage_table<P>(r, table, smem);
    pdl_wait(flags);
    bulk_ring_loop<P>(args, r, reinterpret_cast<const uint16_t*>(smem));
  } else {
    pdl_wait(flags);
    const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const int64_t stride = int64_t(gridDim.x) * blockDim.x;
    bias_gelu_tanh_thread<P>(args, nullptr, first, stride);
  }
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
