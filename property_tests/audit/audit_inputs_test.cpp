// audit_inputs_test.cpp: tests audit/audit_inputs.h and audit/ulp_histogram.h: tie detection, tie sets at every
// rounding node of each op's plan, distance classes.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stdexcept>

#include "audit/audit_inputs.h"
#include "audit/counter_patterns.h"
#include "audit/ulp_histogram.h"
#include "reference/dtype.h"
#include "reference/half_codec.h"
#include "reference/op_plan.h"

namespace fuseproof::audit {
namespace {

TEST(Audit_Inputs_both, RoundingTies) {
  using ref::f32_from_bits;
  EXPECT_TRUE(is_rounding_tie(ref::Dtype::kBf16, f32_from_bits(0x3F808000u)));   // 1 + 2^-8: between 1 and 1 + 2^-7
  EXPECT_FALSE(is_rounding_tie(ref::Dtype::kBf16, f32_from_bits(0x3F808001u)));
  EXPECT_TRUE(is_near_rounding_tie(ref::Dtype::kBf16, f32_from_bits(0x3F808001u)));
  EXPECT_TRUE(is_rounding_tie(ref::Dtype::kFp16, f32_from_bits(0x3F801000u)));   // 1 + 2^-11
  EXPECT_TRUE(is_rounding_tie(ref::Dtype::kFp16, 1.5f * 0x1p-24f));               // the subnormal grid 2^-24
  EXPECT_FALSE(is_rounding_tie(ref::Dtype::kFp16, 0x1p-24f));
  EXPECT_FALSE(is_rounding_tie(ref::Dtype::kBf16, INFINITY));
}

TEST(Audit_Inputs_both, TieSetsAtEveryRoundingNode) {
  for (const ref::OpSpec& op : ref::op_registry())
    for (const ref::ContractSpec& c : op.contracts)
      for (ref::Dtype d : ref::kAllDtypes) {
        if (op.inputs.size() != 2) continue;  // tuple_ties (below)
        ref::MathConfig cfg;
        cfg.math = ref::MathModel::kLibm;
        const ref::OpPlan plan(op, c.contract, d, cfg);
        const auto sets = rounding_ties(plan, 1);
        // The join, the first input's own rounding (eager *_and_mul), the activation after the join (bias ops).
        const size_t want = 1 + (plan.a_rounds() ? 1 : 0) + (plan.has_p() ? 1 : 0);
        ASSERT_EQ(sets.size(), want) << op.name << " " << ref::contract_name(c.contract);
        for (const TieSet& s : sets) {
          EXPECT_GT(s.ties, 0u) << op.name << " " << s.node << " " << ref::dtype_name(d);
          EXPECT_FALSE(s.columns.empty()) << s.node;
        }
      }
}

TEST(Audit_Inputs_both, ExtremeTuplesEveryPatternInEverySlot) {
  for (ref::Dtype d : ref::kAllDtypes) {
    const auto e = extreme_patterns(d);
    ASSERT_EQ(e.size(), 38u) << ref::dtype_name(d);
    const auto t3 = extreme_tuples(d, 3);
    ASSERT_EQ(t3.size(), 54872u);  // 38^3
    EXPECT_EQ(std::set<InputTuple>(t3.begin(), t3.end()).size(), t3.size());
    for (int slot = 0; slot < 3; ++slot) {
      std::set<uint16_t> seen;
      for (const auto& t : t3) seen.insert(t[size_t(slot)]);
      EXPECT_EQ(seen, std::set<uint16_t>(e.begin(), e.end())) << slot;
    }
    for (const auto& t : t3) EXPECT_EQ(t[3], 0u);  // past the op's inputs
    EXPECT_EQ(extreme_tuples(d, 2).size(), 38u * 38u);
  }
}

TEST(Audit_Inputs_both, RandomTuplesSeeded) {
  const auto a = random_tuples(ref::Dtype::kBf16, 3, 1000, 42), b = random_tuples(ref::Dtype::kBf16, 3, 1000, 42);
  const auto c = random_tuples(ref::Dtype::kBf16, 3, 1000, 43);
  ASSERT_EQ(a.size(), 1000u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);  // negative control: another seed, other tuples
  std::set<uint16_t> slot2;
  for (const auto& t : a) {
    slot2.insert(t[2]);
    EXPECT_EQ(t[3], 0u);
  }
  EXPECT_GT(slot2.size(), 500u);
}

// The widths class's generator: one element's pattern depends only on (case seed, element), and the weights reach
// every kind of pattern the mt19937_64 draws do (specials, NaN, Inf, subnormals, the activation range).
TEST(Audit_Inputs_both, CounterRandomPatternsPerElementWithEveryKind) {
  for (const ref::Dtype d : {ref::Dtype::kBf16, ref::Dtype::kFp16}) {
    const auto draw = [d](uint64_t seed, uint64_t i) {
      CounterRng rng{counter_hash(seed, i)};
      return random_pattern(d, rng);
    };
    std::vector<uint16_t> a, c;
    for (uint64_t i = 0; i < 20000; ++i) a.push_back(draw(7, i)), c.push_back(draw(8, i));
    EXPECT_EQ(draw(7, 12345), a[12345]);  // any element on its own, in any order
    EXPECT_NE(a, c);                      // negative control: another case seed, other patterns
    const std::vector<uint16_t> specials = extreme_patterns(d);
    const std::set<uint16_t> special_set(specials.begin(), specials.end());
    size_t nan = 0, inf = 0, sub = 0, special = 0, mid = 0;
    for (uint16_t v : a) {
      const float f = ref::half_to_f32(d, v);
      nan += std::isnan(f);
      inf += std::isinf(f);
      sub += f != 0.0f && std::fabs(f) < (d == ref::Dtype::kBf16 ? 0x1p-126f : 0x1p-14f);
      special += special_set.count(v);
      mid += std::fabs(f) >= 0x1p-8f && std::fabs(f) < 16.0f;
    }
    EXPECT_GT(nan, 0u);
    EXPECT_GT(inf, 0u);
    EXPECT_GT(sub, 1000u);      // 10% subnormal draws
    EXPECT_GT(special, 2000u);  // 15% specials
    EXPECT_GT(mid, 7000u);      // 40% in [2^-8, 16)
  }
}

/// counter_pattern as its comment defines it, one branch a case: the spec the branch-free form must equal.
uint16_t counter_pattern_spec(bool bf16, uint64_t seed, uint64_t i) {
  const uint64_t h = counter_hash(seed, i);
  const uint32_t pick = uint32_t(h >> 61), r = uint32_t(h >> 32);
  const int bias = bf16 ? 127 : 15, mbits = bf16 ? 7 : 10, emax = bf16 ? 254 : 30;
  int e;
  if (pick < 4) e = bias - 6 + int(r % 9u);
  else if (pick < 6) return uint16_t(h >> 16);
  else if (pick == 6) e = int(r % uint32_t(bias - 6));
  else e = 1 + int(r % uint32_t(emax));
  return uint16_t(((h >> 40) & 0x8000u) | (uint32_t(e) << mbits) | ((h >> 8) & ((1u << mbits) - 1)));
}

// The branch-free counter patterns (host runs and the device's fill) equal the branching definition, element for
// element, over 2^22 elements of several seeds in each dtype; the negative control: another seed's run differs.
TEST(Audit_Inputs_both, CounterPatternsEqualTheirBranchingDefinition) {
  std::vector<uint16_t> run(size_t(1) << 20);
  for (const bool bf16 : {true, false})
    for (const uint64_t seed : {uint64_t(0), uint64_t(0x5EED), kBiasSalt ^ 99u, ~uint64_t(0)}) {
      const uint64_t first = seed & 0xFFFFFu;
      counter_run(bf16, seed, first, run.size(), run.data());
      size_t differ = 0;
      for (size_t j = 0; j < run.size(); ++j) {
        const uint16_t want = counter_pattern_spec(bf16, seed, first + j);
        differ += run[j] != want;
        if (j < 4096) ASSERT_EQ(counter_pattern(bf16, seed, first + j), want) << "seed " << seed << " element " << j;
      }
      EXPECT_EQ(differ, 0u) << (bf16 ? "bf16" : "fp16") << " seed " << seed;
      size_t other = 0;
      for (size_t j = 0; j < 4096; ++j) other += run[j] != counter_pattern_spec(bf16, seed + 1, first + j);
      EXPECT_GT(other, 3000u);
    }
}

TEST(Audit_Inputs_both, TupleTiesAtEveryRoundingNodeOfThreeInputOps) {
  for (const ref::OpSpec& op : ref::op_registry()) {
    if (op.inputs.size() != 3) continue;
    for (const ref::ContractSpec& c : op.contracts)
      for (ref::Dtype d : ref::kAllDtypes) {
        ref::MathConfig cfg;
        cfg.math = ref::MathModel::kLibm;
        const ref::OpPlan plan(op, c.contract, d, cfg);
        const auto sets = tuple_ties(plan, 7);
        // The rounding nodes: each kHalf node (eager: gated_residual 2, modulate 3); fma: its one rounding.
        size_t rounding = 0;
        for (const ref::Node& n : c.nodes)
          rounding += n.op != ref::NodeOp::kInput && n.op != ref::NodeOp::kConst && n.precision == ref::Precision::kHalf;
        ASSERT_EQ(sets.size(), rounding) << op.name << " " << ref::contract_name(c.contract);
        for (const TupleTieSet& s : sets) {
          EXPECT_GT(s.ties, 0u) << s.node << " " << ref::dtype_name(d);
          EXPECT_GT(s.near, 0u) << s.node << " " << ref::dtype_name(d);
          EXPECT_FALSE(s.tuples.empty()) << s.node;
          EXPECT_NE(s.node.find("round_T("), std::string::npos) << s.node;
        }
        // The last node adds a declared input (x, shift), so its set holds cancellations (x near -gate * y).
        EXPECT_GT(sets.back().cancel, 0u) << sets.back().node << " " << ref::dtype_name(d);
      }
  }
  ref::MathConfig cfg;
  cfg.math = ref::MathModel::kLibm;
  const ref::OpPlan gr(*ref::find_op("gated_residual"), ref::Contract::kEager, ref::Dtype::kBf16, cfg);
  const auto sets = tuple_ties(gr, 7), again = tuple_ties(gr, 7), other = tuple_ties(gr, 8);
  ASSERT_EQ(sets.size(), 2u);
  EXPECT_EQ(sets[0].node, "round_T(gate * y) of gated_residual");
  EXPECT_EQ(sets[1].node, "round_T(x + round_T(gate * y)) of gated_residual");
  for (size_t k = 0; k < sets.size(); ++k) {
    EXPECT_EQ(again[k].tuples, sets[k].tuples) << sets[k].node;  // seeded
    EXPECT_NE(other[k].tuples, sets[k].tuples) << sets[k].node;  // negative control: another seed, other bases
  }
  // Each tie counted is one: the tuples' value at x + round_T(gate * y) in binary32 (products of halves are exact).
  uint64_t ties = 0;
  for (const InputTuple& t : sets[1].tuples) {
    const float g = ref::half_to_f32(ref::Dtype::kBf16, t[1]), y = ref::half_to_f32(ref::Dtype::kBf16, t[2]);
    const float p = ref::half_to_f32(ref::Dtype::kBf16, gr.round(g * y));
    ties += is_rounding_tie(ref::Dtype::kBf16, ref::half_to_f32(ref::Dtype::kBf16, t[0]) + p);
  }
  EXPECT_GE(ties, sets[1].ties);
}

TEST(Audit_Inputs_both, RoundingTiesRefusesThreeInputPlans) {
  ref::MathConfig cfg;
  cfg.math = ref::MathModel::kLibm;
  const ref::OpPlan mod(*ref::find_op("modulate"), ref::Contract::kEager, ref::Dtype::kFp16, cfg);
  EXPECT_THROW(rounding_ties(mod, 1), std::logic_error);
}

TEST(Audit_UlpHistogram_both, DistanceClasses) {
  const ref::Dtype b = ref::Dtype::kBf16;
  EXPECT_EQ(distance_of(b, 0x3F80, 0x3F80), Distance::kExact);
  EXPECT_EQ(distance_of(b, 0x3F81, 0x3F80), Distance::kOne);
  EXPECT_EQ(distance_of(b, 0x3F82, 0x3F80), Distance::kTwo);
  EXPECT_EQ(distance_of(b, 0x3F8A, 0x3F80), Distance::kThreeToTen);
  EXPECT_EQ(distance_of(b, 0x3F8B, 0x3F80), Distance::kMore);
  EXPECT_EQ(distance_of(b, 0x0000, 0x8000), Distance::kZeroSign);
  EXPECT_EQ(distance_of(b, 0x0001, 0x8001), Distance::kTwo) << "across zero: two steps";
  EXPECT_EQ(distance_of(b, 0x7FFF, 0x3F80), Distance::kNanForNumber);
  EXPECT_EQ(distance_of(b, 0x3F80, 0x7FFF), Distance::kNumberForNan);
  EXPECT_EQ(distance_of(b, 0x7FC0, 0x7FFF), Distance::kNanPattern);
  UlpHistogram h;
  h.add_exact(5);
  h.add(b, 0x3F81, 0x3F80);
  EXPECT_EQ(h.total(), 6u);
  EXPECT_EQ(h.line(), "0: 5, 1: 1");
  EXPECT_EQ(UlpHistogram::from_json(h.json()).line(), h.line());
}

}  // namespace
}  // namespace fuseproof::audit
