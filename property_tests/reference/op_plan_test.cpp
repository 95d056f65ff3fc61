// op_plan_test.cpp: tests reference/op_plan.h and reference/op_registry.cpp: the tabulated form equals the
// composition node by node for every op, contract, dtype and math model; rows equal single evaluations; the contracts
// and the signed-zero rules are what eager does.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <memory>
#include <tuple>

#include "property_tests/support/bit_patterns.h"
#include "property_tests/support/golden_paths.h"
#include "reference/half_codec.h"
#include "reference/op_plan.h"

namespace fuseproof::ref {
namespace {

/// Plans built once per (op, contract, dtype, math).
const OpPlan& plan(const OpSpec& op, Contract c, Dtype d, MathModel m) {
  static std::map<std::tuple<std::string, Contract, Dtype, MathModel>, std::unique_ptr<OpPlan>> plans;
  auto& p = plans[{op.name, c, d, m}];
  if (!p) {
    MathConfig cfg;
    cfg.math = m;
    if (m == MathModel::kCuda) cfg.mufu = &test::arch_mufu();
    p = std::make_unique<OpPlan>(op, c, d, cfg);
  }
  return *p;
}

TEST(Reference_OpRegistry_both, FiveOpsEachWithEagerFirst) {
  std::vector<std::string> names;
  for (const OpSpec& op : op_registry()) {
    names.push_back(op.name);
    ASSERT_FALSE(op.contracts.empty());
    EXPECT_EQ(op.contracts[0].contract, Contract::kEager) << op.name;
    EXPECT_EQ(op.inputs.size(), 2u) << op.name;
    EXPECT_FALSE(op.envelope.empty()) << op.name;
    // The envelope's last shape is above 2^31 output elements.
    EXPECT_GT(uint64_t(op.envelope.back().rows) * uint64_t(op.envelope.back().width), uint64_t(1) << 31) << op.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"bias_gelu_tanh", "bias_gelu_erf", "silu_and_mul", "gelu_tanh_and_mul",
                                             "gelu_and_mul"}));
  EXPECT_EQ(find_op("softmax"), nullptr);
}

TEST(Reference_OpRegistry_both, PackedLayoutSharesOneBuffer) {
  const OpSpec& silu = *find_op("silu_and_mul");
  EXPECT_EQ(silu.buffers(), std::vector<std::string>{"x"});
  EXPECT_EQ(silu.buffer_row_elems(0, 8), 16);
  EXPECT_EQ(silu.input_offset(0, 2, 3, 8), 2 * 16 + 3);      // gate = x[:, :d]
  EXPECT_EQ(silu.input_offset(1, 2, 3, 8), 2 * 16 + 8 + 3);  // up = x[:, d:]
  const OpSpec& bias = *find_op("bias_gelu_tanh");
  EXPECT_EQ(bias.buffers(), (std::vector<std::string>{"x", "bias"}));
  EXPECT_TRUE(bias.buffer_broadcast(1));
  EXPECT_EQ(bias.input_offset(1, 5, 3, 8), 3);
}

/// Every plan the tests check: each op and contract, both dtypes, the libm and exact models (the cuda model has its
/// own whole-domain test against the device in domain_sweep_test.cpp).
struct Case {
  const OpSpec* op;
  Contract contract;
  Dtype dtype;
  MathModel math;
};
std::vector<Case> cases() {
  std::vector<Case> v;
  for (const OpSpec& op : op_registry())
    for (const ContractSpec& c : op.contracts)
      for (Dtype d : kAllDtypes)
        for (MathModel m : {MathModel::kLibm, MathModel::kExact, MathModel::kCuda}) v.push_back({&op, c.contract, d, m});
  return v;
}

RC_GTEST_PROP(Reference_OpPlan_both, TabulatedFormEqualsTheCompositionNodeByNode, ()) {
  static const std::vector<Case> all = cases();
  const Case c = *rc::gen::elementOf(all);
  const OpPlan& p = plan(*c.op, c.contract, c.dtype, c.math);
  for (int k = 0; k < 64; ++k) {
    const auto [a, b] = *test::gen_half_pair(c.dtype);
    const uint16_t in[2] = {a, b};
    RC_ASSERT(p.eval(a, b) == p.eval_nodes(in));
  }
}

