// bias_gelu_tanh_body.h: the fused kernel's per-element and per-vector math and its one grid-stride loop, compiled
// for device and host.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "activation_math.h"
#include "half_convert.h"

namespace fuseproof::kernel {

/// round_T(gelu_tanh(float(p))) for one pattern p of format D: entry p of the GELU table (kernels/bias_gelu_tanh.cu
/// fills it on the device with this very function; the emulation on the host), and the tail of the direct element.
template <Half D>
FUSEPROOF_HD uint16_t gelu_tanh_half(uint16_t p) {
  return float_to_half_rn<D>(gelu_tanh_f32(half_to_float<D>(p)));
}

/// out = gelu_tanh(round_T(x + bias)): eager's `x + bias` rounds the binary32 sum to T before GELU widens it again.
/// kRoundSum = false skips that rounding; it exists only as a negative control for the tests.
template <Half D, bool kRoundSum = true>
FUSEPROOF_HD uint16_t bias_gelu_tanh_element(uint16_t x, uint16_t bias) {
  const float sum = add_rn(half_to_float<D>(x), half_to_float<D>(bias));
  if constexpr (kRoundSum) return gelu_tanh_half<D>(float_to_half_rn<D>(sum));
  else return float_to_half_rn<D>(gelu_tanh_f32(sum));
}

/// One vector of kBytes (16 or 32) bytes; loads and stores move it whole.
template <int kBytes>
struct alignas(kBytes) HalfVec {
  static constexpr int kElems = kBytes / 2;
  uint16_t h[kElems];
};

template <int kBytes>
FUSEPROOF_HD HalfVec<kBytes> load_vec(const uint16_t* p) {
#if defined(__CUDA_ARCH__)
  return *reinterpret_cast<const HalfVec<kBytes>*>(p);
#else
  HalfVec<kBytes> v;
  std::memcpy(&v, p, kBytes);
  return v;
#endif
}

template <int kBytes>
FUSEPROOF_HD void store_vec(uint16_t* p, const HalfVec<kBytes>& v) {
#if defined(__CUDA_ARCH__)
  *reinterpret_cast<HalfVec<kBytes>*>(p) = v;
#else
  std::memcpy(p, &v, kBytes);
#endif
}

/// One vector of direct math: each element through bias_gelu_tanh_element.
template <Half D, int kBytes, bool kRoundSum = true>
FUSEPROOF_HD HalfVec<kBytes> bias_gelu_tanh_direct_vec(const HalfVec<kBytes>& xv, const HalfVec<kBytes>& bv) {
  HalfVec<kBytes> ov;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int i = 0; i < HalfVec<kBytes>::kElems; ++i) ov.h[i] = bias_gelu_tanh_element<D, kRoundSum>(xv.h[i], bv.h[i]);
  return ov;
}

/// Entries of the GELU table: one per 16-bit pattern.
inline constexpr int kGeluTableEntries = 65536;
inline constexpr int kGeluTableBytes = kGeluTableEntries * 2;

/// Two elements' eager `x + bias` tensor values, packed as a word of two T patterns: two exact widenings per operand,
/// two binary32 adds, one packed rounding to T.
template <Half D>
FUSEPROOF_HD uint32_t packed_sum(uint32_t x_word, uint32_t bias_word) {
  float x0, x1, b0, b1;
  half2_to_float2<D>(x_word, x0, x1);
  half2_to_float2<D>(bias_word, b0, b1);
  return float2_to_half2_rn<D>(add_rn(x0, b0), add_rn(x1, b1));
}

