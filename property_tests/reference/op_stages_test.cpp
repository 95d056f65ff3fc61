// op_stages_test.cpp: tests OpPlan::stages() (reference/op_stages.cpp): the stages of the 3-input eager compositions
// with their exact operand counts; at every witness and on a seeded sample of pairs, the op's output is the stage's
// rounding computed from the half codecs alone; the neutral inputs pass every result through, and a wrong neutral
// is caught; compositions with shared operands or no neutral are left out with a reason.
#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <memory>
#include <thread>
#include <tuple>

#include "property_tests/support/mismatch_log.h"
#include "reference/half_codec.h"
#include "reference/op_plan.h"
#include "common/parallel_for.h"

namespace fuseproof::ref {
namespace {

const OpPlan& plan(const OpSpec& op, Contract c, Dtype d) {
  static std::map<std::tuple<std::string, Contract, Dtype>, std::unique_ptr<OpPlan>> plans;
  auto& p = plans[{op.name, c, d}];
  if (!p) {
    MathConfig cfg;
    cfg.math = MathModel::kLibm;
    p = std::make_unique<OpPlan>(op, c, d, cfg);
  }
  return *p;
}
const OpPlan& eager(const char* name, Dtype d) { return plan(*find_op(name), Contract::kEager, d); }

uint16_t h(Dtype d, float v) { return f32_to_half(d, v, NanPolicy::kCudaCvtRn); }

/// NaN patterns of a dtype: exponent all ones, mantissa not zero, either sign.
uint32_t nan_patterns(Dtype d) { return d == Dtype::kBf16 ? 2 * 127 : 2 * 1023; }
/// Every pattern a rounding to T gives on the device: the non-NaN ones and the canonical NaN 0x7FFF.
size_t every_result(Dtype d) { return 65536 - nan_patterns(d) + 1; }

/// The stage's rounding of (a, b), from the codecs alone: round_T(widen(a) (+|*) widen(b)), NaN as the device's.
uint16_t stage_expected(Dtype d, const Stage& s, uint16_t a, uint16_t b) {
  const float x = half_to_f32(d, a), y = half_to_f32(d, b);
  return f32_to_half(d, s.combine == Combine::kAdd ? x + y : x * y, NanPolicy::kCudaCvtRn);
}

/// Checks the op's output against the stage's rounding at (ia, ib); records a TestFloat line on a mismatch.
bool check_pair(const OpPlan& p, const Stage& s, size_t ia, size_t ib, test::MismatchLog& log) {
  const auto in = s.inputs(ia, ib);
  const uint16_t got = p.eval(in.data()), want = stage_expected(p.dtype(), s, s.a.values[ia], s.b.values[ib]);
  if (got == want) return true;
  char b[96];
  std::snprintf(b, sizeof b, " [a=0x%04X b=0x%04X]", s.a.values[ia], s.b.values[ib]);
  std::string line = p.op().name + " " + dtype_name(p.dtype()) + " " + s.text + b;
  for (int i = 0; i < p.inputs(); ++i) {
    std::snprintf(b, sizeof b, " %s=0x%04X", p.op().inputs[size_t(i)].name.c_str(), in[size_t(i)]);
    line += b;
  }
  std::snprintf(b, sizeof b, " => 0x%04X expected 0x%04X", got, want);
  log.record_line(line + b);
  return false;
}

/// Every witness of a (with a partner of b drawn from a seeded generator), every witness of b likewise, and `sample`
/// seeded random pairs; returns the number of cases.
uint64_t check_stage(const OpPlan& p, const Stage& s, uint64_t sample, test::MismatchLog& log) {
  uint64_t state = 0x243F6A8885A308D3ull ^ uint64_t(s.node), cases = 0;
  auto next = [&](size_t n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return size_t((state >> 33) % n);
  };
  const size_t na = s.a.values.size(), nb = s.b.values.size();
  for (size_t ia = 0; ia < na; ++ia, ++cases) check_pair(p, s, ia, next(nb), log);
  for (size_t ib = 0; ib < nb; ++ib, ++cases) check_pair(p, s, next(na), ib, log);
  for (uint64_t k = 0; k < sample; ++k, ++cases) check_pair(p, s, next(na), next(nb), log);
  return cases;
}

void expect_operand(const Stage::Operand& o, const std::string& text, size_t values, uint32_t depends,
                    uint32_t varies) {
  EXPECT_EQ(o.text, text);
  EXPECT_EQ(o.values.size(), values) << text;
  EXPECT_EQ(o.witness.size(), o.values.size()) << text;
  EXPECT_EQ(o.depends, depends) << text;
  EXPECT_EQ(o.varies, varies) << text;
  EXPECT_TRUE(std::is_sorted(o.values.begin(), o.values.end())) << text;
  EXPECT_TRUE(std::adjacent_find(o.values.begin(), o.values.end()) == o.values.end()) << text;
}

// gated_residual: round_T(gate * y) over every (gate, y) with x = -0; round_T(x + p) over every x and every p a
// rounding gives (NaN once), p reached as gate * 1.
void GatedResidualEagerHasTwoStages(Dtype d) {
  const OpPlan& p = eager("gated_residual", d);
  const auto& st = p.stages();
  ASSERT_EQ(st.size(), 2u) << p.no_stages_reason();
  EXPECT_EQ(p.no_stages_reason(), "");
  EXPECT_TRUE(p.stages_left_out().empty());
  EXPECT_EQ(st[0].text, "round_T(gate * y)");
  EXPECT_EQ(st[0].combine, Combine::kMul);
  expect_operand(st[0].a, "gate", 65536, 0b010, 0b010);
  expect_operand(st[0].b, "y", 65536, 0b100, 0b100);
  EXPECT_EQ(st[0].pairs(), uint64_t(1) << 32);
  EXPECT_EQ(st[0].neutral[0], 0x8000);
  EXPECT_EQ(st[0].neutral_text, "x = 0x8000 (-0)");
  EXPECT_EQ(st[1].text, "round_T(x + round_T(gate * y))");
  EXPECT_EQ(st[1].combine, Combine::kAdd);
  expect_operand(st[1].a, "x", 65536, 0b001, 0b001);
  expect_operand(st[1].b, "round_T(gate * y)", every_result(d), 0b110, 0b010);
  EXPECT_EQ(st[1].b.how, "every gate with y = " + half_text(d, h(d, 1.0f)));
  for (size_t k = 0; k < st[1].b.values.size(); ++k) ASSERT_EQ(st[1].b.witness[k][2], h(d, 1.0f));
  EXPECT_EQ(st[1].pairs(), uint64_t(65536) * every_result(d));
  EXPECT_EQ(st[1].pairs(), d == Dtype::kBf16 ? 4278386688ull : 4160946176ull);
}

// modulate: round_T(1 + scale) over every scale; round_T(x * s) over every x and the s some scale gives; round_T(m +
// shift) over every m (reached with scale = +0) and every shift.
void ModulateEagerHasThreeStages(Dtype d) {
  const OpPlan& p = eager("modulate", d);
  const auto& st = p.stages();
  ASSERT_EQ(st.size(), 3u) << p.no_stages_reason();
  EXPECT_EQ(st[0].text, "round_T(1 + scale)");
  expect_operand(st[0].a, "1", 1, 0, 0);
  EXPECT_EQ(st[0].a.values[0], h(d, 1.0f));
  expect_operand(st[0].b, "scale", 65536, 0b010, 0b010);
  EXPECT_EQ(st[0].pairs(), 65536u);
  EXPECT_EQ(st[0].neutral_text, "x = " + half_text(d, h(d, 1.0f)) + ", shift = 0x8000 (-0)");

  // The patterns 1 + scale reaches, counted from the codecs alone (NaN once: the device's 0x7FFF).
  std::vector<char> reach(65536, 0);
  for (uint32_t s = 0; s < 65536; ++s) reach[h(d, 1.0f + half_to_f32(d, uint16_t(s)))] = 1;
  const size_t reachable = size_t(std::count(reach.begin(), reach.end(), 1));
  EXPECT_EQ(reachable, d == Dtype::kBf16 ? 32899u : 33795u);
  EXPECT_EQ(st[1].text, "round_T(x * round_T(1 + scale))");
  expect_operand(st[1].a, "x", 65536, 0b001, 0b001);
  expect_operand(st[1].b, "round_T(1 + scale)", reachable, 0b010, 0b010);
  for (uint16_t s : st[1].b.values) EXPECT_TRUE(reach[s]) << s;
  EXPECT_EQ(st[1].neutral_text, "shift = 0x8000 (-0)");
  EXPECT_EQ(st[1].pairs(), uint64_t(65536) * reachable);

  EXPECT_EQ(st[2].text, "round_T(round_T(x * round_T(1 + scale)) + shift)");
  expect_operand(st[2].a, "round_T(x * round_T(1 + scale))", every_result(d), 0b011, 0b001);
  EXPECT_EQ(st[2].a.how, "every x with scale = 0x0000 (+0)");
  expect_operand(st[2].b, "shift", 65536, 0b100, 0b100);
  EXPECT_EQ(st[2].pairs(), uint64_t(65536) * every_result(d));
}

// At every witness of each operand and on 2^20 seeded pairs, the op's output is the stage's rounding.
void OutputIsTheStageRoundingAtEveryWitness(Dtype d) {
  for (const char* name : {"gated_residual", "modulate"}) {
    const OpPlan& p = eager(name, d);
    for (const Stage& s : p.stages()) {
      test::MismatchLog log(std::string(name) + " " + s.text, d);
      const uint64_t cases = check_stage(p, s, uint64_t(1) << 20, log);
      FUSEPROOF_EXPECT_CLEAN(log, cases);
    }
  }
}

// stage_row is the op's output along a row of pairs: the first and last rows and 8 seeded ones of every stage.
void StageRowEqualsTheOutputAtTheWitnesses(Dtype d) {
  for (const char* name : {"gated_residual", "modulate"}) {
    const OpPlan& p = eager(name, d);
    for (const Stage& s : p.stages()) {
      std::vector<size_t> rows = {0, s.b.values.size() - 1};
      uint64_t state = 99;
      for (int k = 0; k < 8; ++k) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        rows.push_back(size_t((state >> 33) % s.b.values.size()));
      }
      std::vector<uint16_t> row(s.a.values.size());
      uint64_t bad = 0;
      for (size_t ib : rows) {
        p.stage_row(s, ib, row.data());
        for (size_t ia = 0; ia < row.size(); ++ia) {
          const auto in = s.inputs(ia, ib);
          bad += row[ia] != p.eval(in.data());
        }
      }
      EXPECT_EQ(bad, 0u) << name << " " << s.text;
    }
  }
}

// Each witness holds the neutral inputs outside both operands, and inputs() writes b's inputs over a's witness.
void WitnessesCarryTheNeutralInputs(Dtype d) {
  for (const char* name : {"gated_residual", "modulate"})
    for (const Stage& s : eager(name, d).stages()) {
      const uint32_t free = 0b111u & ~(s.a.depends | s.b.depends);
      for (const Stage::Operand* o : {&s.a, &s.b})
        for (const auto& w : o->witness)
          for (int i = 0; i < 3; ++i)
            if (free >> i & 1u) ASSERT_EQ(w[size_t(i)], s.neutral[size_t(i)]) << name << " " << s.text;
      const auto in = s.inputs(s.a.values.size() - 1, 0);
      for (int i = 0; i < 3; ++i) {
        const uint16_t want = s.b.depends >> i & 1u   ? s.b.witness[0][size_t(i)]
                              : s.a.depends >> i & 1u ? s.a.witness.back()[size_t(i)]
                                                      : s.neutral[size_t(i)];
        EXPECT_EQ(in[size_t(i)], want) << name << " " << s.text << " input " << i;
      }
    }
}

// The neutral inputs pass every result through: along rows of pairs (one operand fixed at -0, +0, 1, -1 or a seeded
// index, the other over all its values), the op's output is the stage's result at every pair, and the rows give every
// result the stage can give: each pattern a rounding gives (NaN once), or with a constant operand each
// round_T(c op v) from the codecs.
void NeutralPassesEveryResultThrough(Dtype d) {
  for (const char* name : {"gated_residual", "modulate"}) {
    const OpPlan& p = eager(name, d);
    for (const Stage& s : p.stages()) {
      std::vector<char> seen(65536, 0);
      test::MismatchLog log(std::string(name) + " " + s.text, d);
      uint64_t cases = 0, state = 7;
      for (int fixed_a = 0; fixed_a < 2; ++fixed_a) {
        const Stage::Operand& f = fixed_a ? s.a : s.b;
        const Stage::Operand& other = fixed_a ? s.b : s.a;
        std::vector<size_t> rows;
        for (uint16_t v : {uint16_t(0x8000), uint16_t(0x0000), h(d, 1.0f), h(d, -1.0f)}) {
          const auto it = std::lower_bound(f.values.begin(), f.values.end(), v);
          if (it != f.values.end() && *it == v) rows.push_back(size_t(it - f.values.begin()));
        }
        for (int k = 0; k < 8; ++k) {
          state = state * 6364136223846793005ull + 1442695040888963407ull;
          rows.push_back(size_t((state >> 33) % f.values.size()));
        }
        for (size_t r : rows)
          for (size_t o = 0; o < other.values.size(); ++o, ++cases) {
            const size_t ia = fixed_a ? r : o, ib = fixed_a ? o : r;
            check_pair(p, s, ia, ib, log);
            seen[stage_expected(d, s, s.a.values[ia], s.b.values[ib])] = 1;
          }
      }
      FUSEPROOF_EXPECT_CLEAN(log, cases);
      size_t want = every_result(d);
      if (s.a.values.size() == 1 || s.b.values.size() == 1) {
        const Stage::Operand& c = s.a.values.size() == 1 ? s.a : s.b;
        const Stage::Operand& v = s.a.values.size() == 1 ? s.b : s.a;
        std::vector<char> all(65536, 0);
        for (uint16_t x : v.values) all[stage_expected(d, s, c.values[0], x)] = 1;
        want = size_t(std::count(all.begin(), all.end(), 1));
      }
      EXPECT_EQ(size_t(std::count(seen.begin(), seen.end(), 1)), want) << name << " " << s.text;
    }
  }
}

// Negative control: x = +0 is not neutral for round_T(gate * y) (+0 + -0 = +0), and the check above sees it.
void WrongNeutralIsCaught(Dtype d) {
  const OpPlan& p = eager("gated_residual", d);
  Stage wrong = p.stages()[0];
  wrong.neutral[0] = 0x0000;
  for (auto& w : wrong.a.witness) w[0] = 0x0000;
  for (auto& w : wrong.b.witness) w[0] = 0x0000;
  test::MismatchLog log("gated_residual with x = +0", d, 0);
  check_stage(p, wrong, uint64_t(1) << 16, log);
  EXPECT_GT(log.count(), 0u);
  // Exactly where gate * y rounds to -0: gate = 1, y = -0.
  test::MismatchLog one("gated_residual with x = +0", d, 0);
  EXPECT_FALSE(check_pair(p, wrong, h(d, 1.0f), 0x8000, one));
  EXPECT_TRUE(check_pair(p, p.stages()[0], h(d, 1.0f), 0x8000, one));
}

// The fma contracts round three operands at once: no stage, and the reason says so.
void FmaContractHasNoStages(Dtype d) {
  for (const char* name : {"gated_residual", "modulate"}) {
    const OpPlan& p = plan(*find_op(name), Contract::kFma, d);
    EXPECT_TRUE(p.stages().empty()) << name;
    EXPECT_NE(p.no_stages_reason().find("contract fma: round_T(fmaf("), std::string::npos) << p.no_stages_reason();
    EXPECT_NE(p.no_stages_reason().find("rounds three operands at once"), std::string::npos);
  }
  EXPECT_EQ(plan(*find_op("modulate"), Contract::kFma, d).no_stages_reason(),
            "contract fma: round_T(fmaf(x, 1 + scale, shift)) rounds three operands at once, so no rounding boundary "
            "is a 2-input step of T patterns");
}

// A 2-input op's one boundary is the domain class's.
void TwoInputOpsHaveNoStages(Dtype d) {
  for (const OpSpec& op : op_registry()) {
    if (op.inputs.size() != 2) continue;
    for (const ContractSpec& c : op.contracts) {
      const OpPlan& p = plan(op, c.contract, d);
      EXPECT_TRUE(p.stages().empty()) << op.name;
      EXPECT_EQ(p.no_stages_reason(), "2-input op: the domain class enumerates its one boundary") << op.name;
    }
  }
}

/// A 3-input op over its own composition (for the analysis on compositions the registry does not have).
std::unique_ptr<OpSpec> custom(const char* name, Composition c) {
  auto op = std::make_unique<OpSpec>();
  op->name = name;
  op->inputs = {{"x", Layout::kElementwise}, {"y", Layout::kElementwise}, {"z", Layout::kElementwise}};
  op->contracts = {{Contract::kEager, c.nodes(), "test"}};
  return op;
}

// Compositions outside the registry: shared operands, a rest that no candidate makes the identity, a binary32
// intermediate, and a neutral that must be 1 (a product after the stage).
void CompositionsOutsideTheRegistry(Dtype d) {
  MathConfig cfg;
  cfg.math = MathModel::kLibm;
  {  // out = round(round(x * y) + x): the add's operands both read x.
    Composition c;
    const int x = c.input(0), y = c.input(1);
    c.input(2);
    c.add(c.mul(x, y, Precision::kHalf), x, Precision::kHalf);
    const auto op = custom("shared", c);
    const OpPlan p(*op, Contract::kEager, d, cfg);
    ASSERT_EQ(p.stages().size(), 0u);
    ASSERT_EQ(p.stages_left_out().size(), 2u);
    EXPECT_EQ(p.stages_left_out()[0], "round_T(x * y): the rest of the composition reads x and y other than through "
                                      "this step");
    EXPECT_EQ(p.stages_left_out()[1],
              "round_T(round_T(x * y) + x): both operands read x, so their pairs are not independent");
    EXPECT_NE(p.no_stages_reason().find("no step is a 2-input rounding"), std::string::npos);
  }
  {  // out = silu(round(round(x * y) + z)): no z passes every result of the add through silu.
    Composition c;
    const int x = c.input(0), y = c.input(1), z = c.input(2);
    c.activation(Activation::kSilu, c.add(c.mul(x, y, Precision::kHalf), z, Precision::kHalf), Precision::kHalf);
    const auto op = custom("activation_after", c);
    const OpPlan p(*op, Contract::kEager, d, cfg);
    EXPECT_TRUE(p.stages().empty());
    ASSERT_EQ(p.stages_left_out().size(), 2u);
    EXPECT_EQ(p.stages_left_out()[0], "round_T(x * y): no choice of z from {+0, -0, 1, -1, 2, 0.5} passes every "
                                      "result through to the output");
  }
  {  // out = round(x * y + z) with the product in binary32: no stage sees T patterns only.
    Composition c;
    const int x = c.input(0), y = c.input(1), z = c.input(2);
    c.add(c.mul(x, y, Precision::kFloat32), z, Precision::kHalf);
    const auto op = custom("binary32_product", c);
    const OpPlan p(*op, Contract::kEager, d, cfg);
    EXPECT_TRUE(p.stages().empty());
    EXPECT_EQ(p.no_stages_reason(),
              "contract eager: x * y stays in binary32, so the step reading it does not see T patterns only");
  }
  {  // out = round(round(x + y) * z): x + y passes through with z = 1 (+0 and -0 are tried first and fail).
    Composition c;
    const int x = c.input(0), y = c.input(1), z = c.input(2);
    c.mul(c.add(x, y, Precision::kHalf), z, Precision::kHalf);
    const auto op = custom("scaled_sum", c);
    const OpPlan p(*op, Contract::kEager, d, cfg);
    ASSERT_EQ(p.stages().size(), 2u);
    EXPECT_EQ(p.stages()[0].neutral_text, "z = " + half_text(d, h(d, 1.0f)));
    // x + y reaches every result through x with y = -0 (y = +0 would turn -0 into +0).
    EXPECT_EQ(p.stages()[1].a.values.size(), every_result(d));
    EXPECT_EQ(p.stages()[1].a.how, "every x with y = 0x8000 (-0)");
    test::MismatchLog log("scaled_sum", d);
    uint64_t cases = 0;
    for (const Stage& s : p.stages()) cases += check_stage(p, s, uint64_t(1) << 16, log);
    FUSEPROOF_EXPECT_CLEAN(log, cases);
  }
}

// stages() is computed once even when many threads ask at once.
void ComputedOnceAcrossThreads(Dtype d) {
  MathConfig cfg;
  cfg.math = MathModel::kLibm;
  const OpPlan p(*find_op("modulate"), Contract::kEager, d, cfg);
  std::vector<const std::vector<Stage>*> got(4);
  run_workers(unsigned(got.size()), [&](unsigned k) { got[k] = &p.stages(); });
  for (const auto* g : got) {
    EXPECT_EQ(g, got[0]);
    EXPECT_EQ(g->size(), 3u);
  }
}

/// One test per dtype of each property above: Reference_OpStages_bf16.<Property>, Reference_OpStages_fp16.<Property>.
#define FUSEPROOF_STAGES_TEST(Property)                            \
  TEST(Reference_OpStages_bf16, Property) { Property(Dtype::kBf16); } \
  TEST(Reference_OpStages_fp16, Property) { Property(Dtype::kFp16); }
FUSEPROOF_STAGES_TEST(GatedResidualEagerHasTwoStages)
FUSEPROOF_STAGES_TEST(ModulateEagerHasThreeStages)
FUSEPROOF_STAGES_TEST(OutputIsTheStageRoundingAtEveryWitness)
FUSEPROOF_STAGES_TEST(StageRowEqualsTheOutputAtTheWitnesses)
FUSEPROOF_STAGES_TEST(WitnessesCarryTheNeutralInputs)
FUSEPROOF_STAGES_TEST(NeutralPassesEveryResultThrough)
FUSEPROOF_STAGES_TEST(WrongNeutralIsCaught)
FUSEPROOF_STAGES_TEST(FmaContractHasNoStages)
FUSEPROOF_STAGES_TEST(TwoInputOpsHaveNoStages)
FUSEPROOF_STAGES_TEST(CompositionsOutsideTheRegistry)
FUSEPROOF_STAGES_TEST(ComputedOnceAcrossThreads)

// Patterns as the stage texts print them: hex, then the shortest decimal that rounds back.
TEST(Reference_HalfText_both, HexThenShortestDecimal) {
  EXPECT_EQ(half_text(Dtype::kBf16, 0x3F80), "0x3F80 (1)");
  EXPECT_EQ(half_text(Dtype::kBf16, 0x8000), "0x8000 (-0)");
  EXPECT_EQ(half_text(Dtype::kFp16, 0x0000), "0x0000 (+0)");
  EXPECT_EQ(half_text(Dtype::kFp16, 0x3C00), "0x3C00 (1)");
  EXPECT_EQ(half_text(Dtype::kBf16, 0x7FFF), "0x7FFF (nan)");
  EXPECT_EQ(half_text(Dtype::kFp16, 0xFC00), "0xFC00 (-inf)");
  EXPECT_EQ(half_text(Dtype::kBf16, 0x3F81), "0x3F81 (1.01)");
  EXPECT_EQ(half_text(Dtype::kFp16, 0x3C01), "0x3C01 (1.001)");
  EXPECT_EQ(half_text(Dtype::kFp16, 0x0001), "0x0001 (6e-08)");
  EXPECT_EQ(half_text(Dtype::kFp16, 0x7BFF), "0x7BFF (6.55e+04)");
}

}  // namespace
}  // namespace fuseproof::ref
