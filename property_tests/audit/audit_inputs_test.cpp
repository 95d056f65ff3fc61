// audit_inputs_test.cpp: tests audit/audit_inputs.h and audit/ulp_histogram.h: tie detection, tie sets at every
// rounding node of each op's plan, distance classes.
#include <gtest/gtest.h>

#include "audit/audit_inputs.h"
#include "audit/ulp_histogram.h"
#include "reference/dtype.h"
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