/// One vector through the table: per pair of elements two exact widenings, two binary32 adds, one packed rounding to
/// T (the eager `x + bias` tensor) and two table lookups (the eager GELU of that tensor).
template <Half D, int kBytes>
FUSEPROOF_HD HalfVec<kBytes> bias_gelu_tanh_table_vec(const HalfVec<kBytes>& xv, const HalfVec<kBytes>& bv,
                                                      const uint16_t* table) {
  constexpr int kWords = kBytes / 4;
  uint32_t xw[kWords], bw[kWords], ow[kWords];
  std::memcpy(xw, xv.h, kBytes);
  std::memcpy(bw, bv.h, kBytes);
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int i = 0; i < kWords; ++i) {
    const uint32_t s = packed_sum<D>(xw[i], bw[i]);
    ow[i] = uint32_t(table[s & 0xFFFFu]) | (uint32_t(table[s >> 16]) << 16);
  }
  HalfVec<kBytes> ov;
  std::memcpy(ov.h, ow, kBytes);
  return ov;
}

/// The +inf pattern of format D (NaN patterns are the magnitudes above it).
template <Half D>
inline constexpr uint32_t kInfPattern = D == Half::kBf16 ? 0x7F80u : 0x7C00u;

// --- Range table: the patterns with |x| < hi looked up, a rule for the rest, and a warp-uniform choice of path.
//
// bf16 | S |EEEEEEEE|MMMMMMM|: hi = 0x40B0 (5.5); fp16 | S |EEEEE|MMMMMMMMMM|: hi = 0x4530 (5.1875). From there up
// eager's GELU is x for positive x (and +inf), -0 for negative finite x, NaN for NaN and -inf: derived from the
// device's own table (golden/sm_90), where that rule holds from 0x4030 / 0x40A6 (bf16, positive / negative) and
// 0x42C3 / 0x4529 (fp16). The CPU test RangeTableEqualsFullTable checks every pattern against the full table and both
// tanh models, and NegativeControl_RangeRuleFailsBelowHi that the rule is wrong just below hi.
// Two paths, both exact: when every sum of every lane of the warp is below hi (the vote is warp-uniform, so no lane
// waits on a branch it does not take) two lean lookups per word; otherwise the lookup and the rule are selected
// without a branch, two halves per integer step, and lanes at or above hi read entry 0 (a broadcast, not a bank
// conflict). The compact table this replaces (|x| < 8, removed) branched per thread: under wide inputs (N(0, 4),
// uniform 16-bit patterns) every warp ran both paths and fell to 0.56-0.65 of copy (docs/PERFORMANCE.md, Variants).

/// Magnitudes below kRangeHi<D> are looked up, the rule applies from it up.
template <Half D>
inline constexpr uint32_t kRangeHi = D == Half::kBf16 ? 0x40B0u : 0x4530u;

/// The rule for one pattern h with magnitude >= kRangeHi<D>, without a branch: -0 for negative, h for positive, NaN
/// where (m + sign) > inf (NaN of either sign, and -inf: -inf * 0).
template <Half D>
FUSEPROOF_HD uint32_t gelu_tanh_large_sel(uint32_t h) {
  const uint32_t m = h & 0x7FFFu, neg = h >> 15;
  const uint32_t r = neg ? 0x8000u : h;
  return m + neg > kInfPattern<D> ? uint32_t(kCvtRnNan) : r;
}

/// Both halves of a word of sums, all below hi: one packed index (magnitude + sign x hi, no carry between the
/// halves) and two lookups.
template <Half D>
FUSEPROOF_HD uint32_t gelu_range_lookup2_in(uint32_t s, const uint16_t* table) {
  const uint32_t idx = (s & 0x7FFF7FFFu) + ((s >> 15) & 0x00010001u) * kRangeHi<D>;
  return uint32_t(table[idx & 0xFFFFu]) | (uint32_t(table[idx >> 16]) << 16);
}

/// 0xFFFF in each 16-bit half whose bit 15 is set, 0 in the other (prmt's sign-replicating byte select on the device).
FUSEPROOF_HD uint32_t half_sign_mask(uint32_t w) {
#if defined(__CUDA_ARCH__)
  uint32_t m;
  asm("prmt.b32 %0, %1, 0, 0xBB99;" : "=r"(m) : "r"(w));
  return m;
#else
  return ((w >> 15) & 1u) * 0x0000FFFFu | ((w >> 31) & 1u) * 0xFFFF0000u;
#endif
}