RC_GTEST_PROP(Reference_OpPlan_both, RowEqualsEvalAtEveryFirstInput, ()) {
  static const std::vector<Case> all = cases();
  const Case c = *rc::gen::elementOf(all);
  const OpPlan& p = plan(*c.op, c.contract, c.dtype, c.math);
  const uint16_t b = *test::gen_half_bits(c.dtype);
  std::vector<uint16_t> row(65536);
  p.row(b, row.data());
  for (uint32_t a = 0; a < 65536; ++a) RC_ASSERT(row[a] == p.eval(uint16_t(a), b));
}

// The two contracts are different functions (the comparison above could fail), and differ where eager's extra
// rounding of act(gate) matters.
TEST(Reference_OpPlan_both, EagerAndFp32ContractsDiffer) {
  for (const char* name : {"silu_and_mul", "gelu_tanh_and_mul", "gelu_and_mul"})
    for (Dtype d : kAllDtypes) {
      const OpSpec& op = *find_op(name);
      const OpPlan& eager = plan(op, Contract::kEager, d, MathModel::kLibm);
      const OpPlan& fp32 = plan(op, Contract::kFp32, d, MathModel::kLibm);
      uint64_t differ = 0;
      const uint16_t up = f32_to_half(d, 1.5f, NanPolicy::kCudaCvtRn);
      for (uint32_t g = 0; g < 65536; ++g) differ += eager.eval(uint16_t(g), up) != fp32.eval(uint16_t(g), up);
      EXPECT_GT(differ, 0u) << name << " " << dtype_name(d);
    }
}

// Signed zeros as IEEE and eager give them: act(+-0) = +-0, and the product keeps the sign rule, so up = -0 gives -0
// for a positive act (vLLM's act * (up + 0) gives +0 there: the mutant zero_sign_lost).
TEST(Reference_OpPlan_both, SignedZerosFollowIeee) {
  for (Dtype d : kAllDtypes) {
    const uint16_t one = f32_to_half(d, 1.0f, NanPolicy::kCudaCvtRn);
    const OpPlan& silu = plan(*find_op("silu_and_mul"), Contract::kEager, d, MathModel::kLibm);
    EXPECT_EQ(silu.eval(0x0000, 0x8000), 0x8000) << "silu(+0) * -0";
    EXPECT_EQ(silu.eval(0x8000, 0x0000), 0x8000) << "silu(-0) * +0";
    EXPECT_EQ(silu.eval(one, 0x8000), 0x8000) << "silu(1) * -0";
    const OpPlan& gelu = plan(*find_op("bias_gelu_erf"), Contract::kEager, d, MathModel::kLibm);
    EXPECT_EQ(gelu.eval(0x8000, 0x8000), 0x8000) << "gelu(-0 + -0)";
    EXPECT_EQ(gelu.eval(0x8000, 0x0000), 0x0000) << "gelu(-0 + +0) = gelu(+0)";
  }
}

// Eager's NaN: every NaN output is 0x7FFF (cvt.rn on the device), and gelu(-inf) is NaN ((-inf) * 0), as on the GPU.
TEST(Reference_OpPlan_both, NanAndInfinityAsEager) {
  for (Dtype d : kAllDtypes) {
    const uint16_t ninf = d == Dtype::kBf16 ? 0xFF80 : 0xFC00, one = f32_to_half(d, 1.0f, NanPolicy::kCudaCvtRn);
    EXPECT_EQ(plan(*find_op("bias_gelu_erf"), Contract::kEager, d, MathModel::kLibm).eval(ninf, 0x0000), 0x7FFF);
    EXPECT_EQ(plan(*find_op("silu_and_mul"), Contract::kEager, d, MathModel::kLibm).eval(ninf, one), 0x7FFF)
        << "silu(-inf) = -inf / inf";
  }
}

}  // namespace
}  // namespace fuseproof::ref
