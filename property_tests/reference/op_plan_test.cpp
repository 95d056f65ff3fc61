// op_plan_test.cpp: tests reference/op_plan.h and reference/op_registry.cpp: the tabulated form (2 inputs) and the
// forward pass (3 inputs) equal the composition node by node for every op, contract, dtype and math model; rows equal
// single evaluations; the contracts, the signed-zero rules, 1 + scale's rounding and NaN are what eager does.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
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

TEST(Reference_OpRegistry_both, SevenOpsEachWithEagerFirst) {
  std::vector<std::string> names;
  for (const OpSpec& op : op_registry()) {
    names.push_back(op.name);
    ASSERT_FALSE(op.contracts.empty());
    EXPECT_EQ(op.contracts[0].contract, Contract::kEager) << op.name;
    EXPECT_TRUE(op.inputs.size() == 2u || op.inputs.size() == 3u) << op.name;
    EXPECT_FALSE(op.envelope.empty()) << op.name;
    // The envelope's last shape is above 2^31 output elements.
    EXPECT_GT(uint64_t(op.envelope.back().rows) * uint64_t(op.envelope.back().width), uint64_t(1) << 31) << op.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"bias_gelu_tanh", "bias_gelu_erf", "silu_and_mul", "gelu_tanh_and_mul",
                                             "gelu_and_mul", "gated_residual", "modulate"}));
  EXPECT_EQ(find_op("softmax"), nullptr);
}

