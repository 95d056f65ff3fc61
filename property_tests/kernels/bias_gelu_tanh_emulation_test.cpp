// bias_gelu_tanh_emulation_test.cpp: the CPU emulation of the fused kernel equals the reference (libm tanh) bit for bit.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>

#include "kernels/bias_gelu_tanh_policies.h"
#include "kernels/bias_gelu_tanh_emulation.h"
#include "property_tests/kernels/bias_gelu_tanh_testbed.h"
#include "property_tests/support/bit_patterns.h"
#include "property_tests/support/golden_paths.h"
#include "reference/add_round.h"

namespace fuseproof::test {
namespace {

/// One contiguous [rows, width] call: x and bias filled with random patterns (seeds `seed`, `seed + 1`), out guarded.
struct FilledCall {
  FilledCall(ScalarType type, int64_t r, int64_t w, uint64_t seed)
      : t(type), d(ref_dtype(type)), rows(r), width(w), x{size_t(r * w)}, bias{size_t(w)}, out{size_t(r * w)} {
    fill_half_bits(x.data(), x.size(), d, seed);
    fill_half_bits(bias.data(), bias.size(), d, seed + 1);
  }
  TensorView out_view() { return contiguous_view(out.data(), t, {rows, width}); }
  TensorView x_view() { return contiguous_view(x.data(), t, {rows, width}); }
  TensorView bias_view() { return contiguous_view(bias.data(), t, {width}); }
  ScalarType t;
  ref::Dtype d;
  int64_t rows, width;
  GuardedBuffer x, bias, out;
};

/// initialize -> run() -> verify(): one emulated launch (the shared random launch at CPU-sized limits, and a small
/// simulated SM count so that most threads loop more than once) against the libm oracle.
void check_random_shape(ScalarType t) {
  const RandomLaunch l = gen_random_launch(t, RandomLaunchLimits{2048, 16, 3});
  const int emulated_sms = *rc::gen::element(1, 2, 3, 7, 132);
  const ref::Dtype d = ref_dtype(t);
  GuardedBuffer x{size_t(l.rows * l.width)}, bias{size_t(l.width)}, out{size_t(l.rows * l.width)};
  fill_random_launch(l, x.data(), bias.data());
  BiasGeluOptions opt;
  opt.vector = l.vector;
  opt.math = l.math;
  opt.emulated_sms = emulated_sms;
  const LaunchStatus st = bias_gelu_tanh(contiguous_view(out.data(), t, {l.rows, l.width}),
                                         contiguous_view(x.data(), t, {l.rows, l.width}),
                                         contiguous_view(bias.data(), t, {l.width}), opt);
  RC_ASSERT(st.ok);
  RC_ASSERT(out.check_guards().empty());
  MismatchLog log("bias_gelu_tanh", d);
  verify_bias_gelu(log, BiasGeluOracle::libm(d), l.rows, l.width, x.data(), bias.data(), out.data());
  if (!log.clean()) RC_FAIL(log.report(uint64_t(l.rows * l.width)));
  // Small shapes may legitimately be all NaN (every bias -Inf or NaN); large ones cannot.
  RC_ASSERT(!output_is_trivial(out.data(), out.size()) || l.width < 256);
}

RC_GTEST_PROP(Emulated_BiasGeluTanh_bf16, BitExactVsReference_RandomShapes, ()) { check_random_shape(ScalarType::kBf16); }
RC_GTEST_PROP(Emulated_BiasGeluTanh_fp16, BitExactVsReference_RandomShapes, ()) { check_random_shape(ScalarType::kFp16); }

/// (x, bias) pairs from the bit-pattern generators (exact ties in every binade, tie neighbours, NaN, +-Inf,
/// subnormals, +-0), broadcast over a 2 x 32 tensor.
void check_pair(ScalarType t, uint16_t xb, uint16_t bb) {
  const ref::Dtype d = ref_dtype(t);
  constexpr int64_t kRows = 2, kWidth = 32;
  GuardedBuffer x(kRows * kWidth), bias(kWidth), out(kRows * kWidth);
  std::fill(x.data(), x.data() + x.size(), xb);
  std::fill(bias.data(), bias.data() + bias.size(), bb);
  RC_ASSERT(bias_gelu_tanh(contiguous_view(out.data(), t, {kRows, kWidth}),
                           contiguous_view(x.data(), t, {kRows, kWidth}), contiguous_view(bias.data(), t, {kWidth}))
                .ok);
  const uint16_t expected = BiasGeluOracle::libm(d)(xb, bb);
  for (size_t i = 0; i < out.size(); ++i) RC_ASSERT(out.data()[i] == expected);
}

RC_GTEST_PROP(Emulated_BiasGeluTanh_bf16, BitExactVsReference_SpecialPairs, ()) {
  const auto [x, b] = *gen_half_pair(ref::Dtype::kBf16);
  check_pair(ScalarType::kBf16, x, b);
}
RC_GTEST_PROP(Emulated_BiasGeluTanh_fp16, BitExactVsReference_SpecialPairs, ()) {
  const auto [x, b] = *gen_half_pair(ref::Dtype::kFp16);
  check_pair(ScalarType::kFp16, x, b);
}

/// Each special x (NaN, +-Inf, +-0, subnormals ...) against every bias pattern, both vector policies.
void special_x_against_every_bias(ScalarType t) {
  const ref::Dtype d = ref_dtype(t);
  const std::vector<uint16_t> specials = special_half_patterns(d);
  const int64_t rows = int64_t(specials.size()), width = 65536;
  GuardedBuffer x{size_t(rows * width)}, bias{size_t(width)}, out{size_t(rows * width)};
  for (int64_t r = 0; r < rows; ++r) std::fill(x.data() + r * width, x.data() + (r + 1) * width, specials[size_t(r)]);
  for (int64_t c = 0; c < width; ++c) bias.data()[c] = uint16_t(c);
  for (GeluMath m : kAllGeluMaths)
  for (VectorPolicy v : {VectorPolicy::kBytes16, VectorPolicy::kBytes32}) {
    BiasGeluOptions opt;
    opt.vector = v;
    opt.math = m;
    out.poison();
    ASSERT_TRUE(bias_gelu_tanh(contiguous_view(out.data(), t, {rows, width}), contiguous_view(x.data(), t, {rows, width}),
                               contiguous_view(bias.data(), t, {width}), opt)
                    .ok);
    MismatchLog log("bias_gelu_tanh", d);
    const uint64_t cases = verify_bias_gelu(log, BiasGeluOracle::libm(d), rows, width, x.data(), bias.data(), out.data());
    FUSEPROOF_EXPECT_CLEAN(log, cases);
    EXPECT_TRUE(out.check_guards().empty()) << out.check_guards();
  }
}

/// Exact in-place (out is x) is supported: every vector is read before the same thread overwrites it.
void in_place(ScalarType t) {
  const ref::Dtype d = ref_dtype(t);
  const int64_t rows = 37, width = 3072;
  GuardedBuffer x{size_t(rows * width)}, bias{size_t(width)};
  fill_half_bits(x.data(), x.size(), d, 7);
  fill_half_bits(bias.data(), bias.size(), d, 8);
  const std::vector<uint16_t> x0(x.data(), x.data() + x.size());
  for (GeluMath m : kAllGeluMaths) {
    std::copy(x0.begin(), x0.end(), x.data());
    BiasGeluOptions opt;
    opt.emulated_sms = 3;
    opt.math = m;
    const TensorView xv = contiguous_view(x.data(), t, {rows, width});
    ASSERT_TRUE(bias_gelu_tanh(xv, xv, contiguous_view(bias.data(), t, {width}), opt).ok);
    MismatchLog log("bias_gelu_tanh", d);
    const uint64_t cases = verify_bias_gelu(log, BiasGeluOracle::libm(d), rows, width, x0.data(), bias.data(), x.data());
    FUSEPROOF_EXPECT_CLEAN(log, cases);
  }
}

/// The emulation's tanhf is the host's: over every x at bias +0 it equals the libm model everywhere, and differs from
/// the CUDA model exactly where libm and the device disagree (none in bf16; 0xB3FE and 0xC007 in fp16).
void host_tanhf_is_libm(ScalarType t) {
  const ref::Dtype d = ref_dtype(t);
  const int64_t width = 65536;
  GuardedBuffer x{size_t(width)}, bias{size_t(width)}, out{size_t(width)};
  for (int64_t c = 0; c < width; ++c) x.data()[c] = uint16_t(c);
  std::fill(bias.data(), bias.data() + width, uint16_t(0));
  ASSERT_TRUE(bias_gelu_tanh(contiguous_view(out.data(), t, {1, width}), contiguous_view(x.data(), t, {1, width}),
                             contiguous_view(bias.data(), t, {width}))
                  .ok);
  MismatchLog libm("bias_gelu_tanh", d);
  FUSEPROOF_EXPECT_CLEAN(libm, verify_bias_gelu(libm, BiasGeluOracle::libm(d), 1, width, x.data(), bias.data(),
                                                out.data()));
  std::vector<uint16_t> differ;
  const BiasGeluOracle& cuda = BiasGeluOracle::cuda(d);
  for (int64_t c = 0; c < width; ++c)
    if (out.data()[c] != cuda(x.data()[c], 0)) differ.push_back(uint16_t(c));
  const std::vector<uint16_t> expected =
      d == ref::Dtype::kFp16 ? std::vector<uint16_t>{0xB3FE, 0xC007} : std::vector<uint16_t>{};
  EXPECT_EQ(differ, expected) << "x patterns where host tanhf and the CUDA model disagree";
}

/// Negative control: the body without round_T of the sum (GELU of the binary32 sum) must be caught.
void unrounded_sum_is_reported(ScalarType t) {
  FilledCall c(t, 16, 4096, 11);
  ASSERT_TRUE(bias_gelu_tanh_emulate(c.out_view(), c.x_view(), c.bias_view(), {}, EmulatedBody::kUnroundedSum).ok);
  MismatchLog log("bias_gelu_tanh", c.d);
  verify_bias_gelu(log, BiasGeluOracle::libm(c.d), c.rows, c.width, c.x.data(), c.bias.data(), c.out.data());
  EXPECT_GT(log.count(), 0u) << "an unrounded sum went unnoticed: the comparison cannot see the rounding boundary";
  std::printf("negative control: %llu of %lld elements differ without round_T(x + bias); first: %s\n",
              static_cast<unsigned long long>(log.count()), static_cast<long long>(c.rows * c.width),
              log.lines().empty() ? "-" : log.lines()[0].c_str());
}

/// Negative control: a reference table with one wrong entry is reported at exactly the elements that use it.
void corrupted_reference_is_reported(ScalarType t) {
  FilledCall c(t, 4, 256, 21);
  ASSERT_TRUE(bias_gelu_tanh(c.out_view(), c.x_view(), c.bias_view()).ok);
  std::vector<uint16_t> table = BiasGeluOracle::libm(c.d).table();
  const uint16_t victim = ref::add_round(c.d, c.x.data()[5], c.bias.data()[5], ref::NanPolicy::kCudaCvtRn);
  table[victim] ^= 1;  // one ulp (or a NaN payload bit) off
  const BiasGeluOracle bad(c.d, table, "libm, one entry corrupted");
  uint64_t users = 0;
  for (int64_t i = 0; i < c.rows * c.width; ++i)
    users += ref::add_round(c.d, c.x.data()[i], c.bias.data()[i % c.width], ref::NanPolicy::kCudaCvtRn) == victim;
  MismatchLog log("bias_gelu_tanh", c.d);
  verify_bias_gelu(log, bad, c.rows, c.width, c.x.data(), c.bias.data(), c.out.data());
  EXPECT_EQ(log.count(), users);
  EXPECT_GE(users, 1u);
}

/// The emulation's GELU table (the host body on every pattern) equals the reference's libm table entry for entry;
/// kAuto picks the table from kAutoTableMinElements elements and the direct math below.
void host_gelu_table_is_reference(ScalarType t) {
  const ref::Dtype d = ref_dtype(t);
  const std::vector<uint16_t>& got = bias_gelu_tanh_host_table(t);
  const std::vector<uint16_t>& expected = BiasGeluOracle::libm(d).table();
  ASSERT_EQ(got.size(), 65536u);
  ASSERT_EQ(expected.size(), 65536u);
  MismatchLog log("gelu_tanh table", d);
  for (uint32_t p = 0; p < 65536; ++p)
    if (got[p] != expected[p]) log.record("p", uint16_t(p), 0, got[p], expected[p], false);
  FUSEPROOF_EXPECT_CLEAN(log, 65536u);
  const Device cpu{};
  EXPECT_EQ(bias_gelu_tanh_resolve_math(cpu, kAutoTableMinElements - 1, GeluMath::kAuto), GeluMath::kDirect);
  EXPECT_EQ(bias_gelu_tanh_resolve_math(cpu, kAutoTableMinElements, GeluMath::kAuto), kAutoLargeMath);
  EXPECT_EQ(bias_gelu_tanh_resolve_math(cpu, 1, GeluMath::kTableBulk), GeluMath::kTableBulk);
  EXPECT_EQ(bias_gelu_tanh_resolve_math(cpu, int64_t(1) << 40, GeluMath::kDirect), GeluMath::kDirect);
}

/// Negative control: a table with one wrong entry, run through the table body, is caught at exactly the elements that
/// use it (the table path is not trusted to be right by construction alone).
void corrupted_table_is_reported(ScalarType t) {
  const ref::Dtype d = ref_dtype(t);
  const int64_t rows = 4, width = 256;
  constexpr int kBytes = 16, kElems = 8;
  std::vector<uint16_t> x(static_cast<size_t>(rows * width)), bias(static_cast<size_t>(width)),
      out(static_cast<size_t>(rows * width));
  fill_half_bits(x.data(), x.size(), d, 41);
  fill_half_bits(bias.data(), bias.size(), d, 42);
  std::vector<uint16_t> table = bias_gelu_tanh_host_table(t);
  const uint16_t victim = ref::add_round(d, x[5], bias[5], ref::NanPolicy::kCudaCvtRn);
  table[victim] ^= 1;
  kernel::BodyArgs args{out.data(), x.data(), bias.data(), rows * width / kElems, width / kElems};
  // One chunk of the bulk ring (128 vectors < kChunkVectors), one block: every consumer thread's share of it.
  const auto consume_all = [&](auto tag) {
    using P = typename decltype(tag)::type;
    for (int th = 0; th < P::kConsumers; ++th) {
      kernel::BulkColumns cols = kernel::bulk_columns<P>(args, P::kChunkVectors, 0, 1, th);
      kernel::bias_gelu_tanh_bulk_consume<P>(args, table.data(), x.data(), 0, P::kChunkVectors, th, cols, [] {},
                                             [] {});
    }
  };
  if (t == ScalarType::kBf16) consume_all(kernel::Tag<kernel::FullTableBulk<kernel::Half::kBf16, kBytes>>{});
  else consume_all(kernel::Tag<kernel::FullTableBulk<kernel::Half::kFp16, kBytes>>{});
  uint64_t users = 0;
  for (int64_t i = 0; i < rows * width; ++i)
    users += ref::add_round(d, x[size_t(i)], bias[size_t(i % width)], ref::NanPolicy::kCudaCvtRn) == victim;
  MismatchLog log("bias_gelu_tanh", d);
  verify_bias_gelu(log, BiasGeluOracle::libm(d), rows, width, x.data(), bias.data(), out.data());
  EXPECT_EQ(log.count(), users);
  EXPECT_GE(users, 1u);
}

/// Every pattern through the range table equals the full table by each of the kernel's paths: the packed select (every
/// pattern, in either half, beside two others) and the lean packed lookup (every pattern below hi, paired with +0 and
/// with itself). At and above hi the rule (gelu_tanh_large_sel, what the packed select applies to both halves at once)
/// equals the reference under both tanh models.
template <kernel::Half D>
void range_equals_full() {
  constexpr uint32_t kHi = kernel::kRangeHi<D>;
  const ScalarType t = D == kernel::Half::kBf16 ? ScalarType::kBf16 : ScalarType::kFp16;
  const ref::Dtype d = ref_dtype(t);
  const std::vector<uint16_t>& full = bias_gelu_tanh_host_table(t);
  const std::vector<uint16_t>& range = bias_gelu_tanh_host_range_table(t);
  const std::vector<uint16_t>& libm = BiasGeluOracle::libm(d).table();
  const std::vector<uint16_t>& cuda = BiasGeluOracle::cuda(d).table();
  ASSERT_EQ(range.size(), size_t(kernel::RangeTable<D>::kEntries));
  MismatchLog log("gelu_tanh range table", d);
  uint64_t large = 0, lean = 0;
  for (uint32_t p = 0; p < 65536; ++p) {
    // The packed select path: p in each half, beside the opposite sign and beside an unrelated pattern.
    for (const uint32_t q : {p ^ 0x8000u, (p * 40503u + 0x9E37u) & 0xFFFFu}) {
      const uint32_t lo = kernel::gelu_range_lookup2_sel<D>(p | (q << 16), range.data());
      const uint32_t hi = kernel::gelu_range_lookup2_sel<D>(q | (p << 16), range.data());
      if ((lo & 0xFFFFu) != full[p] || (lo >> 16) != full[q] || (hi >> 16) != full[p] || (hi & 0xFFFFu) != full[q])
        log.record("packed select path vs full table (q=" + std::to_string(q) + ")", uint16_t(p), 0,
                   uint16_t(lo & 0xFFFFu), full[p], false);
    }
    if ((p & 0x7FFFu) < kHi) {
      ++lean;
      const uint32_t pair = kernel::gelu_range_lookup2_in<D>(p | (p << 16), range.data());
      const uint32_t low = kernel::gelu_range_lookup2_in<D>(p, range.data());
      if ((pair & 0xFFFFu) != full[p] || (pair >> 16) != full[p] || (low & 0xFFFFu) != full[p] || (low >> 16) != full[0])
        log.record("lean path vs full table", uint16_t(p), 0, uint16_t(pair >> 16), full[p], false);
      continue;
    }
    ++large;
    const uint16_t rule = uint16_t(kernel::gelu_tanh_large_sel<D>(p));
    if (rule != libm[p]) log.record("rule vs libm model", uint16_t(p), 0, rule, libm[p], false);
    if (rule != cuda[p]) log.record("rule vs CUDA model", uint16_t(p), 0, rule, cuda[p], false);
  }
  std::printf("%s: %llu patterns by the rule, %llu looked up by both paths\n", scalar_type_name(t),
              static_cast<unsigned long long>(large), static_cast<unsigned long long>(lean));
  EXPECT_EQ(lean, uint64_t(kernel::RangeTable<D>::kEntries));
  EXPECT_EQ(large + lean, 65536u);
  FUSEPROOF_EXPECT_CLEAN(log, 6 * 65536u);
}
TEST(Emulated_BiasGeluTanh_bf16, RangeTableEqualsFullTable) { range_equals_full<kernel::Half::kBf16>(); }
TEST(Emulated_BiasGeluTanh_fp16, RangeTableEqualsFullTable) { range_equals_full<kernel::Half::kFp16>(); }

/// Negative control for hi: on the 256 magnitudes just below it the rule disagrees with the reference somewhere, so
/// the bound is where the rule stops being exact and the test above can fail.
template <kernel::Half D>
void range_rule_fails_below_hi() {
  const ScalarType t = D == kernel::Half::kBf16 ? ScalarType::kBf16 : ScalarType::kFp16;
  const std::vector<uint16_t>& cuda = BiasGeluOracle::cuda(ref_dtype(t)).table();
  uint64_t wrong = 0;
  for (uint32_t m = kernel::kRangeHi<D> - 0x100u; m < kernel::kRangeHi<D>; ++m)
    for (uint32_t sign : {0u, 0x8000u}) wrong += kernel::gelu_tanh_large_sel<D>(m | sign) != cuda[m | sign];
  std::printf("%s: the rule is wrong on %llu of the 512 patterns just below hi\n", scalar_type_name(t),
              static_cast<unsigned long long>(wrong));
  EXPECT_GT(wrong, 0u);
}
TEST(Emulated_BiasGeluTanh_bf16, NegativeControl_RangeRuleFailsBelowHi) { range_rule_fails_below_hi<kernel::Half::kBf16>(); }
TEST(Emulated_BiasGeluTanh_fp16, NegativeControl_RangeRuleFailsBelowHi) { range_rule_fails_below_hi<kernel::Half::kFp16>(); }


/// Chunks block b of `grid` takes under a plan of n_chunks: b, b + grid, ...
int64_t chunks_of_block(int64_t n_chunks, int64_t grid, int64_t b) { return (n_chunks - b + grid - 1) / grid; }

/// bulk_plan's promises for policy P, n vectors, `grid` blocks: every vector once, chunks that fit a slot and start on
/// a 128-byte line, no more rounds than full slots would take, and the busiest block at most a line per round above an
/// even share. Empty when kept, else which.
template <class P>
std::string bulk_plan_broken(int64_t n, int64_t grid) {
  const kernel::BulkPlan plan = kernel::bulk_plan<P>(n, grid);
  const int64_t line = 128 / P::kVectorBytes;
  const int64_t full_slots = (n + P::kChunkVectors - 1) / P::kChunkVectors;
  const int64_t rounds = chunks_of_block(plan.n_chunks, grid, 0);
  if (plan.chunk < 1 || plan.chunk > P::kChunkVectors) return "chunk outside [1, slot]";
  if (plan.chunk % line != 0) return "chunk not a whole number of lines";
  if (plan.n_chunks * plan.chunk < n || (plan.n_chunks - 1) * plan.chunk >= n) return "chunks do not cover x once";
  if (rounds > (full_slots + grid - 1) / grid) return "more rounds than full slots";
  if (grid * rounds * plan.chunk > n + grid * rounds * line) return "busiest block over an even share + a line a round";
  return {};
}

RC_GTEST_PROP(Emulated_BiasGeluTanh, BulkPlanCoversAndBalances, ()) {
  const int64_t n =
      *rc::gen::oneOf(rc::gen::inRange<int64_t>(1, 100000), rc::gen::inRange<int64_t>(1, int64_t(1) << 34));
  const int64_t full_slots = (n + 1983) / 1984;
  const int64_t grid = std::min<int64_t>(full_slots, *rc::gen::inRange<int64_t>(1, 1057));
  const std::string b16 = bulk_plan_broken<kernel::FullTableBulk<kernel::Half::kBf16, 16>>(n, grid);
  RC_ASSERT(b16.empty());
  const std::string r32 = bulk_plan_broken<kernel::RangeTableBulk<kernel::Half::kFp16, 32>>(n, grid);
  RC_ASSERT(r32.empty());
}

/// The seed shapes on 132 SMs (16-byte vectors): the busiest block's vectors against an even share, within a line per
/// round. Full slots (the plan before the chunks were evened out) are not at 32,760 x 5,120 and 4,096 x 13,824 (1.2 %
/// and 3.6 % over an even share): the negative control.
TEST(Emulated_BiasGeluTanh, BulkPlanSeedShapes) {
  using P = kernel::FullTableBulk<kernel::Half::kBf16, 16>;
  constexpr int64_t kGrid = 132;
  struct Case {
    int64_t rows, width;
    bool full_slots_over;
  };
  for (const Case c : {Case{32760, 5120, true}, Case{4096, 13824, true}, Case{32760, 13824, false},
                       Case{75600, 13824, false}}) {
    const int64_t n = c.rows * c.width / 8;
    EXPECT_EQ(bulk_plan_broken<P>(n, kGrid), "") << c.rows << " x " << c.width;
    const kernel::BulkPlan plan = kernel::bulk_plan<P>(n, kGrid);
    const int64_t full = (n + P::kChunkVectors - 1) / P::kChunkVectors;
    const int64_t full_rounds = chunks_of_block(full, kGrid, 0);
    const int64_t busiest = chunks_of_block(plan.n_chunks, kGrid, 0) * plan.chunk;
    const double even = double(n) / kGrid;
    std::printf("%lld x %lld: busiest block over an even share: %.2f %% (%lld chunks of %lld), full slots %.2f %%\n",
                static_cast<long long>(c.rows), static_cast<long long>(c.width), 100 * (busiest / even - 1),
                static_cast<long long>(plan.n_chunks), static_cast<long long>(plan.chunk),
                100 * (double(full_rounds * P::kChunkVectors) / even - 1));
    EXPECT_EQ(kGrid * full_rounds * P::kChunkVectors > n + kGrid * full_rounds * 8, c.full_slots_over)
        << "the negative control";
  }
}

FUSEPROOF_BOTH_DTYPES(Emulated, GeluTableEqualsReference, host_gelu_table_is_reference)
FUSEPROOF_BOTH_DTYPES(Emulated, NegativeControl_CorruptedTableIsReported, corrupted_table_is_reported)
FUSEPROOF_BOTH_DTYPES(Emulated, BitExactVsReference_SpecialXAgainstEveryBias, special_x_against_every_bias)
FUSEPROOF_BOTH_DTYPES(Emulated, BitExactVsReference_InPlace, in_place)
FUSEPROOF_BOTH_DTYPES(Emulated, HostTanhfIsTheLibmModel, host_tanhf_is_libm)
FUSEPROOF_BOTH_DTYPES(Emulated, NegativeControl_UnroundedSumIsReported, unrounded_sum_is_reported)
FUSEPROOF_BOTH_DTYPES(Emulated, NegativeControl_CorruptedReferenceIsReported, corrupted_reference_is_reported)

}  // namespace
}  // namespace fuseproof::test
