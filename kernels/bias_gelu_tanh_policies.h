// bias_gelu_tanh_policies.h: the kernel's math policies (block size, residency, GELU table, bulk ring, per-vector math)
// and the one dispatch table from (dtype, vector bytes, GELU math) to a policy, shared by the CUDA launch and the CPU
// emulation.
#pragma once

#include <type_traits>

#include "bias_gelu_tanh_body.h"
#include "bias_gelu_tanh_launcher.h"

namespace fuseproof::kernel {

// A policy P gives the one kernel template (kernels/bias_gelu_tanh.cu) and the emulation everything that differs
// between variants:
//   kVectorBytes          bytes per load/store (16 or 32)
//   kThreads              threads per block
//   kLaunchMinBlocks      __launch_bounds__ minimum resident blocks per SM (caps registers per thread; 0: none)
//   kEmulatedBlocksPerSm  resident blocks per simulated SM (the emulation's grid; the device asks the occupancy API)
//   kWideOnlyFromSm100    the 32-byte instance runs only on sm_100+ (before it the launcher splits a 32-byte vector
//                         into two 16-byte ones, table_access_bytes); its pre-sm_100 image is a trap, not code
//   kBulkStages           0: every thread loads its own x (the grid-stride loop); > 0: a bulk ring of that many chunks
//   Table                 the GELU table, bulk copied into shared memory before griddepcontrol.wait (void: none)
//   vec(x, bias, table)   one vector's math

/// Direct math: GELU in registers with CUDA's precise tanhf; 256-thread blocks, 8 per SM, one vector at a time.
/// kRoundSum = false is the emulation's negative control only (never instantiated for the device).
template <Half D, int kBytes, bool kRoundSum = true>
struct DirectMath {
  static constexpr int kVectorBytes = kBytes;
  static constexpr int kThreads = 256;
  static constexpr int kLaunchMinBlocks = 0;  // none: ptxas keeps 32 registers on sm_90 (1 would let it take 56)
  static constexpr int kEmulatedBlocksPerSm = 8;
  static constexpr bool kWideOnlyFromSm100 = false;
  static constexpr int kBulkStages = 0;
  using Table = void;
  FUSEPROOF_HD static HalfVec<kBytes> vec(const HalfVec<kBytes>& x, const HalfVec<kBytes>& b, const uint16_t*) {
    return bias_gelu_tanh_direct_vec<D, kBytes, kRoundSum>(x, b);
  }
};

/// A table's per-vector math. The full table (GeluTable): all 65,536 patterns looked up (128 KiB), no rule. The range
/// table (RangeTable; bias_gelu_tanh_body.h: |x| < 5.5 looked up, the rule above, a warp-uniform lean path, packed
/// selects): 65 KiB bf16, 69 KiB fp16.
template <Half D, int kBytes, class T>
struct TableMath {
  static constexpr int kVectorBytes = kBytes;
  using Table = T;
  FUSEPROOF_HD static HalfVec<kBytes> vec(const HalfVec<kBytes>& x, const HalfVec<kBytes>& b, const uint16_t* t) {
    if constexpr (std::is_same_v<T, GeluTable<D>>) return bias_gelu_tanh_table_vec<D, kBytes>(x, b, t);
    else return bias_gelu_tanh_range_vec<D, kBytes>(x, b, t);
  }
};
template <Half D, int kBytes>
using FullTableMath = TableMath<D, kBytes, GeluTable<D>>;
template <Half D, int kBytes>
using RangeTableMath = TableMath<D, kBytes, RangeTable<D>>;

/// A table math with x brought in by bulk copies (cp.async.bulk, the Tensor Memory Accelerator) into a ring of kStages
/// chunks in shared memory beside the table, so the bytes in flight cost no registers (the register-fed forms of both
/// tables, 64 and 48 bytes per thread in flight, lost to these at every seed shape: docs/PERFORMANCE.md, Variants). One
/// 1,024-thread block per SM: warps 0-30 consume (each thread 32 bytes of every chunk: vectors t and t + 992 at 16
/// bytes), warp 31's first lane produces (bias_gelu_tanh_bulk_consume in bias_gelu_tanh_body.h, the ring in
/// bias_gelu_tanh.cu). A 32-byte vector runs only from sm_100 (before it the launcher moves it as two 16-byte ones).
template <class Math, int kStages>
struct BulkRing : Math {
  static constexpr int kThreads = 1024;
  static constexpr int kLaunchMinBlocks = 1;
  static constexpr int kEmulatedBlocksPerSm = 1;
  static constexpr bool kWideOnlyFromSm100 = true;
  static constexpr int kBulkStages = kStages;
  static constexpr int kConsumers = kThreads - 32;
  static constexpr int kChunkVectorsPerThread = 32 / Math::kVectorBytes;
  static constexpr int64_t kChunkVectors = int64_t(kConsumers) * kChunkVectorsPerThread;
  static constexpr int kRingBytes = kStages * int(kChunkVectors) * Math::kVectorBytes;
  static constexpr int kBarrierBytes = (2 * kStages + 1) * 8;  ///< "full" and "empty" per stage, and the table's
};

/// The full table (128 KiB) and a ring of 3 x 31,744 bytes: 221 KiB of the 227 a block may have.
template <Half D, int kBytes>
using FullTableBulk = BulkRing<FullTableMath<D, kBytes>, 3>;
/// The range table (65-69 KiB) and a ring of 4 x 31,744 bytes (193 KiB in all).
template <Half D, int kBytes>
using RangeTableBulk = BulkRing<RangeTableMath<D, kBytes>, 4>;

/// Bytes of a policy's GELU table (0 for direct math).
template <class P>
constexpr int policy_table_bytes() {
  if constexpr (std::is_void_v<typename P::Table>) return 0;
  else return P::Table::kBytes;
}

/// Bytes of shared memory a policy's block holds: its table, then (bulk ring) the ring and its mbarriers. Every table
/// size is a multiple of 16, so the ring starts 16-byte aligned as cp.async.bulk requires.
template <class P>
constexpr int policy_smem_bytes() {
  if constexpr (P::kBulkStages > 0) return policy_table_bytes<P>() + P::kRingBytes + P::kBarrierBytes;
  else return policy_table_bytes<P>();
}

/// Vectors a block takes per step of its loop: a chunk of the ring, else one per thread.
template <class P>
constexpr int64_t policy_block_step_vectors() {
  if constexpr (P::kBulkStages > 0) return P::kChunkVectors;
  else return P::kThreads;
}

/// Which kernel a launch runs: direct math, or the full or the range table with the bulk ring.
enum class TableKind : int { kNone = 0, kFull = 1, kRange = 2 };
inline constexpr int kTableKinds = 3;

/// The GeluMath name of a kind (for messages).
constexpr const char* table_kind_name(TableKind k) {
  switch (k) {
    case TableKind::kFull: return "table-bulk";
    case TableKind::kRange: return "table-range-bulk";
    default: return "direct";
  }
}

/// The kernel of an explicit GeluMath (kAuto resolves first: bias_gelu_tanh_resolve_math).
constexpr TableKind table_kind_of(GeluMath m) {
  switch (m) {
    case GeluMath::kTableBulk: return TableKind::kFull;
    case GeluMath::kTableRangeBulk: return TableKind::kRange;
    default: return TableKind::kNone;
  }
}

/// A type carried as a value, for generic lambdas: `[](auto tag) { using P = typename decltype(tag)::type; }`.
template <class T>
struct Tag {
  using type = T;
};

/// The dispatch table: calls f(Tag<P>{}) with the policy P of (D, vector_bytes, kind) and returns what f returns.
/// The CUDA launch (kernel pointers, occupancy, shared memory) and the emulation (the host grid) both go through it.
template <Half D, bool kRoundSum = true, class F>
auto with_policy_for(int vector_bytes, TableKind kind, F&& f) {
  const bool wide = vector_bytes == 32;
  switch (kind) {
    case TableKind::kFull: return wide ? f(Tag<FullTableBulk<D, 32>>{}) : f(Tag<FullTableBulk<D, 16>>{});
    case TableKind::kRange: return wide ? f(Tag<RangeTableBulk<D, 32>>{}) : f(Tag<RangeTableBulk<D, 16>>{});
    default: return wide ? f(Tag<DirectMath<D, 32, kRoundSum>>{}) : f(Tag<DirectMath<D, 16, kRoundSum>>{});
  }
}

/// with_policy_for with the dtype known at run time.
template <bool kRoundSum = true, class F>
auto with_policy(Half dtype, int vector_bytes, TableKind kind, F&& f) {
  return dtype == Half::kBf16 ? with_policy_for<Half::kBf16, kRoundSum>(vector_bytes, kind, f)
                              : with_policy_for<Half::kFp16, kRoundSum>(vector_bytes, kind, f);
}

}  // namespace fuseproof::kernel