/// Both halves of a word of sums, any values, without a branch and in packed integer steps (two halves per
/// instruction): the lookup at magnitude + sign x hi, or entry 0 (a broadcast) at or above hi; there the rule: x for
/// positive, -0 for negative, and 0x7FFF wherever magnitude + sign > inf. No step carries from one half into the
/// other: every sum below stays under 0x10000 per half.
template <Half D>
FUSEPROOF_HD uint32_t gelu_range_lookup2_sel(uint32_t s, const uint16_t* table) {
  constexpr uint32_t kOverBias = (0x8000u - kRangeHi<D>) * 0x00010001u;  // bit 15 set <=> magnitude >= hi
  constexpr uint32_t kNanBias = (0x7FFFu - kInfPattern<D>) * 0x00010001u;  // bit 15 set <=> magnitude + sign > inf
  const uint32_t mag = s & 0x7FFF7FFFu;
  const uint32_t sign = (s >> 15) & 0x00010001u;
  const uint32_t over = mag + kOverBias;
  const uint32_t over_mask = half_sign_mask(over);
  const uint32_t idx = (mag + sign * kRangeHi<D>) & ~over_mask;
  const uint32_t t = uint32_t(table[idx & 0xFFFFu]) | (uint32_t(table[idx >> 16]) << 16);
  const uint32_t large = (s & half_sign_mask(over & ~s)) | (over & s & 0x80008000u);
  const uint32_t out = (t & ~over_mask) | large;
  const uint32_t nan_mask = half_sign_mask(mag + sign + kNanBias);
  return (out & ~nan_mask) | (uint32_t(kCvtRnNan) * 0x00010001u & nan_mask);
}

/// The pattern whose GELU sits at entry i of the range table.
template <Half D>
FUSEPROOF_HD uint16_t range_table_pattern(uint32_t i) {
  return uint16_t(i < kRangeHi<D> ? i : 0x8000u | (i - kRangeHi<D>));
}

/// True on every lane when every lane's `ok` is true (the device's warp vote over the converged lanes; the host runs
/// one thread at a time, which is a warp of one).
FUSEPROOF_HD bool warp_all(bool ok) {
#if defined(__CUDA_ARCH__)
  return __all_sync(__activemask(), ok);
#else
  return ok;
#endif
}

/// One vector through the range table: the packed sums, then the lean path when the whole warp is below hi, else the
/// selects in packed integer steps (gelu_range_lookup2_sel).
template <Half D, int kBytes>
FUSEPROOF_HD HalfVec<kBytes> bias_gelu_tanh_range_vec(const HalfVec<kBytes>& xv, const HalfVec<kBytes>& bv,
                                                      const uint16_t* table) {
  constexpr int kWords = kBytes / 4;
  // Per half: magnitude + (0x8000 - hi) sets bit 15 exactly when magnitude >= hi, and cannot carry out.
  constexpr uint32_t kOverBias = (0x8000u - kRangeHi<D>) * 0x00010001u;
  uint32_t xw[kWords], bw[kWords], sw[kWords], ow[kWords];
  std::memcpy(xw, xv.h, kBytes);
  std::memcpy(bw, bv.h, kBytes);
  uint32_t over = 0;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int i = 0; i < kWords; ++i) {
    sw[i] = packed_sum<D>(xw[i], bw[i]);
    over |= (sw[i] & 0x7FFF7FFFu) + kOverBias;
  }
  if (warp_all((over & 0x80008000u) == 0)) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int i = 0; i < kWords; ++i) ow[i] = gelu_range_lookup2_in<D>(sw[i], table);
  } else {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int i = 0; i < kWords; ++i) ow[i] = gelu_range_lookup2_sel<D>(sw[i], table);
  }
  HalfVec<kBytes> ov;
  std::memcpy(ov.h, ow, kBytes);
  return ov;
}