// The 3-input ops take their inputs in the declared order of the issue, the broadcast ones one row per group.
TEST(Reference_OpRegistry_both, ThreeInputOpsInDeclaredOrderWithGroupRows) {
  auto names = [](const OpSpec& op) {
    std::vector<std::string> v;
    for (const InputSpec& in : op.inputs) v.push_back(in.name);
    return v;
  };
  const OpSpec& gr = *find_op("gated_residual");
  const OpSpec& mod = *find_op("modulate");
  EXPECT_EQ(names(gr), (std::vector<std::string>{"x", "gate", "y"}));
  EXPECT_EQ(names(mod), (std::vector<std::string>{"x", "scale", "shift"}));
  for (const OpSpec* op : {&gr, &mod}) {
    EXPECT_TRUE(op->has_groups());
    EXPECT_NE(op->contract(Contract::kFma), nullptr) << op->name;
    EXPECT_EQ(op->contract(Contract::kFp32), nullptr) << op->name;
    EXPECT_EQ(op->inputs[0].layout, Layout::kElementwise);
    EXPECT_EQ(op->inputs[1].layout, Layout::kGroupBroadcast);
    // Output row r of group_rows 4 reads the group's row r / 4 of a [rows / 4, width] tensor.
    EXPECT_EQ(op->input_offset(1, 9, 3, 8, 4), 2 * 8 + 3);
    EXPECT_EQ(op->input_offset(1, 9, 3, 8, 1), 9 * 8 + 3);  // group_rows 1: per element
    EXPECT_EQ(op->buffer_rows(1, 12, 4), 3);
    EXPECT_EQ(op->buffer_rows(0, 12, 4), 12);
  }
  EXPECT_EQ(gr.inputs[2].layout, Layout::kElementwise);
  EXPECT_EQ(mod.inputs[2].layout, Layout::kGroupBroadcast);
  EXPECT_FALSE(find_op("silu_and_mul")->has_groups());
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
/// The cases of the ops with n_inputs inputs.
std::vector<Case> cases(size_t n_inputs) {
  std::vector<Case> v;
  for (const OpSpec& op : op_registry()) {
    if (op.inputs.size() != n_inputs) continue;
    for (const ContractSpec& c : op.contracts)
      for (Dtype d : kAllDtypes)
        for (MathModel m : {MathModel::kLibm, MathModel::kExact, MathModel::kCuda}) v.push_back({&op, c.contract, d, m});
  }
  return v;
}

RC_GTEST_PROP(Reference_OpPlan_both, TabulatedFormEqualsTheCompositionNodeByNode, ()) {
  static const std::vector<Case> all = cases(2);
  const Case c = *rc::gen::elementOf(all);
  const OpPlan& p = plan(*c.op, c.contract, c.dtype, c.math);
  for (int k = 0; k < 64; ++k) {
    const auto [a, b] = *test::gen_half_pair(c.dtype);
    const uint16_t in[2] = {a, b};
    RC_ASSERT(p.eval(a, b) == p.eval_nodes(in));
  }
}

RC_GTEST_PROP(Reference_OpPlan_both, RowEqualsEvalAtEveryFirstInput, ()) {
  static const std::vector<Case> all = cases(2);
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

/// The 3-input plans: each op and contract, both dtypes (no activation: the math model does not matter).
std::vector<Case> triple_cases() {
  std::vector<Case> v;
  for (const Case& c : cases(3))
    if (c.math == MathModel::kLibm) v.push_back(c);
  return v;
}

std::string triple_record(const OpPlan& p, const uint16_t* in, uint16_t got, uint16_t want) {
  char b[160];
  std::snprintf(b, sizeof b, "%s %s %s %s=0x%04X %s=0x%04X %s=0x%04X => 0x%04X expected 0x%04X", p.op().name.c_str(),
                contract_name(p.contract()), dtype_name(p.dtype()), p.op().inputs[0].name.c_str(), in[0],
                p.op().inputs[1].name.c_str(), in[1], p.op().inputs[2].name.c_str(), in[2], got, want);
  return b;
}

RC_GTEST_PROP(Reference_OpPlan_both, ForwardPassEqualsTheCompositionNodeByNode, ()) {
  static const std::vector<Case> all = triple_cases();
  const Case c = *rc::gen::elementOf(all);
  const OpPlan& p = plan(*c.op, c.contract, c.dtype, c.math);
  RC_ASSERT(!p.tabulated());
  for (int k = 0; k < 64; ++k) {
    const uint16_t in[3] = {*test::gen_half_bits(c.dtype), *test::gen_half_bits(c.dtype), *test::gen_half_bits(c.dtype)};
    const uint16_t got = p.eval(in), want = p.eval_nodes(in);
    if (got != want) RC_FAIL(triple_record(p, in, got, want));
  }
}

// Every triple of special patterns (each class, either sign), and a seeded uniform sample of 2^20 triples.
TEST(Reference_OpPlan_both, ForwardPassEqualsTheCompositionOnSpecialAndRandomTriples) {
  for (const Case& c : triple_cases()) {
    const OpPlan& p = plan(*c.op, c.contract, c.dtype, c.math);
    const std::vector<uint16_t> s = test::special_half_patterns(c.dtype);
    uint64_t cases = 0, bad = 0;
    auto check = [&](const uint16_t* in) {
      ++cases;
      const uint16_t got = p.eval(in), want = p.eval_nodes(in);
      if (got != want && ++bad <= 4) ADD_FAILURE() << triple_record(p, in, got, want);
    };
    for (uint16_t a : s)
      for (uint16_t b : s)
        for (uint16_t e : s) {
          const uint16_t in[3] = {a, b, e};
          check(in);
        }
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (int k = 0; k < (1 << 20); ++k) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const uint16_t in[3] = {uint16_t(state >> 16), uint16_t(state >> 32), uint16_t(state >> 48)};
      check(in);
    }
    EXPECT_EQ(bad, 0u) << "In " << cases << " cases, " << bad << " errors found in " << c.op->name << " "
                       << contract_name(c.contract) << " " << dtype_name(c.dtype);
  }
}

// eval_run (node by node over blocks) is eval element by element: every 3-input plan on every triple of special
// patterns and 2^18 random triples, in runs whose lengths are not multiples of the block, and the 2-input plans too.
TEST(Reference_OpPlan_both, EvalRunEqualsEvalElementByElement) {
  std::vector<Case> all = triple_cases();
  for (const Case& c : cases(2))
    if (c.math == MathModel::kLibm) all.push_back(c);
  for (const Case& c : all) {
    const OpPlan& p = plan(*c.op, c.contract, c.dtype, c.math);
    const int ni = p.inputs();
    const std::vector<uint16_t> s = test::special_half_patterns(c.dtype);
    std::vector<std::vector<uint16_t>> in(static_cast<size_t>(ni));
    for (size_t a = 0; a < s.size(); ++a)
      for (size_t b = 0; b < s.size(); ++b)
        for (size_t e = 0; e < (ni == 3 ? s.size() : 1); ++e) {
          const size_t idx[3] = {a, b, e};
          for (int q = 0; q < ni; ++q) in[size_t(q)].push_back(s[idx[q]]);
        }
    uint64_t state = 0x2545F4914F6CDD1Dull;
    for (int k = 0; k < (1 << 18); ++k)
      for (int q = 0; q < ni; ++q) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        in[size_t(q)].push_back(uint16_t(state >> 40));
      }
    const size_t n = in[0].size();
    std::vector<uint16_t> got(n, 0x5A5A);
    for (size_t j0 = 0, len = 1; j0 < n; j0 += len, len = len * 3 + 1) {  // runs of 1, 4, 13, 40, ...
      const size_t m = std::min(len, n - j0);
      const uint16_t* ptr[4] = {};
      for (int q = 0; q < ni; ++q) ptr[q] = in[size_t(q)].data() + j0;
      p.eval_run(ptr, m, got.data() + j0);
    }
    uint64_t bad = 0;
    for (size_t j = 0; j < n; ++j) {
      uint16_t t[4] = {};
      for (int q = 0; q < ni; ++q) t[q] = in[size_t(q)][j];
      const uint16_t want = p.eval(t);
      if (got[j] != want && ++bad <= 4)
        ADD_FAILURE() << c.op->name << " " << contract_name(c.contract) << " " << dtype_name(c.dtype) << " element "
                      << j << ": eval_run 0x" << std::hex << got[j] << " eval 0x" << want << std::dec;
    }
    EXPECT_EQ(bad, 0u) << c.op->name << " " << contract_name(c.contract) << " " << dtype_name(c.dtype) << ": " << n
                       << " elements";
  }
}

