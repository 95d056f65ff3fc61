// sweep_row.cpp: the rows of eager's add over the 2^32 domain, and the proof of their shortcuts.
#include "sweep_row.h"

#include <algorithm>
#include <vector>

#include "half_codec.h"

namespace fuseproof::ref {

namespace {

/// Every pattern widened once (exact, from half_to_f32), so the inner loop is a load, an add and a rounding.
template <Dtype D>
const std::vector<float>& widened() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t i = 0; i < 65536; ++i) t[i] = half_to_f32(D, uint16_t(i));
    return t;
  }();
  return table;
}

/// out[x] = table[round_T(float(x) + float(bias))] (or the rounding alone) for x in [lo, hi), element by element.
template <Dtype D, bool kTable>
void row_span(const uint16_t* table, NanPolicy nan, uint16_t bias, uint32_t lo, uint32_t hi, uint16_t* out) {
  const float* wide = widened<D>().data();
  const float fb = wide[bias];
  for (uint32_t x = lo; x < hi; ++x) {
    const uint16_t r = f32_to_half(D, wide[x] + fb, nan);
    out[x] = kTable ? table[r] : r;
  }
}

// Row shortcuts, exact by construction
// ====================================
// T is bf16 or fp16; p is its significand width with the hidden bit, emin its smallest normal exponent:
//
//   bf16  | S |EEEEEEEE|MMMMMMM|      p = 8,  bias 127, emin = -126, subnormal spacing 2^-133
//   fp16  | S |EEEEE|MMMMMMMMMM|      p = 11, bias 15,  emin = -14,  subnormal spacing 2^-24
//
// For a finite pattern v with exponent field E let e(v) = max(E, 1) - bias. Then |v| < 2^(e+1), and T's spacing at
// v is u(v) = 2^(e - p + 1) (subnormals: the same as at 2^emin, hence max(E, 1)). v's neighbours lie u away, except
// below a power of two |v| = 2^e with e > emin, where the next pattern toward zero is only u/2 away (bf16 mantissas):
//
//    pattern       1111111 (E-1)                 0000000 (E)                              0000001 (E)
//   ---------------------|-------------+-------------|-------------------------+-------------------|----
//    value           2^e - u/2    2^e - u/4         2^e                   2^e + u/2           2^e + u
//                                  ^ tie                                       ^ tie
//   The rounding boundaries (ties) around 2^e are u/4 below and u/2 above; around any other v both are u/2 away.
//
// Eager computes s = fl32(float(x) + float(b)) (one binary32 rounding), then r = RNE_T(s) (a second one).
//
// Lemma. v finite, S the exact sum, |S - v| < u(v)/8  =>  r = v (pattern and sign).
//   1. v +- u/8 are binary32 numbers: v has at most p <= 11 significant bits, u/8 lies 3 bits below v's last one, and
//      p + 3 <= 24; the smallest, u/8 = 2^-136 (bf16, e = emin), is a multiple of binary32's 2^-149.
//   2. fl32 is monotone and fixes binary32 numbers, so |s - v| <= u/8: the first rounding cannot leave the interval.
//   3. Every RNE_T boundary around v is at least u/4 away (u/2 between two patterns u apart, u/4 below a power of two;
//      above T's largest finite value the boundary to Inf is v + u/2, fp16 65504 + 16 = 65520). u/8 < u/4, so s lies
//      strictly inside v's interval, no tie is met, and r = v; |s - v| <= u/8 < |v| keeps v's sign.
//   Margin: one binade. The lemma still holds at u/4, but only because the tie at 2^e - u/4 goes to the even
//   mantissa 0000000 of 2^e; at u/2 it fails (2^e - 3u/8 rounds to 2^e - u/2). The test's negative control
//   (row_shortcuts' `widen`) checks both: one binade wider is still exact, two are not.
//
// Small x, r = b (b finite, nonzero): |x| < 2^(e(b) - p - 2) = u(b)/8, since |S - b| = |x|.
//   Magnitude patterns below that power of two: [0, small_end); only +-0 when it is below T's smallest subnormal
//   (x = +-0 adds nothing: S = b exactly).
// Large x, r = x (b finite): |x| >= 2^(e(b) + p + 3). Then e(x) >= e(b) + p + 3, so
//   u(x)/8 = 2^(e(x) - p - 2) >= 2^(e(b) + 1) > |b| = |S - x|. Magnitude patterns [large_begin, Inf pattern).
// b = +-0: S = x exactly for every finite x, but -0 + +0 = +0 is the sign rule: large_begin = 1, x = +-0 computed.
// b = +-Inf: Inf + finite = the same Inf in binary32, and RNE_T(Inf) = Inf = b: small_end = the Inf pattern.
// b = NaN: no shortcut (which NaN pattern comes out is the NaN policy's business, nan_policy.h). x = +-Inf and every
// NaN x always take the element path as well.
//
// For a normal b the shortcuts leave the x of 2p + 5 binades to compute: 21 of bf16's 254 normal binades, but 27 of
// fp16's 30 (over the whole domain about 91% of the bf16 cases and 30% of the fp16 ones take a shortcut).

