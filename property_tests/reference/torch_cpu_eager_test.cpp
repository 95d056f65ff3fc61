// torch_cpu_eager_test.cpp: the reference against live eager libtorch on the CPU (add all pairs; GELU all inputs;
// the 3-input ops on random, extreme and every stage's witness triples, and the patterns 1 + scale reaches).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <tuple>
#include <utility>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "property_tests/support/bit_patterns.h"
#include "property_tests/support/mismatch_log.h"
#include "reference/add_round.h"
#include "reference/activation_table.h"
#include "reference/half_codec.h"
#include "reference/op_plan.h"

namespace fuseproof::ref {
namespace {

torch::Dtype torch_dtype(Dtype d) { return d == Dtype::kBf16 ? torch::kBFloat16 : torch::kHalf; }

torch::Tensor patterns(Dtype d, int64_t first, int64_t count) {
  return torch::arange(first, first + count, torch::kInt32).to(torch::kInt16).view(torch_dtype(d));
}

const uint16_t* bits(const torch::Tensor& t) { return reinterpret_cast<const uint16_t*>(t.data_ptr()); }

/// The NaN pattern libtorch's vectorized CPU add gives, by version: bf16 always blends 0xFFFF (cvtfp32_bf16);
/// fp16 went through c10's scalar conversion (sign | 0x7E00) until 2.x vectorised it with VCVTPS2PH.
NanPolicy cpu_vector_nan_policy(Dtype d) {
  if (d == Dtype::kBf16) return NanPolicy::kC10Vectorized;
  return TORCH_VERSION_MAJOR < 2 ? NanPolicy::kC10Scalar : NanPolicy::kC10Vectorized;
}

void add_all_pairs(Dtype d) {
  const NanPolicy policy = cpu_vector_nan_policy(d);
  test::MismatchLog log("add_round", d);
  const auto x = patterns(d, 0, 65536).reshape({1, 65536});
  constexpr int64_t kBlock = 512;
  for (int64_t b0 = 0; b0 < 65536; b0 += kBlock) {
    const auto b = patterns(d, b0, kBlock).reshape({kBlock, 1});
    const auto s = (x + b).contiguous();  // the broadcast add of eager `x + bias`
    const uint16_t* got = bits(s);
    for (int64_t r = 0; r < kBlock; ++r) {
      for (uint32_t xi = 0; xi < 65536; ++xi) {
        const uint16_t g = got[r * 65536 + xi];
        const uint16_t want = add_round(d, uint16_t(xi), uint16_t(b0 + r), policy);
        if (g != want) log.record("", uint16_t(xi), uint16_t(b0 + r), g, want);
      }
    }
  }
  std::printf("libtorch %s CPU, NaN policy %s\n", TORCH_VERSION, nan_policy_name(policy));
  FUSEPROOF_EXPECT_CLEAN(log, uint64_t(1) << 32);
}

TEST(TorchCpu_AddRound_bf16, BitExactVsEager_AllPairs) { add_all_pairs(Dtype::kBf16); }
TEST(TorchCpu_AddRound_fp16, BitExactVsEager_AllPairs) { add_all_pairs(Dtype::kFp16); }

TEST(TorchCpu_AddRound_bf16, EagerCpuDisagreesWithItselfOnNan) {
  // The vectorized body and the scalar tail of one CPU add narrow NaN differently: 0xFFFF vs 0x7FC0.
  const auto nan = torch::full({67}, 0, torch::kInt16).fill_(int16_t(0x7FC1)).view(torch::kBFloat16);
  const auto one = torch::full({67}, 1.0, torch::kBFloat16);
  const auto s = (nan + one).contiguous();
  const uint16_t body = bits(s)[0], tail = bits(s)[66];
  std::printf("bf16 NaN + 1 on the CPU: vector body 0x%04X, scalar tail 0x%04X\n", body, tail);
  EXPECT_EQ(body, add_round(Dtype::kBf16, 0x7FC1, 0x3F80, NanPolicy::kC10Vectorized));
  EXPECT_EQ(tail, add_round(Dtype::kBf16, 0x7FC1, 0x3F80, NanPolicy::kC10Scalar));
}

/// The op written as eager PyTorch code on T tensors, column i of `in` ([n, 3] patterns) being input i: the
/// independent statement of what the op spec's eager composition models.
torch::Tensor torch_three_input(const std::string& op, Dtype d, const std::vector<uint16_t>& in) {
  const int64_t n = int64_t(in.size() / 3);
  const auto all = torch::from_blob(const_cast<uint16_t*>(in.data()), {n, 3}, torch::kInt16).clone().view(torch_dtype(d));
  const auto a = all.select(1, 0).contiguous(), b = all.select(1, 1).contiguous(), c = all.select(1, 2).contiguous();
  if (op == "gated_residual") return (a + b * c).contiguous();  // x + gate * y
  if (op == "modulate") return (a * (1 + b) + c).contiguous();  // x * (1 + scale) + shift
  throw std::invalid_argument("torch_three_input: no eager expression for " + op);
}

/// The eager contract of `op` with the operands of every add in the order libtorch's CPU add takes them: at::add(a,
/// b) is fmadd(b, alpha, a) (vectorised) and the compiler may commute the scalar `a + alpha * b`, so where both
/// operands are NaN the CPU returns b's NaN, the reference's binary32 a + b (x86 addss) a's. The values are the same;
/// only the sign of a NaN can differ, and the device's policy (0x7FFF) erases it.
const OpSpec& cpu_add_order(const std::string& op) {
  static std::map<std::string, std::unique_ptr<OpSpec>> specs;
  auto& s = specs[op];
  if (!s) {
    s = std::make_unique<OpSpec>(*find_op(op));
    s->contracts.resize(1);  // eager only
    for (Node& n : s->contracts[0].nodes)
      if (n.op == NodeOp::kAdd) std::swap(n.a, n.b);
  }
  return *s;
}

/// A reference of `op`'s eager contract under the CPU's NaN policy: as specified, or with the CPU's add order.
const OpPlan& cpu_plan(const std::string& op, Dtype d, bool cpu_order) {
  static std::map<std::tuple<std::string, Dtype, bool>, std::unique_ptr<OpPlan>> plans;
  auto& p = plans[{op, d, cpu_order}];
  if (!p) {
    MathConfig cfg;
    cfg.math = MathModel::kLibm;
    cfg.nan = cpu_vector_nan_policy(d);
    p = std::make_unique<OpPlan>(cpu_order ? cpu_add_order(op) : *find_op(op), Contract::kEager, d, cfg);
  }
  return *p;
}

/// Eager torch CPU against the reference on the triples `in`: every output bit equals the reference with the CPU's
/// add order, NaN patterns included; against the op spec's own order, every difference is the sign of a NaN, and
/// the differences are counted and printed.
void expect_torch_equals_reference(const std::string& op, Dtype d, std::vector<uint16_t> in, const std::string& what) {
  // The vectorised body and the scalar tail of a CPU op narrow bf16 NaN differently (0xFFFF, 0x7FC0:
  // TorchCpu_AddRound_bf16.EagerCpuDisagreesWithItselfOnNan), so the batch is padded to whole vectors.
  const size_t n = in.size() / 3;
  for (size_t k = 0; (n + k) % 64 != 0; ++k) in.insert(in.end(), {in[0], in[1], in[2]});
  const OpPlan& p = cpu_plan(op, d, true);
  const OpPlan& spec = cpu_plan(op, d, false);
  const auto y = torch_three_input(op, d, in);
  const uint16_t* got = bits(y);
  test::MismatchLog log(op + " " + what, d);
  std::vector<std::string> names;
  for (const InputSpec& i : p.op().inputs) names.push_back(i.name);
  uint64_t nan_sign = 0, other = 0;
  for (size_t k = 0; k < n; ++k) {
    const uint16_t want = p.eval(&in[3 * k]), as_spec = spec.eval(&in[3 * k]);
    if (as_spec != got[k]) {
      const bool sign_only = is_nan_bits(d, as_spec) && (as_spec ^ got[k]) == 0x8000;
      nan_sign += sign_only;
      other += !sign_only;
    }
    if (got[k] == want) continue;
    char b[160];
    std::snprintf(b, sizeof b, "%s %s [k=%zu] %s=0x%04X %s=0x%04X %s=0x%04X => 0x%04X expected 0x%04X", op.c_str(),
                  dtype_name(d), k, names[0].c_str(), in[3 * k], names[1].c_str(), in[3 * k + 1], names[2].c_str(),
                  in[3 * k + 2], got[k], want);
    log.record_line(b);
  }
  std::printf("libtorch %s CPU, NaN policy %s, adds as b + a; as the op spec orders them, %llu outputs differ in the "
              "sign of a NaN\n",
              TORCH_VERSION, nan_policy_name(cpu_vector_nan_policy(d)), static_cast<unsigned long long>(nan_sign));
  FUSEPROOF_EXPECT_CLEAN(log, n);
  EXPECT_EQ(other, 0u) << "differences from the op spec's order other than a NaN's sign";
}

uint64_t next(uint64_t& state) {
  state = state * 6364136223846793005ull + 1442695040888963407ull;
  return state >> 16;
}

void random_triples(const std::string& op, Dtype d) {
  std::vector<uint16_t> in(3 << 20);
  uint64_t state = 0x5EED0023ull;
  for (auto& v : in) v = uint16_t(next(state));
  expect_torch_equals_reference(op, d, in, "random triples (2^20, seed 0x5EED0023)");
}

/// Every triple of extreme patterns: each special class of either sign (property_tests/support), and +-1, +-2, +-0.5
/// and the largest finite.
void extreme_triples(const std::string& op, Dtype d) {
  std::vector<uint16_t> e = test::special_half_patterns(d);
  for (float f : {1.0f, 2.0f, 0.5f, 65504.0f})
    for (float s : {1.0f, -1.0f}) e.push_back(f32_to_half(d, s * f, NanPolicy::kCudaCvtRn));
  std::sort(e.begin(), e.end());
  e.erase(std::unique(e.begin(), e.end()), e.end());
  std::vector<uint16_t> in;
  for (uint16_t a : e)
    for (uint16_t b : e)
      for (uint16_t c : e) in.insert(in.end(), {a, b, c});
  expect_torch_equals_reference(op, d, in, "extreme triples (" + std::to_string(e.size()) + "^3)");
}

/// For every stage of the device's eager plan: every witness of each operand with a seeded partner, and 2^16 seeded
/// pairs, as whole inputs.
void stage_witnesses(const std::string& op, Dtype d) {
  MathConfig cfg;
  cfg.math = MathModel::kLibm;
  const OpPlan device(*find_op(op), Contract::kEager, d, cfg);
  ASSERT_FALSE(device.stages().empty()) << device.no_stages_reason();
  for (const Stage& s : device.stages()) {
    std::vector<uint16_t> in;
    uint64_t state = 0x57A6Eull + uint64_t(s.node);
    auto add = [&](size_t ia, size_t ib) {
      const auto v = s.inputs(ia, ib);
      in.insert(in.end(), v.begin(), v.begin() + 3);
    };
    const size_t na = s.a.values.size(), nb = s.b.values.size();
    for (size_t ia = 0; ia < na; ++ia) add(ia, next(state) % nb);
    for (size_t ib = 0; ib < nb; ++ib) add(next(state) % na, ib);
    for (int k = 0; k < (1 << 16); ++k) add(next(state) % na, next(state) % nb);
    expect_torch_equals_reference(op, d, in, "stage " + s.text + " witnesses");
  }
}

TEST(TorchCpu_GatedResidual_bf16, BitExactVsEager_RandomTriples) { random_triples("gated_residual", Dtype::kBf16); }
TEST(TorchCpu_GatedResidual_fp16, BitExactVsEager_RandomTriples) { random_triples("gated_residual", Dtype::kFp16); }
TEST(TorchCpu_Modulate_bf16, BitExactVsEager_RandomTriples) { random_triples("modulate", Dtype::kBf16); }
TEST(TorchCpu_Modulate_fp16, BitExactVsEager_RandomTriples) { random_triples("modulate", Dtype::kFp16); }
TEST(TorchCpu_GatedResidual_bf16, BitExactVsEager_ExtremeTriples) { extreme_triples("gated_residual", Dtype::kBf16); }
TEST(TorchCpu_GatedResidual_fp16, BitExactVsEager_ExtremeTriples) { extreme_triples("gated_residual", Dtype::kFp16); }
TEST(TorchCpu_Modulate_bf16, BitExactVsEager_ExtremeTriples) { extreme_triples("modulate", Dtype::kBf16); }
TEST(TorchCpu_Modulate_fp16, BitExactVsEager_ExtremeTriples) { extreme_triples("modulate", Dtype::kFp16); }
TEST(TorchCpu_GatedResidual_bf16, BitExactVsEager_StageWitnesses) { stage_witnesses("gated_residual", Dtype::kBf16); }
TEST(TorchCpu_GatedResidual_fp16, BitExactVsEager_StageWitnesses) { stage_witnesses("gated_residual", Dtype::kFp16); }
TEST(TorchCpu_Modulate_bf16, BitExactVsEager_StageWitnesses) { stage_witnesses("modulate", Dtype::kBf16); }
TEST(TorchCpu_Modulate_fp16, BitExactVsEager_StageWitnesses) { stage_witnesses("modulate", Dtype::kFp16); }

/// The patterns eager `1 + scale` reaches over every scale are the reference stage's operand values, under the
/// CPU's NaN policy (its NaN patterns) and, NaN aside, under the device's.
void reachable_one_plus_scale(Dtype d) {
  const auto s = patterns(d, 0, 65536);
  const auto r = (1 + s).contiguous();
  std::vector<uint16_t> got(bits(r), bits(r) + 65536);
  std::sort(got.begin(), got.end());
  got.erase(std::unique(got.begin(), got.end()), got.end());
  const Stage& cpu = cpu_plan("modulate", d, false).stages().at(1);
  ASSERT_EQ(cpu.b.text, "round_T(1 + scale)");
  EXPECT_EQ(got, cpu.b.values) << "torch reaches " << got.size() << ", the reference " << cpu.b.values.size();
  MathConfig cfg;
  cfg.math = MathModel::kLibm;
  const OpPlan device(*find_op("modulate"), Contract::kEager, d, cfg);
  auto non_nan = [&](const std::vector<uint16_t>& v) {
    std::vector<uint16_t> o;
    for (uint16_t x : v)
      if (!is_nan_bits(d, x)) o.push_back(x);
    return o;
  };
  const std::vector<uint16_t>& dev = device.stages().at(1).b.values;
  EXPECT_EQ(non_nan(got), non_nan(dev));
  std::printf("1 + scale over every %s scale: %zu patterns on the device (NaN once, 0x7FFF), %zu on libtorch %s CPU "
              "(%zu non-NaN, NaN as", dtype_name(d), dev.size(), got.size(), TORCH_VERSION, non_nan(got).size());
  for (uint16_t x : got)
    if (is_nan_bits(d, x)) std::printf(" 0x%04X", x);
  std::printf(")\n");
  EXPECT_EQ(dev.size(), d == Dtype::kBf16 ? 32899u : 33795u);
}

TEST(TorchCpu_Modulate_bf16, ReachableOnePlusScaleEqualsReference) { reachable_one_plus_scale(Dtype::kBf16); }
TEST(TorchCpu_Modulate_fp16, ReachableOnePlusScaleEqualsReference) { reachable_one_plus_scale(Dtype::kFp16); }

}  // namespace
}  // namespace fuseproof::ref