uint16_t h(Dtype d, float v) { return f32_to_half(d, v, NanPolicy::kCudaCvtRn); }

uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

// trace() is the forward pass kept node by node: its output node is eval()'s result, each kHalf node's value its raw
// result rounded to T, a kFloat32 node's value its raw result, an input its widened pattern.
TEST(Reference_OpPlan_both, TraceIsTheForwardPassNodeByNode) {
  for (const Case& c : triple_cases()) {
    const OpPlan& p = plan(*c.op, c.contract, c.dtype, c.math);
    const std::vector<Node>& nodes = c.op->contract(c.contract)->nodes;
    uint64_t state = 0x2545F4914F6CDD1Dull, rounded_away = 0;
    for (int k = 0; k < (1 << 14); ++k) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const uint16_t in[3] = {uint16_t(state >> 16), uint16_t(state >> 32), uint16_t(state >> 48)};
      float value[kMaxPlanNodes], raw[kMaxPlanNodes];
      p.trace(in, value, raw);
      const uint16_t out = p.eval(in);
      ASSERT_EQ(f32_bits(value[nodes.size() - 1]), f32_bits(half_to_f32(c.dtype, out)))
          << triple_record(p, in, out, out);
      for (size_t n = 0; n + 1 < nodes.size(); ++n) {
        const Node& nd = nodes[n];
        float want = raw[n];
        if (nd.op == NodeOp::kInput) want = half_to_f32(c.dtype, in[nd.input]);
        else if (nd.precision == Precision::kHalf) want = half_to_f32(c.dtype, p.round(raw[n]));
        if (nd.op == NodeOp::kInput) ASSERT_EQ(f32_bits(raw[n]), f32_bits(want)) << c.op->name << " node " << n;
        ASSERT_EQ(f32_bits(value[n]), f32_bits(want)) << c.op->name << " node " << n;
        // The negative control: a kHalf node's rounding does change values (raw and value are not one array).
        rounded_away += nd.precision == Precision::kHalf && nd.op != NodeOp::kInput && nd.op != NodeOp::kConst &&
                        std::isfinite(raw[n]) && f32_bits(raw[n]) != f32_bits(value[n]);
      }
    }
    const bool has_half_step = std::any_of(nodes.begin(), nodes.end() - 1, [](const Node& nd) {
      return nd.precision == Precision::kHalf && nd.op != NodeOp::kInput && nd.op != NodeOp::kConst;
    });
    if (has_half_step) EXPECT_GT(rounded_away, 0u) << c.op->name << " " << contract_name(c.contract);
  }
}