template <Dtype D>
struct Format;
template <>
struct Format<Dtype::kBf16> {
  static constexpr int kMantBits = 7, kBias = 127, kP = 8, kEmin = -126, kEmax = 127;
  static constexpr uint16_t kInf = 0x7F80;  // | 0 |11111111|0000000|
};
template <>
struct Format<Dtype::kFp16> {
  static constexpr int kMantBits = 10, kBias = 15, kP = 11, kEmin = -14, kEmax = 15;
  static constexpr uint16_t kInf = 0x7C00;  // | 0 |11111|0000000000|
};

/// The smallest magnitude pattern whose value is >= 2^k: the Inf pattern above the largest finite, 1 (the smallest
/// subnormal) below it. Magnitudes below it are exactly those < 2^k.
template <Dtype D>
uint16_t magnitude_at_least_pow2(int k) {
  using F = Format<D>;
  if (k > F::kEmax) return F::kInf;
  if (k >= F::kEmin) return uint16_t((k + F::kBias) << F::kMantBits);  // | 0 |E = k + bias|000...0|
  if (k >= F::kEmin - F::kMantBits) return uint16_t(1u << (k - (F::kEmin - F::kMantBits)));  // | 0 |0...0|0..1..0|
  return 1;
}

template <Dtype D>
RowShortcuts shortcuts(uint16_t bias, int widen) {
  using F = Format<D>;
  const uint16_t mag = bias & 0x7FFFu;
  if (mag > F::kInf) return {0, F::kInf};       // NaN bias: everything computed
  if (mag == F::kInf) return {F::kInf, F::kInf};  // Inf bias: every finite x gives the bias
  if (mag == 0) return {0, 1};                  // zero bias: every finite nonzero x gives x
  const int e = std::max(mag >> F::kMantBits, 1) - F::kBias;
  const uint16_t small_end = magnitude_at_least_pow2<D>(e - F::kP - 2 + widen);
  const uint16_t large_begin = magnitude_at_least_pow2<D>(e + F::kP + 3 - widen);
  return {small_end, std::max(small_end, large_begin)};
}

template <Dtype D, bool kTable>
void row_fast(const uint16_t* table, NanPolicy nan, uint16_t bias, uint16_t* out, int widen) {
  constexpr uint32_t kInf = Format<D>::kInf;
  const RowShortcuts s = shortcuts<D>(bias, widen);
  const uint16_t at_bias = kTable ? table[bias] : bias;
  for (const uint32_t sign : {0x0000u, 0x8000u}) {
    std::fill(out + sign, out + sign + s.small_end, at_bias);
    row_span<D, kTable>(table, nan, bias, sign + s.small_end, sign + s.large_begin, out);
    if (kTable) {
      std::copy(table + sign + s.large_begin, table + sign + kInf, out + sign + s.large_begin);
    } else {
      for (uint32_t x = sign + s.large_begin; x < sign + kInf; ++x) out[x] = uint16_t(x);
    }
    row_span<D, kTable>(table, nan, bias, sign + kInf, sign + 0x8000u, out);  // +-Inf and the NaNs
  }
}

template <Dtype D>
void row_dispatch(const uint16_t* table, NanPolicy nan, uint16_t bias, uint16_t* out, int widen, bool plain) {
  if (plain) {
    table ? row_span<D, true>(table, nan, bias, 0, 65536, out) : row_span<D, false>(nullptr, nan, bias, 0, 65536, out);
  } else {
    table ? row_fast<D, true>(table, nan, bias, out, widen) : row_fast<D, false>(nullptr, nan, bias, out, widen);
  }
}

void row(Dtype d, const uint16_t* table, NanPolicy nan, uint16_t bias, uint16_t* out, int widen, bool plain) {
  d == Dtype::kBf16 ? row_dispatch<Dtype::kBf16>(table, nan, bias, out, widen, plain)
                    : row_dispatch<Dtype::kFp16>(table, nan, bias, out, widen, plain);
}

}  // namespace

RowShortcuts row_shortcuts(Dtype d, uint16_t bias, int widen) {
  return d == Dtype::kBf16 ? shortcuts<Dtype::kBf16>(bias, widen) : shortcuts<Dtype::kFp16>(bias, widen);
}

void sweep_row(Dtype d, const uint16_t* gelu_table, NanPolicy nan, uint16_t bias, uint16_t* out) {
  row(d, gelu_table, nan, bias, out, 0, false);
}

void sweep_row_plain(Dtype d, const uint16_t* gelu_table, NanPolicy nan, uint16_t bias, uint16_t* out) {
  row(d, gelu_table, nan, bias, out, 0, true);
}

void sweep_row_widened(Dtype d, const uint16_t* gelu_table, NanPolicy nan, uint16_t bias, uint16_t* out, int widen) {
  row(d, gelu_table, nan, bias, out, widen, false);
}

}  // namespace fuseproof::ref
