// bias_gelu_tanh_policies.h: the kernel's math policies (block size, residency, GELU table, unroll, per-vector math)
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
//   kUnroll               vectors each thread loads before it computes the first
//   kBiasLate             load each vector's bias only when it is computed (x of all kUnroll vectors first)
//   Table                 the GELU table staged into shared memory before griddepcontrol.wait (void: none)
//   vec(x, bias, table)   one vector's math

/// Direct math: GELU in registers with CUDA's precise tanhf; 256-thread blocks, 8 per SM, one vector at a time.
/// kRoundSum = false is the emulation's negative control only (never instantiated for the device).
template <Half D, int kBytes, bool kRoundSum = true>
struct DirectMath {
  static constexpr int kVectorBytes = kBytes;
  static constexpr int kThreads = 256;
  static constexpr int kLaunchMinBlocks = 0;  // none: ptxas keeps 32 registers on sm_90 (1 would let it take 56)
  static constexpr int kEmulatedBlocksPerSm = 8;
  static constexpr int kUnroll = 1;
  static constexpr bool kBiasLate = false;
  using Table = void;
  FUSEPROOF_HD static HalfVec<kBytes> vec(const HalfVec<kBytes>& x, const HalfVec<kBytes>& b, const uint16_t*) {
    return bias_gelu_tanh_direct_vec<D, kBytes, kRoundSum>(x, b);
  }
};

/// The full 128 KiB table: one 1,024-thread block per SM, 64 bytes of x per thread in flight (64 KiB per SM).
template <Half D, int kBytes>
struct FullTable {
  static constexpr int kVectorBytes = kBytes;
  static constexpr int kThreads = 1024;
  static constexpr int kLaunchMinBlocks = 1;
  static constexpr int kEmulatedBlocksPerSm = 1;
  static constexpr int kUnroll = 64 / kBytes;
  static constexpr bool kBiasLate = false;
  using Table = GeluTable<D, false>;
  FUSEPROOF_HD static HalfVec<kBytes> vec(const HalfVec<kBytes>& x, const HalfVec<kBytes>& b, const uint16_t* t) {
    return bias_gelu_tanh_table_vec<D, kBytes>(x, b, t);
  }
};

/// The compact |x| < 8 table (65 KiB bf16, 72 KiB fp16) with kBlocksPerSm resident blocks, each with its own copy.
/// Two blocks of 768 threads (1,536 per SM, 42 registers each) keep 32 bytes of x per thread in flight (48 KiB per
/// SM); two blocks of 1,024 would cap registers at 32, where even one vector per thread spills. One block: 1,024
/// threads with 64 bytes per thread (64 KiB per SM).
template <Half D, int kBytes, int kBlocksPerSm>
struct CompactTable {
  static constexpr int kVectorBytes = kBytes;
  static constexpr int kThreads = kBlocksPerSm == 2 ? 768 : 1024;
  static constexpr int kLaunchMinBlocks = kBlocksPerSm;
  static constexpr int kEmulatedBlocksPerSm = kBlocksPerSm;
  static constexpr int kUnroll = (kBlocksPerSm == 2 ? 32 : 64) / kBytes;
  static constexpr bool kBiasLate = false;
  using Table = GeluTable<D, true>;
  FUSEPROOF_HD static HalfVec<kBytes> vec(const HalfVec<kBytes>& x, const HalfVec<kBytes>& b, const uint16_t* t) {
    return bias_gelu_tanh_compact_vec<D, kBytes>(x, b, t);
  }
};

/// The range table (bias_gelu_tanh_body.h: |x| < 5.5 looked up, the rule above, a warp-uniform lean path): two blocks
/// of 768 threads per SM, kUnrollBytes of x per thread in flight (48: 72 KiB per SM), each vector's bias loaded only
/// when it is computed. kPacked: the select path in packed integer steps instead of per element. Unroll bytes are
/// the most that ptxas fits in the 42 registers of 1,536 threads without a spill (sm_90/100/103: 64 per element, 48
/// packed).
template <Half D, int kBytes, bool kPacked, int kUnrollBytes = 48>
struct RangeTablePolicy {
  static constexpr int kVectorBytes = kBytes;
  static constexpr int kThreads = 768;
  static constexpr int kLaunchMinBlocks = 2;
  static constexpr int kEmulatedBlocksPerSm = 2;
  static constexpr int kUnroll = kUnrollBytes / kBytes;
  static constexpr bool kBiasLate = kUnrollBytes > 32;
  using Table = RangeTable<D>;
  FUSEPROOF_HD static HalfVec<kBytes> vec(const HalfVec<kBytes>& x, const HalfVec<kBytes>& b, const uint16_t* t) {
    return bias_gelu_tanh_range_vec<D, kBytes, kPacked>(x, b, t);
  }
};

/// Bytes of shared memory a policy's block holds (its table; 0 for direct math).
template <class P>
constexpr int policy_smem_bytes() {
  if constexpr (std::is_void_v<typename P::Table>) return 0;
  else return P::Table::kBytes;
}

/// Which kernel a launch runs: direct math, the full table, or the compact table with 2 or 1 blocks per SM.
enum class TableKind : int { kNone = 0, kFull = 1, kCompact2 = 2, kCompact1 = 3, kRange = 4, kRangePacked = 5 };
inline constexpr int kTableKinds = 6;

/// Which GELU table a kind reads (kernels of one layout share the device's copy): -1 none, 0 full, 1 compact, 2 range.
constexpr int table_layout_of(TableKind k) {
  switch (k) {
    case TableKind::kFull: return 0;
    case TableKind::kCompact2:
    case TableKind::kCompact1: return 1;
    case TableKind::kRange:
    case TableKind::kRangePacked: return 2;
    default: return -1;
  }
}
inline constexpr int kTableLayouts = 3;

/// The GeluMath name of a kind (for messages).
constexpr const char* table_kind_name(TableKind k) {
  switch (k) {
    case TableKind::kFull: return "table";
    case TableKind::kCompact2: return "table-compact";
    case TableKind::kCompact1: return "table-compact-1b";
    case TableKind::kRange: return "table-range";
    case TableKind::kRangePacked: return "table-range-packed";
    default: return "direct";
  }
}

/// The kernel of an explicit GeluMath (kAuto resolves first: bias_gelu_tanh_resolve_math).
constexpr TableKind table_kind_of(GeluMath m) {
  switch (m) {
    case GeluMath::kTable: return TableKind::kFull;
    case GeluMath::kTableCompact: return TableKind::kCompact2;
    case GeluMath::kTableCompact1: return TableKind::kCompact1;
    case GeluMath::kTableRange: return TableKind::kRange;
    case GeluMath::kTableRangePacked: return TableKind::kRangePacked;
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
    case TableKind::kFull: return wide ? f(Tag<FullTable<D, 32>>{}) : f(Tag<FullTable<D, 16>>{});
    case TableKind::kCompact2: return wide ? f(Tag<CompactTable<D, 32, 2>>{}) : f(Tag<CompactTable<D, 16, 2>>{});
    case TableKind::kCompact1: return wide ? f(Tag<CompactTable<D, 32, 1>>{}) : f(Tag<CompactTable<D, 16, 1>>{});
    case TableKind::kRange:
      return wide ? f(Tag<RangeTablePolicy<D, 32, false, 64>>{}) : f(Tag<RangeTablePolicy<D, 16, false, 64>>{});
    case TableKind::kRangePacked:
      return wide ? f(Tag<RangeTablePolicy<D, 32, true>>{}) : f(Tag<RangeTablePolicy<D, 16, true>>{});
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