// x + p with signed zeros as IEEE: -0 + -0 = -0 (x = -0 passes every p through), every other zero sum is +0.
TEST(Reference_OpPlan_both, GatedResidualSignedZerosFollowIeee) {
  for (Dtype d : kAllDtypes) {
    const OpPlan& p = plan(*find_op("gated_residual"), Contract::kEager, d, MathModel::kLibm);
    const uint16_t one = h(d, 1.0f);
    const uint16_t mz_p[3] = {0x8000, one, 0x8000};   // x = -0, gate * y = 1 * -0 = -0
    const uint16_t pz_p[3] = {0x0000, one, 0x8000};   // x = +0, p = -0
    const uint16_t mz_pp[3] = {0x8000, one, 0x0000};  // x = -0, p = +0
    EXPECT_EQ(p.eval(mz_p), 0x8000) << dtype_name(d) << " -0 + -0";
    EXPECT_EQ(p.eval(pz_p), 0x0000) << dtype_name(d) << " +0 + -0";
    EXPECT_EQ(p.eval(mz_pp), 0x0000) << dtype_name(d) << " -0 + +0";
    // gate * y underflows to -0 in T and x = -0 keeps it: the product is rounded before the add.
    const uint16_t tiny = 0x0001, ntiny = 0x8001;  // the smallest subnormals
    const uint16_t under[3] = {0x8000, tiny, ntiny};
    EXPECT_EQ(p.eval(under), 0x8000) << dtype_name(d) << " -0 + round_T(tiny * -tiny)";
  }
}

// Eager rounds 1 + scale to T; fma keeps it in binary32. scale = half an ulp of 1 in T makes 1 + scale a tie, which
// rounds to 1 (even): eager's x * 1 = 3, fma's 3 * (1 + scale) = 3 + 0.75 ulp rounds up.
TEST(Reference_OpPlan_both, ModulateRoundsOnePlusScaleOnlyInEager) {
  for (Dtype d : kAllDtypes) {
    const OpSpec& op = *find_op("modulate");
    const OpPlan& eager = plan(op, Contract::kEager, d, MathModel::kLibm);
    const OpPlan& fma = plan(op, Contract::kFma, d, MathModel::kLibm);
    const float half_ulp = d == Dtype::kBf16 ? 0x1p-8f : 0x1p-11f;
    const uint16_t in[3] = {h(d, 3.0f), h(d, half_ulp), 0x8000};
    EXPECT_EQ(eager.eval(in), h(d, 3.0f)) << dtype_name(d);
    EXPECT_EQ(fma.eval(in), uint16_t(h(d, 3.0f) + 1)) << dtype_name(d);
    // scale = -0: 1 + -0 = 1, x * 1 = x, x + -0 = x for every x of both signs, zeros included.
    for (uint16_t x : {uint16_t(0x0000), uint16_t(0x8000), h(d, -2.5f), uint16_t(0x0001)}) {
      const uint16_t id[3] = {x, 0x8000, 0x8000};
      EXPECT_EQ(eager.eval(id), x) << dtype_name(d) << " x=" << x;
    }
  }
}

