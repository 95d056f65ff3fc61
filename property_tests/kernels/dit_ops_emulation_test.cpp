// dit_ops_emulation_test.cpp: the CPU emulation of gated_residual and modulate (kernels/family_ops.h) on hand-derived
// bit patterns at each rounding that decides a case, under the eager and fma contracts; the group-broadcast rows; a
// model on the reference's codec over seeded triples; and each mutant's bug seen on its decisive case.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "kernels/mutants/family_mutant_kernel.h"
#include "property_tests/kernels/bias_gelu_tanh_testbed.h"
#include "property_tests/kernels/dit_ops_testbed.h"
#include "reference/half_codec.h"

namespace fuseproof::test {
namespace {

using kernel::Contract;
using kernel::FamilyOp;
constexpr FamilyOp kGated = FamilyOp::kGatedResidual, kModulate = FamilyOp::kModulate;
constexpr int32_t kBf = FUSEPROOF_DTYPE_BF16, kFp = FUSEPROOF_DTYPE_FP16;

/// One triple (x, input 1, input 2 in declared order) and what each contract gives, in bits.
struct Case {
  FamilyOp op;
  int32_t dtype;
  uint16_t x, a, b;
  uint16_t eager, fma;
  const char* why;
};

// Patterns: bf16 | S |EEEEEEEE|MMMMMMM| (1.0 = 0x3F80, ulp at 1 = 2^-7); fp16 | S |EEEEE|MMMMMMMMMM| (1.0 = 0x3C00,
// ulp at 1 = 2^-10). Products of two halves are exact in binary32 (8 + 8, 11 + 11 significant bits).
const Case kCases[] = {
    // -0: eager's add gives -0 only for -0 + -0; p = gate * y is -0 when the product of signed zeros is negative.
    {kGated, kBf, 0x8000, 0x0000, 0x8000, 0x8000, 0x8000, "x = -0, p = +0 * -0 = -0: -0 + -0 = -0"},
    {kGated, kBf, 0x8000, 0x3F80, 0x8000, 0x8000, 0x8000, "x = -0, p = 1 * -0 = -0"},
    {kGated, kBf, 0x0000, 0x0000, 0x8000, 0x0000, 0x0000, "x = +0, p = -0: +0 + -0 = +0"},
    {kGated, kFp, 0x8000, 0x0000, 0x8000, 0x8000, 0x8000, "x = -0, p = -0"},
    // fma against eager where round_T(gate * y) drops bits the add needs. bf16: gate = 1 + 2^-7, y = 1 + 3 * 2^-7,
    // gate * y = 1 + 2^-5 + 3 * 2^-14; eager p = 1 + 2^-5 (3 * 2^-14 < half an ulp, 2^-8), x + p = -1 + p = 2^-5
    // (0x3D00). fma: 2^-5 + 3 * 2^-14 = 2^-5 (1 + 0.75 ulp) rounds up to 2^-5 (1 + 2^-7) (0x3D01).
    {kGated, kBf, 0xBF80, 0x3F81, 0x3F83, 0x3D00, 0x3D01, "x + round(gate * y) against fmaf: 2^-5 against 2^-5 + 1 ulp"},
    // fp16, the same with 2^-10: gate * y = 1 + 2^-8 + 3 * 2^-20, p = 1 + 2^-8, -1 + p = 2^-8 (0x1C00); fma
    // 2^-8 (1 + 0.75 ulp) -> 2^-8 (1 + 2^-10) (0x1C01).
    {kGated, kFp, 0xBC00, 0x3C01, 0x3C03, 0x1C00, 0x1C01, "x + round(gate * y) against fmaf: 2^-8 against 2^-8 + 1 ulp"},
    // The sign of an underflowed product. bf16: gate * y = 2^-133 * -2^-133 = -2^-266 rounds to -0 in binary32, p =
    // -0, +0 + -0 = +0; fmaf(2^-133, -2^-133, +0) is the exact -2^-266 rounded once: -0.
    {kGated, kBf, 0x0000, 0x0001, 0x8001, 0x0000, 0x8000, "underflow: eager +0 + -0, fma keeps the product's sign"},
    // fp16: gate * y = -2^-48 is a binary32 normal; round_fp16 gives -0, +0 + -0 = +0; fmaf gives -2^-48 -> -0.
    {kGated, kFp, 0x0000, 0x0001, 0x8001, 0x0000, 0x8000, "underflow: eager +0 + -0, fma keeps the product's sign"},
    // fp16 overflow of the intermediate: gate * y = 2 * 65504 = 131008 >= 65520 -> p = +Inf, -65504 + Inf = Inf;
    // fmaf(2, 65504, -65504) = 65504 (0x7BFF).
    {kGated, kFp, 0xFBFF, 0x4000, 0x7BFF, 0x7C00, 0x7BFF, "p overflows to Inf in eager, not in fma"},
    // NaN in any input, and Inf - Inf, give the ABI's 0x7FFF.
    {kGated, kBf, 0x3F80, 0x7FC1, 0x3F80, 0x7FFF, 0x7FFF, "gate NaN"},
    {kGated, kBf, 0x7F80, 0xFF80, 0x3F80, 0x7FFF, 0x7FFF, "Inf + -Inf"},
    {kGated, kFp, 0x3C00, 0x3C00, 0xFE01, 0x7FFF, 0x7FFF, "y a negative NaN"},
    // modulate, bf16: scale = 2^-8 (0x3B80): 1 + 2^-8 is a tie (half of 2^-7) and rounds to even, s = 1, m = 1.5,
    // out = 1.5 (0x3FC0). 1 + scale kept in binary32: 1.5 (1 + 2^-8) = 1.5 + 0.75 ulp -> 1.5 + 2^-7 (0x3FC1), which
    // is also fmaf(1.5, 1 + 2^-8, 0).
    {kModulate, kBf, 0x3FC0, 0x3B80, 0x0000, 0x3FC0, 0x3FC1, "1 + scale a tie to 1; unrounded gives 1.5 + 1 ulp"},
    // scale = 3 * 2^-9 (0x3BC0): 1 + 3 * 2^-9 = 1 + 0.75 ulp -> s = 1 + 2^-7; m = 1.5 s = 1.5 + 2^-7 + 2^-8, a tie
    // between 0x3FC1 and 0x3FC2, to even: 0x3FC2. Unrounded: 1.5 (1 + 3 * 2^-9) = 1.5 + 2^-7 + 2^-10 -> 0x3FC1.
    {kModulate, kBf, 0x3FC0, 0x3BC0, 0x0000, 0x3FC2, 0x3FC1, "s rounds up, then m ties to even above the unrounded"},
    // fp16: scale = 2^-11 (0x1000): 1 + 2^-11 ties to 1, out = 1.5 (0x3E00); unrounded 1.5 + 0.75 ulp -> 0x3E01.
    {kModulate, kFp, 0x3E00, 0x1000, 0x0000, 0x3E00, 0x3E01, "1 + scale a tie to 1; unrounded gives 1.5 + 1 ulp"},
    // fp16: s = 2, m = 131008 -> Inf, Inf - 65504 = Inf; fmaf(65504, 2, -65504) = 65504.
    {kModulate, kFp, 0x7BFF, 0x3C00, 0xFBFF, 0x7C00, 0x7BFF, "m overflows to Inf in eager, not in fma"},
    // -0: s = 1, m = -0 * 1 = -0, -0 + -0 = -0; with shift = +0 the sum is +0.
    {kModulate, kBf, 0x8000, 0x0000, 0x8000, 0x8000, 0x8000, "x = -0, shift = -0"},
    {kModulate, kBf, 0x8000, 0x0000, 0x0000, 0x0000, 0x0000, "x = -0, shift = +0"},
    {kModulate, kFp, 0x8000, 0x0000, 0x8000, 0x8000, 0x8000, "x = -0, shift = -0"},
    // scale = -1: s = +0, m = x * +0 (+0 for x > 0), m + -0 = +0.
    {kModulate, kBf, 0x3F80, 0xBF80, 0x8000, 0x0000, 0x0000, "scale = -1: s = +0"},
    {kModulate, kBf, 0x3F80, 0x7FC0, 0x0000, 0x7FFF, 0x7FFF, "scale NaN"},
    {kModulate, kFp, 0x7C00, 0xBC00, 0x0000, 0x7FFF, 0x7FFF, "Inf * (1 + -1) = Inf * 0"},
};

const char* op_name(FamilyOp op) { return op == kGated ? "gated_residual" : "modulate"; }
const char* dtype_name(int32_t d) { return d == kBf ? "bf16" : "fp16"; }

/// Runs the built-in emulation on a 3 x 8 call whose every element is the case's triple, group_rows 1 (so that every
/// group-broadcast input has 3 rows), and returns out (every element must agree).
std::vector<uint16_t> run_case(const Case& k, Contract contract) {
  constexpr int64_t kRows = 3, kW = 8;
  GuardedBuffer x(kRows * kW), a(kRows * kW), b(kRows * kW), out(kRows * kW);
  for (int64_t i = 0; i < kRows * kW; ++i) x.data()[i] = k.x, a.data()[i] = k.a, b.data()[i] = k.b;
  out.poison();
  const std::string why = dit_run(dit_launch(k.op, contract),
                                  dit_call(k.dtype, kRows, kW, 1, out.data(), x.data(), a.data(), b.data()));
  EXPECT_EQ(why, "");
  EXPECT_EQ(out.check_guards(), "");
  return {out.data(), out.data() + kRows * kW};
}

TEST(Emulation_DitOps, DecisiveBitPatterns) {
  int checked = 0;
  for (const Case& k : kCases)
    for (Contract contract : {Contract::kEager, Contract::kFma}) {
      const uint16_t want = contract == Contract::kFma ? k.fma : k.eager;
      for (uint16_t got : run_case(k, contract))
        ASSERT_EQ(got, want) << op_name(k.op) << " " << dtype_name(k.dtype) << " " << kernel::contract_name(contract)
                             << std::hex << " x=0x" << k.x << " in1=0x" << k.a << " in2=0x" << k.b << " => 0x" << got
                             << " expected 0x" << want << " (" << k.why << ")";
      ++checked;
    }
  std::printf("In %d cases, no errors found in gated_residual and modulate (eager, fma; bf16, fp16).\n", checked);
}

/// The cases separate eager from fma: each contract's kernel would fail the other's expectations (the comparison's
/// negative control).
TEST(Emulation_DitOps, ContractsDifferOnTheDecisiveCases) {
  int cases = 0;
  for (const Case& k : kCases) {
    if (k.eager == k.fma) continue;
    ++cases;
    EXPECT_NE(run_case(k, Contract::kEager)[0], k.fma) << k.why;
    EXPECT_NE(run_case(k, Contract::kFma)[0], k.eager) << k.why;
  }
  EXPECT_EQ(cases, 9);
}

/// Each mutant's element (kernels/mutants/family_mutant_kernel.h) on the case that exposes it, and the false-alarm
/// mutant equal to eager: the bugs the audit must see are really in the mutants.
TEST(Mutants_DitOps, EachBugShowsOnItsDecisiveCase) {
  using mutants::FamilyBug;
  using mutants::mutant_element;
  using kernel::Half;
  using kernel::family_element;
  for (const Case& k : kCases) {
    const bool bf = k.dtype == kBf;
    uint16_t fma_in_eager, unrounded = 0, negzero = 0, swapped = 0, control;
    if (k.op == kGated) {
      fma_in_eager = bf ? mutant_element<kGated, Half::kBf16, FamilyBug::kFmaInEager, Contract::kEager>(k.x, k.a, k.b)
                        : mutant_element<kGated, Half::kFp16, FamilyBug::kFmaInEager, Contract::kEager>(k.x, k.a, k.b);
      negzero = bf ? mutant_element<kGated, Half::kBf16, FamilyBug::kNegzeroLost, Contract::kEager>(k.x, k.a, k.b)
                   : mutant_element<kGated, Half::kFp16, FamilyBug::kNegzeroLost, Contract::kEager>(k.x, k.a, k.b);
      swapped = bf ? mutant_element<kGated, Half::kBf16, FamilyBug::kGateYSwapped, Contract::kEager>(k.x, k.a, k.b)
                   : mutant_element<kGated, Half::kFp16, FamilyBug::kGateYSwapped, Contract::kEager>(k.x, k.a, k.b);
      control = bf ? family_element<kGated, Half::kBf16, Contract::kEager>(k.x, k.a, k.b)
                   : family_element<kGated, Half::kFp16, Contract::kEager>(k.x, k.a, k.b);
      EXPECT_EQ(swapped, k.eager) << k.why;
      // (x + p) + 0 differs exactly where eager gives -0 from -0 + -0.
      EXPECT_EQ(negzero, k.eager == 0x8000 && k.x == 0x8000 ? 0x0000 : k.eager) << k.why;
    } else {
      fma_in_eager = bf ? mutant_element<kModulate, Half::kBf16, FamilyBug::kFmaInEager, Contract::kEager>(k.x, k.a, k.b)
                        : mutant_element<kModulate, Half::kFp16, FamilyBug::kFmaInEager, Contract::kEager>(k.x, k.a, k.b);
      unrounded = bf ? mutant_element<kModulate, Half::kBf16, FamilyBug::kOnePlusScaleUnrounded, Contract::kEager>(k.x, k.a, k.b)
                     : mutant_element<kModulate, Half::kFp16, FamilyBug::kOnePlusScaleUnrounded, Contract::kEager>(k.x, k.a, k.b);
      control = bf ? family_element<kModulate, Half::kBf16, Contract::kEager>(k.x, k.a, k.b)
                   : family_element<kModulate, Half::kFp16, Contract::kEager>(k.x, k.a, k.b);
    }
    EXPECT_EQ(control, k.eager) << k.why;
    EXPECT_EQ(fma_in_eager, k.fma) << k.why;
    (void)unrounded;
  }
  // The 1 + scale cases: the unrounded mutant gives 1.5 + 1 ulp where eager gives 1.5 or 1.5 + 2 ulps.
  using kernel::Half;
  EXPECT_EQ((mutants::mutant_element<kModulate, Half::kBf16, mutants::FamilyBug::kOnePlusScaleUnrounded,
                                     Contract::kEager>(0x3FC0, 0x3B80, 0x0000)), 0x3FC1);
  EXPECT_EQ((mutants::mutant_element<kModulate, Half::kBf16, mutants::FamilyBug::kOnePlusScaleUnrounded,
                                     Contract::kEager>(0x3FC0, 0x3BC0, 0x0000)), 0x3FC1);
  EXPECT_EQ((mutants::mutant_element<kModulate, Half::kFp16, mutants::FamilyBug::kOnePlusScaleUnrounded,
                                     Contract::kEager>(0x3E00, 0x1000, 0x0000)), 0x3E01);
  // The negzero mutant on x = -0, p = -0 (bf16 and fp16), the only pair where it differs.
  EXPECT_EQ((mutants::mutant_element<kGated, Half::kBf16, mutants::FamilyBug::kNegzeroLost, Contract::kEager>(
                0x8000, 0x0000, 0x8000)), 0x0000);
}

/// The wrong-group mutant reads row r % groups: the same row as r / group_rows with one group or one row per group,
/// another one otherwise.
TEST(Mutants_DitOps, WrongGroupRowOnlyWithSeveralGroupsOfSeveralRows) {
  using mutants::FamilyBug;
  constexpr int64_t kW = 8;
  for (int64_t rows : {1, 2, 6, 12})
    for (int64_t g = 1; g <= rows; ++g) {
      if (rows % g) continue;
      int64_t wrong = 0;
      for (int64_t r = 0; r < rows; ++r)
        for (int input : {1, 2}) {
          const int64_t want = kernel::family_in<kModulate>(input, r, 3, kW, g);
          wrong += mutants::mutant_in<kModulate, FamilyBug::kWrongGroupRow>(input, r, 3, kW, g, rows) != want;
          EXPECT_EQ((mutants::mutant_in<kModulate, FamilyBug::kControl>(input, r, 3, kW, g, rows)), want);
        }
      const bool exposed = g > 1 && rows / g > 1;
      EXPECT_EQ(wrong > 0, exposed) << "rows " << rows << ", group_rows " << g;
    }
  // x (input 0) is never group-broadcast.
  EXPECT_EQ((mutants::mutant_in<kGated, FamilyBug::kWrongGroupRow>(0, 5, 3, kW, 2, 6)), 5 * kW + 3);
}

/// gate[j][c] = j * 8 + c + 1 (exact small integers): with x = +0 and y = 1 every output is its gate, so out[r][c]
/// names the row read; modulate likewise through scale (x = 1, shift = -0: out = 1 + scale) and shift (x = 1,
/// scale = +0: out = 1 + shift).
void group_rows_pick_the_right_row(int32_t dtype) {
  const bool bf = dtype == kBf;
  auto enc = [bf](float v) { return ref::f32_to_half(bf ? ref::Dtype::kBf16 : ref::Dtype::kFp16, v, ref::NanPolicy::kCudaCvtRn); };
  constexpr int64_t kW = 8;
  for (int64_t rows : {1, 4, 12})
    for (int64_t g : {int64_t(1), int64_t(2), int64_t(3), rows}) {
      if (rows % g) continue;
      const int64_t groups = rows / g;
      GuardedBuffer x(rows * kW), y(rows * kW), grp(groups * kW), fill(groups * kW), out(rows * kW);
      for (int64_t j = 0; j < groups; ++j)
        for (int64_t c = 0; c < kW; ++c) grp.data()[j * kW + c] = enc(float(j * 8 + c + 1));
      for (int what = 0; what < 3; ++what) {  // 0 gated_residual's gate, 1 modulate's scale, 2 modulate's shift
        const FamilyOp op = what == 0 ? kGated : kModulate;
        for (int64_t i = 0; i < rows * kW; ++i) x.data()[i] = what == 0 ? enc(0.0f) : enc(1.0f), y.data()[i] = enc(1.0f);
        for (int64_t i = 0; i < groups * kW; ++i) fill.data()[i] = what == 1 ? 0x8000 : 0x0000;
        out.poison();
        const void* in1 = what == 2 ? fill.data() : grp.data();
        const void* in2 = what == 0 ? static_cast<const void*>(y.data()) : what == 1 ? fill.data() : grp.data();
        ASSERT_EQ(dit_run(dit_launch(op, Contract::kEager), dit_call(dtype, rows, kW, g, out.data(), x.data(), in1, in2)),
                  "");
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t c = 0; c < kW; ++c) {
            const float v = float((r / g) * 8 + c + 1) + (what == 0 ? 0.0f : 1.0f);
            ASSERT_EQ(out.data()[r * kW + c], enc(v)) << op_name(op) << " input " << (what == 2 ? 2 : 1) << " rows "
                                                      << rows << " group_rows " << g << " r=" << r << " c=" << c;
          }
        EXPECT_EQ(out.check_guards(), "");
      }
    }
}
TEST(Emulation_DitOps_bf16, GroupRowsPickTheRightRow) { group_rows_pick_the_right_row(kBf); }
TEST(Emulation_DitOps_fp16, GroupRowsPickTheRightRow) { group_rows_pick_the_right_row(kFp); }

/// Seeded triples of every pattern class in 64 x 64 calls of 4 groups, against a model of the eager and fma
/// compositions on the reference's codec (reference/half_codec.h) and the host's binary32 arithmetic.
void matches_a_model_on_seeded_triples(int32_t dtype) {
  const ref::Dtype d = dtype == kBf ? ref::Dtype::kBf16 : ref::Dtype::kFp16;
  auto h = [d](uint16_t v) { return ref::half_to_f32(d, v); };
  auto r = [d](float v) { return ref::f32_to_half(d, v, ref::NanPolicy::kCudaCvtRn); };
  constexpr int64_t kRows = 64, kW = 64, kG = 16;
  uint64_t cases = 0;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    GuardedBuffer x(kRows * kW), y(kRows * kW), a(kRows * kW), b(kRows * kW), out(kRows * kW);
    fill_half_bits(x.data(), x.size(), d, 3 * seed);
    fill_half_bits(y.data(), y.size(), d, 3 * seed + 1);
    fill_half_bits(a.data(), a.size(), d, 3 * seed + 2);
    fill_half_bits(b.data(), b.size(), d, 3 * seed + 3);
    for (FamilyOp op : {kGated, kModulate})
      for (Contract contract : {Contract::kEager, Contract::kFma}) {
        out.poison();
        const void* in2 = op == kGated ? static_cast<const void*>(y.data()) : b.data();
        ASSERT_EQ(dit_run(dit_launch(op, contract), dit_call(dtype, kRows, kW, kG, out.data(), x.data(), a.data(), in2)),
                  "");
        for (int64_t row = 0; row < kRows; ++row)
          for (int64_t c = 0; c < kW; ++c) {
            const float fx = h(x.data()[row * kW + c]), f1 = h(a.data()[(row / kG) * kW + c]);
            const float f2 = op == kGated ? h(y.data()[row * kW + c]) : h(b.data()[(row / kG) * kW + c]);
            uint16_t want;
            if (op == kGated)
              want = contract == Contract::kFma ? r(std::fma(f1, f2, fx)) : r(fx + h(r(f1 * f2)));
            else
              want = contract == Contract::kFma ? r(std::fma(fx, 1.0f + f1, f2)) : r(h(r(fx * h(r(1.0f + f1)))) + f2);
            ASSERT_EQ(out.data()[row * kW + c], want)
                << op_name(op) << " " << kernel::contract_name(contract) << " seed " << seed << " [r=" << row
                << ",c=" << c << "]";
            ++cases;
          }
        ASSERT_FALSE(output_is_trivial(out.data(), out.size()));
      }
  }
  std::printf("In %llu cases, no errors found in gated_residual and modulate %s (eager, fma; group_rows 16).\n",
              static_cast<unsigned long long>(cases), dtype_name(dtype));
}
TEST(Emulation_DitOps_bf16, MatchesAModelOnSeededTriples) { matches_a_model_on_seeded_triples(kBf); }
TEST(Emulation_DitOps_fp16, MatchesAModelOnSeededTriples) { matches_a_model_on_seeded_triples(kFp); }

}  // namespace
}  // namespace fuseproof::test