/// The range table's entries: both signs of [0, hi), in range_table_pattern's order (66,240 bytes bf16, 70,848 fp16).
template <Half D>
struct RangeTable {
  static constexpr int kEntries = int(2 * kRangeHi<D>);
  static constexpr int kBytes = kEntries * 2;
  FUSEPROOF_HD static uint16_t pattern(uint32_t i) { return range_table_pattern<D>(i); }
};

/// The full GELU table: entry i holds gelu_tanh_half<D>(i) for all 65,536 patterns; the device fill kernel and the
/// emulation's host table both build it from this.
template <Half D>
struct GeluTable {
  static constexpr int kEntries = kGeluTableEntries;
  static constexpr int kBytes = kEntries * 2;
  FUSEPROOF_HD static uint16_t pattern(uint32_t i) { return uint16_t(i); }
};

/// What every thread needs; counts are in vectors. width_vectors divides the row, so no vector straddles two rows.
struct BodyArgs {
  uint16_t* out;
  const uint16_t* x;
  const uint16_t* bias;
  int64_t n_vectors;      ///< rows * width / elems
  int64_t width_vectors;  ///< width / elems
};

/// The grid-stride loop (direct math): thread `first` of `stride` takes vectors first, first + stride, ... (64-bit
/// indices; the bias column advanced by `stride mod width` and wrapped by one compare instead of a division per
/// vector). P::vec computes one vector (bias_gelu_tanh_policies.h). Every vector is read before the same thread
/// overwrites it, so out == x (exact in-place) is safe. (Index form, not element offsets with a precomputed trip
/// count: with it the direct kernel keeps 32 registers on sm_90 instead of 40, i.e. 8 resident blocks.)
template <class P>
FUSEPROOF_HD void bias_gelu_tanh_thread(const BodyArgs& a, const uint16_t* table, int64_t first, int64_t stride) {
  constexpr int kBytes = P::kVectorBytes;
  constexpr int kElems = HalfVec<kBytes>::kElems;
  if (first >= a.n_vectors) return;
  int64_t col = first % a.width_vectors;
  const int64_t col_step = stride % a.width_vectors;
  for (int64_t v = first; v < a.n_vectors; v += stride) {
    const HalfVec<kBytes> xv = load_vec<kBytes>(a.x + v * kElems);
    const HalfVec<kBytes> bv = load_vec<kBytes>(a.bias + col * kElems);
    col += col_step;
    if (col >= a.width_vectors) col -= a.width_vectors;
    store_vec<kBytes>(a.out + v * kElems, P::vec(xv, bv, table));
  }
}

// --- The bulk ring (BulkRing in bias_gelu_tanh_policies.h): chunk c of kChunkVectors vectors is brought whole into a
// --- ring slot; block b takes chunks b, b + grid, ...; consumer thread t of the block takes vectors t + j x kConsumers
// --- (j < kChunkVectorsPerThread) of each, so reads of the slot and stores to out are both warp-contiguous.

/// How a grid of `grid` blocks splits n_vectors into chunks: `chunk` vectors each (the last may be short), at most
/// P::kChunkVectors (a ring slot), in as few rounds of the grid as full slots would need, the chunks shrunk so that
/// the last round is (nearly) as full as the others, in steps of 128 bytes. Full slots left the last round to a few
/// blocks: 32,760 x 5,120 made 80.06 chunks a block, so 8 of 132 blocks ran an 81st round alone, and 4,096 x 13,824
/// 27.03. The 128-byte step keeps every bulk copy's source line-aligned (x is): chunks 16 bytes off it made the bulk
/// copies about 10 % slower at 32,760 x 13,824 on an H200 (docs/PERFORMANCE.md, Variants).
struct BulkPlan {
  int64_t chunk, n_chunks;
};