// fma rounds once: gate * y = (1 + u)^2 = 1 + 2u + u^2 loses u^2 in eager's rounded product, and x = -(1 + 2u)
// cancels the rest, so eager gives +0 and fma gives u^2 exactly.
TEST(Reference_OpPlan_both, GatedResidualFmaRoundsOnce) {
  for (Dtype d : kAllDtypes) {
    const OpSpec& op = *find_op("gated_residual");
    const float u = d == Dtype::kBf16 ? 0x1p-7f : 0x1p-10f;
    const uint16_t in[3] = {h(d, -(1.0f + 2 * u)), h(d, 1.0f + u), h(d, 1.0f + u)};
    EXPECT_EQ(plan(op, Contract::kEager, d, MathModel::kLibm).eval(in), 0x0000) << dtype_name(d);
    EXPECT_EQ(plan(op, Contract::kFma, d, MathModel::kLibm).eval(in), h(d, u * u)) << dtype_name(d);
  }
}

// NaN by the plan's policy: every NaN result is the device's 0x7FFF, whichever input or step made it; the c10 scalar
// policy gives its own pattern.
TEST(Reference_OpPlan_both, ThreeInputNanAsThePolicy) {
  for (Dtype d : kAllDtypes) {
    const uint16_t inf = d == Dtype::kBf16 ? 0x7F80 : 0x7C00, nan = uint16_t(inf | 1), one = h(d, 1.0f);
    for (const char* name : {"gated_residual", "modulate"})
      for (Contract c : {Contract::kEager, Contract::kFma}) {
        const OpPlan& p = plan(*find_op(name), c, d, MathModel::kLibm);
        for (int slot = 0; slot < 3; ++slot) {
          uint16_t in[3] = {one, one, one};
          in[slot] = nan;
          EXPECT_EQ(p.eval(in), 0x7FFF) << name << " " << dtype_name(d) << " NaN in slot " << slot;
        }
      }
    const uint16_t inf_times_zero[3] = {one, inf, 0x0000};  // gate * y = inf * 0
    EXPECT_EQ(plan(*find_op("gated_residual"), Contract::kEager, d, MathModel::kLibm).eval(inf_times_zero), 0x7FFF);
    const uint16_t zero_times_inf[3] = {0x0000, uint16_t(inf | 0x8000), one};  // x * (1 + -inf)
    EXPECT_EQ(plan(*find_op("modulate"), Contract::kEager, d, MathModel::kLibm).eval(zero_times_inf), 0x7FFF);
    MathConfig scalar;
    scalar.math = MathModel::kLibm;
    scalar.nan = NanPolicy::kC10Scalar;
    const OpPlan c10(*find_op("gated_residual"), Contract::kEager, d, scalar);
    EXPECT_EQ(c10.eval(inf_times_zero), d == Dtype::kBf16 ? kC10ScalarBf16Nan : uint16_t(0x8000 | kFp16QuietNan))
        << "x86's default NaN from inf * 0 is negative: c10's fp16 conversion keeps its sign";
  }
}

// The two contracts of each 3-input op are different functions (the comparisons above could fail).
TEST(Reference_OpPlan_both, ThreeInputEagerAndFmaDiffer) {
  for (const char* name : {"gated_residual", "modulate"})
    for (Dtype d : kAllDtypes) {
      const OpPlan& eager = plan(*find_op(name), Contract::kEager, d, MathModel::kLibm);
      const OpPlan& fma = plan(*find_op(name), Contract::kFma, d, MathModel::kLibm);
      uint64_t differ = 0, state = 1;
      for (int k = 0; k < 65536; ++k) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        const uint16_t in[3] = {uint16_t(state >> 16), uint16_t(state >> 32), uint16_t(state >> 48)};
        differ += eager.eval(in) != fma.eval(in);
      }
      EXPECT_GT(differ, 0u) << name << " " << dtype_name(d);
    }
}

}  // namespace
}  // namespace fuseproof::ref