template <class P>
FUSEPROOF_HD BulkPlan bulk_plan(int64_t n_vectors, int64_t grid) {
  constexpr int64_t kLine = 128 / P::kVectorBytes;
  static_assert(P::kChunkVectors % kLine == 0, "a full slot is a whole number of lines");
  const int64_t lines = n_vectors / kLine + (n_vectors % kLine != 0);
  const int64_t full_slots = (lines + P::kChunkVectors / kLine - 1) / (P::kChunkVectors / kLine);
  const int64_t rounds = (full_slots + grid - 1) / grid;
  const int64_t chunk = (lines + rounds * grid - 1) / (rounds * grid) * kLine;
  return {chunk, (n_vectors + chunk - 1) / chunk};
}

/// A consumer thread's bias columns: `col` that of its vector in its block's next chunk, `step_in` from its j-th
/// vector of a chunk to its (j+1)-th, `step_chunk` from a chunk to the block's next (each below width_vectors, so one
/// compare wraps them).
struct BulkColumns {
  int64_t col, step_in, step_chunk;
};

/// The columns of consumer thread t of `block` in a grid of `grid` blocks with chunks of `chunk` vectors: three
/// divisions per thread per launch.
template <class P>
FUSEPROOF_HD BulkColumns bulk_columns(const BodyArgs& a, int64_t chunk, int64_t block, int64_t grid, int t) {
  const int64_t wv = a.width_vectors;
  return {(block * chunk + t) % wv, int64_t(P::kConsumers) % wv, (grid * chunk) % wv};
}

/// Consumer thread t's share of the chunk of `chunk` vectors starting at vector `chunk_first`, read from `xs` (the
/// chunk's image: its ring slot on the device, x itself at the chunk on the host): first the bias of its vectors in
/// the chunk (their columns are known before the chunk lands, so the loads' latency overlaps the wait), then
/// `landed()` (the device waits for the slot's bulk copy there), its x into registers, `released()` (the device frees
/// the slot there), and each vector's math and store; `cols` moves to the block's next chunk. Each vector is read
/// before the same thread writes it, so out == x is safe here as in the grid-stride loop. (Holding the bias in
/// registers instead, with chunks of whole rows so that a thread's columns never change, was slower by about 1 % at
/// every seed shape on an H200: docs/PERFORMANCE.md, Variants, `table-bulk-rows`.)
template <class P, class Landed, class Release>
FUSEPROOF_HD void bias_gelu_tanh_bulk_consume(const BodyArgs& a, const uint16_t* table, const uint16_t* xs,
                                              int64_t chunk_first, int64_t chunk, int t, BulkColumns& cols,
                                              Landed&& landed, Release&& released) {
  constexpr int kBytes = P::kVectorBytes;
  constexpr int kElems = HalfVec<kBytes>::kElems;
  constexpr int kPer = P::kChunkVectorsPerThread;
  const int64_t to_end = a.n_vectors - chunk_first;
  const int64_t left = to_end < chunk ? to_end : chunk;  // the chunk's vectors
  HalfVec<kBytes> xv[kPer], bv[kPer];
  int64_t col = cols.col;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int j = 0; j < kPer; ++j) {
    if (t + int64_t(j) * P::kConsumers < left) bv[j] = load_vec<kBytes>(a.bias + col * kElems);
    col += cols.step_in;
    if (col >= a.width_vectors) col -= a.width_vectors;
  }
  landed();
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int j = 0; j < kPer; ++j) {
    const int64_t i = t + int64_t(j) * P::kConsumers;
    if (i < left) xv[j] = load_vec<kBytes>(xs + i * kElems);
  }
  released();
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int j = 0; j < kPer; ++j) {
    const int64_t i = t + int64_t(j) * P::kConsumers;
    if (i < left) store_vec<kBytes>(a.out + (chunk_first + i) * kElems, P::vec(xv[j], bv[j], table));
  }
  cols.col += cols.step_chunk;
  if (cols.col >= a.width_vectors) cols.col -= a.width_vectors;
}

}  // namespace fuseproof::kernel
