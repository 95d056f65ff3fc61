// quant_block_test.cpp: the quantization contracts (reference/quant_spec.h) through their one interpreter
// (reference/quant_block.h): hand-computed blocks per contract, the references' known disagreements, and the
// element and scale steps of vllm-ref against a direct transcription, every pair, with a control that must differ.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "reference/e2m1.h"
#include "reference/f32_to_e4m3.h"
#include "reference/half_codec.h"
#include "reference/op_plan.h"
#include "reference/quant_block.h"
#include "reference/quant_spec.h"

namespace fuseproof::ref {
namespace {

// Stand-ins for the device's rcp.approx.ftz.f32, for tests only: the real model is a table captured on the GPU.
float rcp_stand_in_exact(float x) { return 1.0f / x; }
float rcp_stand_in_one_ulp_up(float x) { return std::nextafter(1.0f / x, INFINITY); }

MathConfig libm_config() {
  MathConfig cfg;
  cfg.math = MathModel::kLibm;
  return cfg;
}

const QuantOpSpec& op_named(const char* name) {
  const QuantOpSpec* op = find_quant_op(name);
  if (!op) throw std::logic_error(name);
  return *op;
}

/// A block of 16 (or 128) T patterns: `head` first, then zeros.
std::vector<uint16_t> block(int n, std::initializer_list<uint16_t> head) {
  std::vector<uint16_t> b(size_t(n), 0);
  size_t i = 0;
  for (uint16_t h : head) b[i++] = h;
  return b;
}

struct Quantized {
  std::vector<uint8_t> codes;
  QuantScale scale;
};

Quantized run(const QuantPlan& p, const std::vector<uint16_t>& values, float scalar) {
  Quantized q;
  q.codes.resize(values.size());
  q.scale = p.quantize(values.data(), &scalar, q.codes.data());
  return q;
}

const MathConfig kCfg = libm_config();

TEST(Reference_QuantSpec, RegistryListsTheFiveOpsWithTheirContracts) {
  std::vector<std::string> names;
  for (const QuantOpSpec& op : quant_op_registry()) names.push_back(op.name);
  // The two quantizations alone, then the fused ops in the op spec's order of their activation ops
  // (OpSpec::quant_fusions: bias_gelu_tanh is the registry's first op).
  EXPECT_EQ(names, (std::vector<std::string>{"fp8_group_quant", "nvfp4_quant", "bias_gelu_tanh_nvfp4_quant",
                                             "silu_and_mul_fp8_group_quant", "silu_and_mul_nvfp4_quant"}));
  for (const QuantOpSpec& op : quant_op_registry()) {
    const bool nvfp4 = op.element_format == ElementFormat::kE2m1;
    EXPECT_EQ(op.block_size, nvfp4 ? 16 : 128) << op.name;
    ASSERT_FALSE(op.contracts.empty());
    EXPECT_EQ(op.contracts[0].contract, nvfp4 ? QuantContract::kVllmRef : QuantContract::kFp8Group) << op.name;
    EXPECT_EQ(op.contracts.size(), nvfp4 ? 4u : 2u) << op.name;
    for (const QuantContractSpec& c : op.contracts) {
      EXPECT_FALSE(c.source.empty()) << op.name << " " << quant_contract_name(c.contract);
      EXPECT_GE(c.scale_out, 0);
      EXPECT_FALSE(c.element_steps.empty());
    }
  }
  EXPECT_EQ(op_named("silu_and_mul_nvfp4_quant").activation.family_op, "silu_and_mul");
  EXPECT_EQ(op_named("bias_gelu_tanh_nvfp4_quant").inputs.size(), 2u);
  EXPECT_EQ(find_quant_op("silu_and_mul"), nullptr);  // the elementwise family stays a separate list
  for (QuantContract c : kAllQuantContracts) EXPECT_EQ(parse_quant_contract(quant_contract_name(c)), c);
  EXPECT_FALSE(parse_quant_contract("eager"));
}

TEST(Reference_QuantSpec, ConstantsAreTheBinary32sTorchUses) {
  // tensor * python_scalar narrows the double to binary32 once: 1/6 -> 0x3E2AAAAB, 1/448 -> 0x3B124925.
  const QuantContractSpec& v = *op_named("nvfp4_quant").contract(QuantContract::kVllmRef);
  bool seen = false;
  for (const QuantStep& s : v.scale_steps)
    if (s.op == QuantOp::kConst && s.name == "1/6") {
      EXPECT_EQ(f32_bits(s.value), 0x3E2AAAABu);
      seen = true;
    }
  EXPECT_TRUE(seen);
  const QuantContractSpec& f = *op_named("fp8_group_quant").contract(QuantContract::kFp8Group);
  seen = false;
  for (const QuantStep& s : f.scale_steps)
    if (s.op == QuantOp::kConst && s.name == "1/448") {
      EXPECT_EQ(f32_bits(s.value), 0x3B124925u);
      seen = true;
    }
  EXPECT_TRUE(seen);
}

TEST(Reference_QuantSpec, SwizzledScaleLayoutIsABijectionOntoThePaddedTensor) {
  // 130 rows, 5 blocks per row: padded to 256 x 8 = 2,048 bytes; the cells no block reaches are the padding.
  const int64_t rows = 130, blocks = 5, size = scale_tensor_size(ScaleLayout::kSwizzled128x4, rows, blocks);
  EXPECT_EQ(size, 2048);
  std::vector<int> hits(size_t(size), 0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < blocks; ++k) ++hits[size_t(scale_offset(ScaleLayout::kSwizzled128x4, r, k, rows, blocks))];
  int once = 0;
  for (int h : hits) {
    EXPECT_LE(h, 1);
    once += h;
  }
  EXPECT_EQ(once, rows * blocks);
  // Row 33, block 6 of a 2-tile row: tile (0, 1) at 512, outer 1 * 16, inner 1 * 4, k 2: 534.
  EXPECT_EQ(scale_offset(ScaleLayout::kSwizzled128x4, 33, 6, 128, 8), 534);
  EXPECT_EQ(scale_offset(ScaleLayout::kLinear, 3, 2, 4, 5), 17);
}

TEST(Reference_QuantBlock, RcpApproxWithoutItsModelIsRefused) {
  const QuantOpSpec& op = op_named("nvfp4_quant");
  EXPECT_THROW(QuantPlan(op, QuantContract::kRcpApprox, Dtype::kBf16, QuantModels{}, kCfg), QuantModelMissing);
  EXPECT_NO_THROW(QuantPlan(op, QuantContract::kFlashinferExact, Dtype::kBf16, QuantModels{}, kCfg));
  EXPECT_TRUE(needs_rcp_approx(*op.contract(QuantContract::kRcpApprox)));
  EXPECT_FALSE(needs_rcp_approx(*op.contract(QuantContract::kVllmRef)));
  EXPECT_THROW(QuantPlan(op, QuantContract::kFp8Group, Dtype::kBf16, QuantModels{}, kCfg), std::invalid_argument);
}

// bf16 block {6, 3, 2.5, -0.0, 1.25, 0.25, -1.75, 5, 0 ...}, global scale 1:
//   amax 6; 6 * f32(1/6) = 6 * 0x3E2AAAAB = 1.0000000298 -> 1.0; g * 1 = 1; e4m3(1) = 0x38 (| 0 |0111|000|);
//   p = 1 * (1/1) = 1, output scale 1/1 = 1. Codes: 6 -> 0x7, 3 -> 0x5, 2.5 -> the tie goes to 2 (0x4),
//   1.25 -> 1 (0x2), 0.25 -> 0 (0x0), -1.75 -> -2 (0xC), 5 -> 4 (0x6). -0.0: vLLM's and FlashInfer's table gives
//   +0 (0x0), the kernel's cvt keeps the sign (0x8), TransformerEngine's table gives 0x0. te's order (amax * (g *
//   reciprocal(6))) gives the same 1 here.
TEST(Reference_QuantBlock_bf16, HandComputedNvfp4EveryContract) {
  const QuantOpSpec& op = op_named("nvfp4_quant");
  const auto b = block(16, {0x40C0, 0x4040, 0x4020, 0x8000, 0x3FA0, 0x3E80, 0xBFE0, 0x40A0});
  const std::vector<uint8_t> common = {0x7, 0x5, 0x4, 0xFF, 0x2, 0x0, 0xC, 0x6};
  QuantModels m;
  m.rcp_approx = rcp_stand_in_exact;
  struct Case { QuantContract c; float scalar; uint8_t neg_zero; };
  // Every contract's scalar is the global encode scale.
  for (const Case& k : {Case{QuantContract::kVllmRef, 1.0f, 0x0}, Case{QuantContract::kRcpApprox, 1.0f, 0x8},
                        Case{QuantContract::kFlashinferExact, 1.0f, 0x0}, Case{QuantContract::kTe, 1.0f, 0x0}}) {
    const QuantPlan p(op, k.c, Dtype::kBf16, m, kCfg);
    const Quantized q = run(p, b, k.scalar);
    EXPECT_EQ(q.scale.byte, 0x38) << quant_contract_name(k.c);
    EXPECT_EQ(f32_bits(q.scale.value), 0x3F800000u);
    for (size_t i = 0; i < common.size(); ++i)
      EXPECT_EQ(q.codes[i], i == 3 ? k.neg_zero : common[i]) << quant_contract_name(k.c) << " element " << i;
    for (size_t i = common.size(); i < 16; ++i) EXPECT_EQ(q.codes[i], 0x0);
  }
}

// Global scale 2 with amax 7 (bf16 0x40E0): 7 * f32(1/6) = 1.16666675 (0x3F955556), * 2 = 2.3333335;
// e4m3 rounds to 2.25 (| 0 |1000|001| = 0x41; 2.333 is nearer 2.25 than 2.5); p = 2.25 * 0.5 = 1.125,
// output scale 1/1.125 = 0.8888889 (0x3F638E39). 7 * that = 6.2222223 -> clamp 6 -> 0x7; 3 * that = 2.6666667
// -> 3 (0x5); 0.5 * that = 0.44444445 -> 0.5 (0x1).
TEST(Reference_QuantBlock_bf16, HandComputedVllmRefRoundsTheScale) {
  const QuantPlan p(op_named("nvfp4_quant"), QuantContract::kVllmRef, Dtype::kBf16, QuantModels{}, kCfg);
  const Quantized q = run(p, block(16, {0x40E0, 0x4040, 0x3F00}), 2.0f);
  EXPECT_EQ(q.scale.byte, 0x41);
  EXPECT_EQ(q.codes[0], 0x7);
  EXPECT_EQ(q.codes[1], 0x5);
  EXPECT_EQ(q.codes[2], 0x1);
  const QuantBlockState st = p.scale_step(0x40E0, std::vector<float>{2.0f}.data());
  const QuantContractSpec& c = p.contract();
  for (size_t i = 0; i < c.scale_steps.size(); ++i)
    if (c.scale_steps[i].name == "output_scale") EXPECT_EQ(f32_bits(st.reg[i]), 0x3F638E39u);
}

// amax at 448 * 6 = 2688, 464 * 6 = 2784 and 480 * 6 = 2880 (all bf16), global scale 1: 2688 * f32(1/6) = 448,
// 2784 * f32(1/6) = 464 (the E4M3 overflow tie: 0x7E in both conventions), 2880 * f32(1/6) = 480. vLLM's clamp,
// TransformerEngine's clamp and the kernel's satfinite store 0x7E; FlashInfer's reference has no clamp: eager's
// to(float8_e4m3fn) stores NaN (0x7F) above 464, and the NaN scale makes every code NaN (0xFF).
TEST(Reference_QuantBlock_bf16, ScaleAt448Times6And464And480) {
  QuantModels m;
  m.rcp_approx = rcp_stand_in_exact;
  const QuantOpSpec& op = op_named("nvfp4_quant");
  for (QuantContract c : {QuantContract::kVllmRef, QuantContract::kRcpApprox, QuantContract::kTe}) {
    const QuantPlan p(op, c, Dtype::kBf16, m, kCfg);
    const float g = 1.0f;
    for (uint16_t amax : {uint16_t(0x4528), uint16_t(0x4530), uint16_t(0x4534)})  // 2688, 2816, 2880
      EXPECT_EQ(p.scale_step(amax, &g).scale.byte, 0x7E) << quant_contract_name(c) << std::hex << " amax " << amax;
    EXPECT_EQ(p.scale_step(0x452E, &g).scale.byte, 0x7E) << "2784: the tie at 464";
  }
  // The control is FlashInfer's reference, vllm-ref's graph with the clamp left out.
  const QuantPlan p(op, QuantContract::kFlashinferExact, Dtype::kBf16, QuantModels{}, kCfg);
  const float one = 1.0f;
  EXPECT_EQ(p.scale_step(0x4528, &one).scale.byte, 0x7E);  // 448
  EXPECT_EQ(p.scale_step(0x452E, &one).scale.byte, 0x7E);  // 464: the tie still goes to 448
  EXPECT_EQ(p.scale_step(0x4530, &one).scale.byte, 0x7F);  // 469.3: NaN
  EXPECT_EQ(p.scale_step(0x4534, &one).scale.byte, 0x7F);  // 480: NaN
  const Quantized q = run(p, block(16, {0x4534, 0x3F80, 0x8000}), 1.0f);
  EXPECT_EQ(q.scale.byte, 0x7F);
  for (uint8_t c : q.codes) EXPECT_EQ(c, kQuantNoCode);
}

TEST(Reference_QuantBlock, AllZeroBlocks) {
  QuantModels m;
  m.rcp_approx = rcp_stand_in_exact;
  for (Dtype d : kAllDtypes) {
    for (QuantContract c : {QuantContract::kVllmRef, QuantContract::kRcpApprox, QuantContract::kTe,
                            QuantContract::kFlashinferExact}) {
      // vllm, flashinfer: scale e4m3(0) = 0x00, p = 0, get_reciprocal gives 0; kernel: scale 0 -> output scale 0;
      // te: encode scale min(1/0, FLT_MAX) = FLT_MAX, 0 * FLT_MAX = 0. Every code 0x0.
      const QuantPlan p(op_named("nvfp4_quant"), c, d, m, kCfg);
      const Quantized q = run(p, block(16, {}), 1.0f);
      EXPECT_EQ(q.scale.byte, 0x00) << quant_contract_name(c);
      for (uint8_t code : q.codes) EXPECT_EQ(code, 0x0) << quant_contract_name(c);
    }
    // fp8-group-ue8m0 (vLLM's native path, no eps): s = 0, log2 0 = -Inf, exp2(-Inf) = 0, clamped to the floor
    // f32(1 / (448 * 512)) = 4.3596e-6 (0x36924925, not a power of two); 0 / floor = 0: codes 0x00 in both dtypes.
    {
      const QuantPlan u(op_named("fp8_group_quant"), QuantContract::kFp8GroupUe8m0, d, QuantModels{}, kCfg);
      const Quantized q = run(u, block(128, {}), 0.0f);
      EXPECT_EQ(f32_bits(q.scale.value), 0x36924925u) << dtype_name(d);
      for (uint8_t code : q.codes) EXPECT_EQ(code, 0x00) << dtype_name(d);
    }
    // fp8-group: amax clamp(min=1e-10) on the T tensor. bf16 keeps 1e-10 (0x2EDC): scale > 0, codes 0x00. fp16
    // rounds 1e-10 to 0: scale 0, x / 0 = 0 / 0 = NaN, clamp keeps it, e4m3 gives 0x7F.
    const QuantPlan f(op_named("fp8_group_quant"), QuantContract::kFp8Group, d, QuantModels{}, kCfg);
    const Quantized q = run(f, block(128, {}), 0.0f);
    const bool fp16 = d == Dtype::kFp16;
    EXPECT_EQ(q.scale.value == 0.0f, fp16) << dtype_name(d);
    for (uint8_t code : q.codes) EXPECT_EQ(code, fp16 ? 0x7F : 0x00) << dtype_name(d);
  }
}

TEST(Reference_QuantBlock_bf16, NanMemberEachContract) {
  QuantModels m;
  m.rcp_approx = rcp_stand_in_exact;
  const auto b = block(16, {0x7FC0, 0x40C0, 0x3F80});  // NaN, 6, 1
  // vllm-ref: torch.max gives NaN: scale NaN (0x7F), output scale NaN, every value NaN, the table has no code.
  {
    const QuantPlan p(op_named("nvfp4_quant"), QuantContract::kVllmRef, Dtype::kBf16, m, kCfg);
    const Quantized q = run(p, b, 1.0f);
    EXPECT_EQ(q.scale.byte, 0x7F);
    for (uint8_t c : q.codes) EXPECT_EQ(c, kQuantNoCode);
  }
  // The kernel: __hmax2 drops the NaN: amax 6, scale 0x38; NaN * 1 = NaN, cvt gives +6 (0x7); 6 -> 0x7, 1 -> 0x2.
  {
    const QuantPlan p(op_named("nvfp4_quant"), QuantContract::kRcpApprox, Dtype::kBf16, m, kCfg);
    const Quantized q = run(p, b, 1.0f);
    EXPECT_EQ(q.scale.byte, 0x38);
    EXPECT_EQ(q.codes[0], 0x7);
    EXPECT_EQ(q.codes[1], 0x7);
    EXPECT_EQ(q.codes[2], 0x2);
    EXPECT_EQ(q.codes[3], 0x0);
    const auto all_nan = std::vector<uint16_t>(16, 0xFFC1);
    EXPECT_EQ(run(p, all_nan, 1.0f).scale.byte, 0x7F);  // canonical half NaN -> scale NaN
  }
  // flashinfer-exact: as vllm-ref (no clamp to pass the NaN through either way).
  {
    const QuantPlan p(op_named("nvfp4_quant"), QuantContract::kFlashinferExact, Dtype::kBf16, m, kCfg);
    const Quantized q = run(p, b, 1.0f);
    EXPECT_EQ(q.scale.byte, 0x7F);
    for (uint8_t c : q.codes) EXPECT_EQ(c, kQuantNoCode);
  }
  // te: torch.amax gives NaN: scale 0x7F; the code table matches nothing for NaN: 0x0.
  {
    const QuantPlan p(op_named("nvfp4_quant"), QuantContract::kTe, Dtype::kBf16, m, kCfg);
    const Quantized q = run(p, b, 1.0f);
    EXPECT_EQ(q.scale.byte, 0x7F);
    for (uint8_t c : q.codes) EXPECT_EQ(c, 0x0);
  }
  // fp8-group-ue8m0: s = NaN; log2, ceil, exp2 and clamp(min=) keep it: scale NaN, every code 0x7F.
  {
    const QuantPlan p(op_named("fp8_group_quant"), QuantContract::kFp8GroupUe8m0, Dtype::kBf16, m, kCfg);
    const Quantized q = run(p, block(128, {0x7FC0, 0x40C0, 0xBF80}), 0.0f);
    EXPECT_TRUE(std::isnan(q.scale.value));
    for (uint8_t c : q.codes) EXPECT_EQ(c, 0x7F);
  }
  // fp8-group: NaN amax, NaN scale, every code 0x7F.
  {
    const QuantPlan p(op_named("fp8_group_quant"), QuantContract::kFp8Group, Dtype::kBf16, m, kCfg);
    const Quantized q = run(p, block(128, {0x7FC0, 0x40C0}), 0.0f);
    EXPECT_TRUE(std::isnan(q.scale.value));
    for (uint8_t c : q.codes) EXPECT_EQ(c, 0x7F);
  }
}

// fp8-group bf16, amax 448 (0x43E0): 448 * f32(1/448) = 1.0 exactly, so each code is e4m3(x): 448 -> 0x7E,
// 1 -> 0x38, -0.0 -> 0x80, 17 -> the tie between 16 and 18 goes to even 16 (0x58). UE8M0: s = 1 is a power of two
// (log2 1 = 0) above vLLM's floor, the same codes.
TEST(Reference_QuantBlock_bf16, HandComputedFp8Group) {
  const auto b = block(128, {0x43E0, 0x3F80, 0x8000, 0x4188});
  for (QuantContract c : {QuantContract::kFp8Group, QuantContract::kFp8GroupUe8m0}) {
    const QuantPlan p(op_named("fp8_group_quant"), c, Dtype::kBf16, QuantModels{}, kCfg);
    const Quantized q = run(p, b, 0.0f);
    EXPECT_EQ(f32_bits(q.scale.value), 0x3F800000u) << quant_contract_name(c);
    EXPECT_EQ(q.codes[0], 0x7E);
    EXPECT_EQ(q.codes[1], 0x38);
    EXPECT_EQ(q.codes[2], 0x80);
    EXPECT_EQ(q.codes[3], 0x58);
  }
  // amax 450 (bf16 0x43E0 + 1 ulp): s = 450 * f32(1/448) = 1.0044643; UE8M0 rounds up to 2 (0x40000000): 450 / 2 =
  // 225 -> 224 (0x76), while fp32's 450 / 1.0044643 = 448.00003 -> 448 (0x7E).
  const auto c = block(128, {0x43E1});
  const QuantPlan f(op_named("fp8_group_quant"), QuantContract::kFp8Group, Dtype::kBf16, QuantModels{}, kCfg);
  const QuantPlan u(op_named("fp8_group_quant"), QuantContract::kFp8GroupUe8m0, Dtype::kBf16, QuantModels{}, kCfg);
  const Quantized qf = run(f, c, 0.0f), qu = run(u, c, 0.0f);
  EXPECT_EQ(f32_bits(qu.scale.value), 0x40000000u);
  EXPECT_EQ(qu.codes[0], 0x76);
  EXPECT_EQ(qf.codes[0], 0x7E);
}

TEST(Reference_QuantBlock_bf16, FusedOpQuantizesTheActivationRoundedToT) {
  // silu_and_mul_nvfp4_quant on (gate, up) equals nvfp4_quant on round_T(silu(gate) * up) from the family's plan.
  const QuantOpSpec& fused = op_named("silu_and_mul_nvfp4_quant");
  const QuantPlan p(fused, QuantContract::kVllmRef, Dtype::kBf16, QuantModels{}, kCfg);
  const QuantPlan alone(op_named("nvfp4_quant"), QuantContract::kVllmRef, Dtype::kBf16, QuantModels{}, kCfg);
  const OpPlan act(*find_op("silu_and_mul"), Contract::kEager, Dtype::kBf16, kCfg);
  std::vector<uint8_t> record(size_t(p.record_bytes()));
  std::vector<uint16_t> t(16);
  for (int e = 0; e < 16; ++e) {
    const uint16_t gate = uint16_t(0x3F00 + 0x53 * e), up = uint16_t(0xC000 - 0x11 * e);
    record[size_t(2 * e)] = uint8_t(gate);
    record[size_t(2 * e + 1)] = uint8_t(gate >> 8);
    record[size_t(32 + 2 * e)] = uint8_t(up);
    record[size_t(32 + 2 * e + 1)] = uint8_t(up >> 8);
    const uint16_t in[2] = {gate, up};
    t[size_t(e)] = act.eval(in);
  }
  const float g = 3.0f;
  std::memcpy(&record[64], &g, 4);
  std::vector<uint8_t> out(size_t(p.output_bytes()));
  p.eval_record(record.data(), out.data());
  const Quantized want = run(alone, t, g);
  for (int e = 0; e < 16; ++e) EXPECT_EQ(out[size_t(e)], want.codes[size_t(e)]) << e;
  EXPECT_EQ(out[16], want.scale.byte);
  int nonzero = 0;
  for (int e = 0; e < 16; ++e) nonzero += out[size_t(e)] != 0;
  EXPECT_GT(nonzero, 8);  // not a trivially all-zero block
}

/// vllm-ref's element step written out from nvfp4_utils.py, independently of the step list: the code of x for the
/// E4M3 scale code and the global scale g. `division` is the control: output scale g / scale (one division in
/// place of the two reciprocals), the rewrite the issue counts on 4.8% of boundary cases.
uint8_t vllm_element_direct(Dtype d, uint16_t v, uint8_t code, float g, bool division) {
  const float q = e4m3_to_f32(code);
  float os;
  if (division) {
    os = q == 0.0f ? 0.0f : g / q;
  } else {
    const float inv_g = g == 0.0f ? 0.0f : 1.0f / g;
    const float p = q * inv_g;
    os = p == 0.0f ? 0.0f : 1.0f / p;
  }
  float y = half_to_f32(d, v) * os;
  if (y != y) return kQuantNoCode;
  y = y < -6.0f ? -6.0f : y > 6.0f ? 6.0f : y;
  const float a = std::fabs(y);
  const uint8_t mag = a <= 0.25f ? 0 : a < 0.75f ? 1 : a <= 1.25f ? 2 : a < 1.75f ? 3 : a <= 2.5f ? 4 : a < 3.5f ? 5
                    : a <= 5.0f ? 6 : 7;
  return uint8_t((y < 0.0f ? 0x8 : 0x0) | mag);  // table * sign(y): -0 for a negative y, +0 for either zero
}

// Every (value, E4M3 scale code) pair of the element step, scale codes 0x00..0x7E, for global scales 1, 0.1 and
// 896 (2688 / 3): 127 x 65,536 pairs each, against the direct transcription.
TEST(Reference_QuantBlock, VllmRefElementStepAllValueScalePairs) {
  for (Dtype d : kAllDtypes) {
    const QuantPlan p(op_named("nvfp4_quant"), QuantContract::kVllmRef, d, QuantModels{}, kCfg);
    uint64_t control_total = 0;
    for (float g : {1.0f, 0.1f, 896.0f}) {
      uint64_t cases = 0, errors = 0, control_differs = 0;
      for (int code = 0; code <= 0x7E; ++code) {
        const QuantBlockState st = p.scale_from_code(uint8_t(code), &g);
        ASSERT_EQ(st.scale.byte, code);
        for (uint32_t v = 0; v <= 0xFFFF; ++v, ++cases) {
          const uint8_t got = p.element_step(uint16_t(v), st);
          const uint8_t want = vllm_element_direct(d, uint16_t(v), uint8_t(code), g, false);
          if (got != want && ++errors <= 8)
            ADD_FAILURE() << "vllm-ref " << dtype_name(d) << " g=" << g << std::hex << " x=0x" << v << " scale=0x"
                          << code << " => 0x" << int(got) << " expected 0x" << int(want);
          control_differs += want != vllm_element_direct(d, uint16_t(v), uint8_t(code), g, true);
        }
      }
      EXPECT_EQ(errors, 0u);
      control_total += control_differs;
      std::printf("In %llu cases, no errors found in vllm-ref %s element step (g = %g); the division rewrite "
                  "differs on %llu\n",
                  (unsigned long long)cases, dtype_name(d), double(g), (unsigned long long)control_differs);
    }
    EXPECT_GT(control_total, 0u) << "the division control must differ somewhere";
  }
}

// The scale step of vllm-ref over every amax pattern, against the direct transcription, for the global amaxes of
// one binade [1024, 2048) (every bf16 pattern there); then TransformerEngine's order, amax * (ges * (1/6)) instead of
// ges * (amax * (1/6)) with the same global encode scale, counted where its scale byte differs.
TEST(Reference_QuantBlock, ScaleStepAllAmaxAndTheTeOrder) {
  for (Dtype d : kAllDtypes) {
    const QuantPlan v(op_named("nvfp4_quant"), QuantContract::kVllmRef, d, QuantModels{}, kCfg);
    const QuantPlan t(op_named("nvfp4_quant"), QuantContract::kTe, d, QuantModels{}, kCfg);
    uint64_t cases = 0, differ = 0, errors = 0;
    for (uint16_t gb = 0x4480; gb < 0x4500; ++gb) {
      const float global_amax = half_to_f32(Dtype::kBf16, gb), ges = 2688.0f / global_amax;
      for (uint32_t a = 0; a <= 0x7FFF; ++a) {
        if (is_nan_bits(d, uint16_t(a))) continue;
        ++cases;
        const float amax = half_to_f32(d, uint16_t(a));
        float s = ges * (amax * float(1.0 / 6.0));
        s = s > 448.0f ? 448.0f : s;
        const uint8_t want = f32_to_e4m3(s, E4m3Overflow::kNan);
        const uint8_t got = v.scale_step(uint16_t(a), &ges).scale.byte;
        if (got != want && ++errors <= 8) ADD_FAILURE() << std::hex << "amax 0x" << a << " => 0x" << int(got);
        const uint8_t te = t.scale_step(uint16_t(a), &ges).scale.byte;
        if (te != got && ++differ <= 2)
          std::printf("te/vllm-ref %s differ: global amax 0x%04X (%g) amax 0x%04X (%g): te 0x%02X vllm-ref 0x%02X\n",
                      dtype_name(d), gb, double(global_amax), a, double(amax), te, got);
      }
    }
    EXPECT_EQ(errors, 0u);
    std::printf("In %llu cases, no errors found in vllm-ref %s scale step; te's order differs on %llu\n",
                (unsigned long long)cases, dtype_name(d), (unsigned long long)differ);
  }
}

// The witness of the order: bf16 global amax 1040 (0x4482), block amax 0.0476074 (0x3D43). ges = 2688 / 1040 =
// 2.58461547 (0x40256A57). vllm-ref: amax * f32(1/6) = 0.00793457031 (0x3C020000, exact), times ges =
// 0.0205078125 (0x3CA80000): exactly the midpoint of E4M3 0x0A (0.01953125) and 0x0B (0.021484375), the tie to even
// 0x0A. te: ges * f32(1/6) = 0.430769265 (0x3EDC8DCA), times amax = 0.0205078144 (0x3CA80001), one ulp above: 0x0B.
// te's scalar is the global encode scale (what a kernel receives): 0 is replaced by 1 (block amax 6 -> scale 1,
// 0x38); +Inf is min'd to FLT_MAX (block amax 1 gives min(1 * (FLT_MAX * f32(1/6)), FLT_MAX) = 5.7e37, clamped to
// 448, 0x7E); NaN gives NaN throughout, scale 0x7F. Its derivation from the tensor amax (torch.div(2688, amax), min
// FLT_MAX, 1 where 0): amax 6 gives 448, amax 0 gives Inf -> FLT_MAX, amax +Inf gives 0 -> 1.
TEST(Reference_QuantBlock_bf16, TeGlobalScaleZeroInfNan) {
  const QuantPlan t(op_named("nvfp4_quant"), QuantContract::kTe, Dtype::kBf16, QuantModels{}, kCfg);
  const float zero = 0.0f, inf = INFINITY, nan = NAN;
  EXPECT_EQ(t.scale_step(0x40C0, &zero).scale.byte, 0x38);
  EXPECT_EQ(t.scale_step(0x3F80, &inf).scale.byte, 0x7E);
  EXPECT_EQ(t.scale_step(0x40C0, &nan).scale.byte, 0x7F);
  float g = 0.0f;
  t.scalars_from_tensor_amax(0x40C0, &g);
  EXPECT_EQ(f32_bits(g), 0x43E00000u);
  t.scalars_from_tensor_amax(0x0000, &g);
  EXPECT_EQ(g, FLT_MAX);
  t.scalars_from_tensor_amax(0x7F80, &g);
  EXPECT_EQ(g, 1.0f);
}

TEST(Reference_QuantBlock_bf16, TeOrderWitness) {
  const QuantOpSpec& op = op_named("nvfp4_quant");
  const QuantPlan v(op, QuantContract::kVllmRef, Dtype::kBf16, QuantModels{}, kCfg);
  const QuantPlan t(op, QuantContract::kTe, Dtype::kBf16, QuantModels{}, kCfg);
  const float global_amax = 1040.0f, ges = 2688.0f / global_amax;
  EXPECT_EQ(f32_bits(ges), 0x40256A57u);
  EXPECT_EQ(v.scale_step(0x3D43, &ges).scale.byte, 0x0A);
  EXPECT_EQ(t.scale_step(0x3D43, &ges).scale.byte, 0x0B);
}

/// fp8-group's element step written out from native_per_token_group_quant_fp8: the code of x in a group of amax `a`.
/// `divide` is the control: `amax / 448` as a true division, not the multiply by binary32(1/448) torch performs.
uint8_t fp8_group_element_direct(Dtype d, uint16_t x, uint16_t a, bool divide) {
  float amax = half_to_f32(d, a);
  const float eps = half_to_f32(d, f32_to_half(d, 1e-10f, NanPolicy::kCudaCvtRn));
  if (amax < eps) amax = eps;
  const float s = divide ? amax / 448.0f : amax * float(1.0 / 448.0);
  float y = half_to_f32(d, x) / s;
  if (y != y) y = f32_from_bits(0x7FFFFFFFu);  // the device's NaN, whatever the operands' (x86 keeps x's sign)
  y = y < -448.0f ? -448.0f : y > 448.0f ? 448.0f : y;
  return f32_to_e4m3(y, E4m3Overflow::kNan);
}

// fp8-group's stages against the direct transcription: every value with each block amax of one binade ([1, 2) in
// bf16: 128 patterns; every 8th of [1, 2) in fp16: 128), the block amax's scale step first.
TEST(Reference_QuantBlock, Fp8GroupElementStepEveryValueForABinadeOfAmax) {
  for (Dtype d : kAllDtypes) {
    const QuantPlan p(op_named("fp8_group_quant"), QuantContract::kFp8Group, d, QuantModels{}, kCfg);
    const uint16_t first = d == Dtype::kBf16 ? 0x3F80 : 0x3C00, step = d == Dtype::kBf16 ? 1 : 8;
    uint64_t cases = 0, errors = 0, control_differs = 0;
    for (int i = 0; i < 128; ++i) {
      const uint16_t a = uint16_t(first + i * step);
      const QuantBlockState st = p.scale_step(a, nullptr);
      for (uint32_t x = 0; x <= 0xFFFF; ++x, ++cases) {
        const uint8_t got = p.element_step(uint16_t(x), st), want = fp8_group_element_direct(d, uint16_t(x), a, false);
        if (got != want && ++errors <= 8)
          ADD_FAILURE() << "fp8-group " << dtype_name(d) << std::hex << " x=0x" << x << " amax=0x" << a << " => 0x"
                        << int(got) << " expected 0x" << int(want);
        control_differs += want != fp8_group_element_direct(d, uint16_t(x), a, true);
      }
    }
    EXPECT_EQ(errors, 0u);
    EXPECT_GT(control_differs, 0u) << "the true-division control must differ somewhere";
    std::printf("In %llu cases, no errors found in fp8-group %s element step; amax / 448 as a division differs on "
                "%llu\n",
                (unsigned long long)cases, dtype_name(d), (unsigned long long)control_differs);
  }
}

// The scalars from the tensor amax. vLLM: 2688.0 / tensor_amax is reciprocal(tensor_amax) * 2688: for 6 (bf16
// 0x40C0), f32(1/6) * 2688 = 448.0000134 -> 448 (0x43E00000). te: torch.div(2688, 6) = 448. fp8-group: none.
TEST(Reference_QuantBlock_bf16, ScalarsFromTheTensorAmax) {
  const QuantOpSpec& op = op_named("nvfp4_quant");
  float g = 0.0f;
  QuantPlan(op, QuantContract::kVllmRef, Dtype::kBf16, QuantModels{}, kCfg).scalars_from_tensor_amax(0x40C0, &g);
  EXPECT_EQ(f32_bits(g), 0x43E00000u);
  QuantPlan(op, QuantContract::kFlashinferExact, Dtype::kBf16, QuantModels{}, kCfg).scalars_from_tensor_amax(0x40C0, &g);
  EXPECT_EQ(f32_bits(g), 0x43E00000u);
  QuantPlan(op, QuantContract::kTe, Dtype::kBf16, QuantModels{}, kCfg).scalars_from_tensor_amax(0x40C0, &g);
  EXPECT_EQ(f32_bits(g), 0x43E00000u);
  EXPECT_TRUE(op_named("fp8_group_quant").contracts[0].global_steps.empty());
  for (const QuantContractSpec& c : op.contracts) EXPECT_EQ(c.global_out.size(), c.scalars.size());
}

// vllm-ref's scale step over (tensor amax, block amax) pairs: the tensor amaxes of one bf16 binade [4, 8) (128
// patterns) with every block amax, against the direct transcription (get_nvfp4_global_scale, then ref_nvfp4_quant's
// scale); the control computes 2688 / tensor_amax as one division.
TEST(Reference_QuantBlock_bf16, VllmRefScaleStepTensorAmaxBlockAmaxPairs) {
  const QuantPlan p(op_named("nvfp4_quant"), QuantContract::kVllmRef, Dtype::kBf16, QuantModels{}, kCfg);
  uint64_t cases = 0, errors = 0, control_differs = 0;
  for (uint16_t ta = 0x4080; ta < 0x4100; ++ta) {
    float g = 0.0f;
    p.scalars_from_tensor_amax(ta, &g);
    const float tensor_amax = half_to_f32(Dtype::kBf16, ta);
    const float g_direct = (1.0f / tensor_amax) * 2688.0f, g_control = 2688.0f / tensor_amax;
    for (uint32_t a = 0; a <= 0x7F80; ++a, ++cases) {
      const float amax = half_to_f32(Dtype::kBf16, uint16_t(a));
      auto scale = [&](float gs) {
        float s = gs * (amax * float(1.0 / 6.0));
        return f32_to_e4m3(s > 448.0f ? 448.0f : s, E4m3Overflow::kNan);
      };
      const uint8_t got = p.scale_step(uint16_t(a), &g).scale.byte, want = scale(g_direct);
      if (got != want && ++errors <= 8)
        ADD_FAILURE() << std::hex << "tensor amax 0x" << ta << " amax 0x" << a << " => 0x" << int(got)
                      << " expected 0x" << int(want);
      control_differs += scale(g_control) != want;
    }
  }
  EXPECT_EQ(errors, 0u);
  EXPECT_GT(control_differs, 0u) << "the one-division control must differ somewhere";
  std::printf("In %llu cases, no errors found in vllm-ref bf16 scale step from the tensor amax; 2688 / tensor_amax "
              "as one division differs on %llu\n",
              (unsigned long long)cases, (unsigned long long)control_differs);
}

/// The kernel's element step (cvt_warp_fp16_to_fp4) written out with a reciprocal `rcp`: the code of x under the E4M3
/// scale code and the global scale g.
uint8_t kernel_element_direct(Dtype d, uint16_t v, uint8_t code, float g, float (*rcp)(float)) {
  const float q = e4m3_to_f32(code);
  const float os = q != 0.0f ? rcp(q * rcp(g)) : 0.0f;
  return f32_to_e2m1(half_to_f32(d, v) * os);
}

TEST(Reference_QuantBlock, RcpApproxReadsTheInjectedModel) {
  // Every (value, scale code) pair at g = 896: the contract with a stand-in equals the direct transcription with that
  // stand-in; the stand-in one ulp up (the control) changes some codes.
  QuantModels exact, up;
  exact.rcp_approx = rcp_stand_in_exact;
  up.rcp_approx = rcp_stand_in_one_ulp_up;
  const QuantOpSpec& op = op_named("nvfp4_quant");
  const QuantPlan ra(op, QuantContract::kRcpApprox, Dtype::kBf16, exact, kCfg);
  const QuantPlan rb(op, QuantContract::kRcpApprox, Dtype::kBf16, up, kCfg);
  const float g = 896.0f;
  uint64_t errors = 0, up_differs = 0;
  for (int code = 0; code <= 0x7E; ++code) {
    const QuantBlockState a = ra.scale_from_code(uint8_t(code), &g), b = rb.scale_from_code(uint8_t(code), &g);
    for (uint32_t v = 0; v <= 0xFFFF; ++v) {
      const uint8_t want = kernel_element_direct(Dtype::kBf16, uint16_t(v), uint8_t(code), g, rcp_stand_in_exact);
      const uint8_t got = ra.element_step(uint16_t(v), a);
      if (got != want && ++errors <= 8)
        ADD_FAILURE() << std::hex << "x=0x" << v << " scale=0x" << code << " => 0x" << int(got) << " expected 0x"
                      << int(want);
      up_differs += rb.element_step(uint16_t(v), b) != got;
    }
  }
  EXPECT_EQ(errors, 0u);
  EXPECT_GT(up_differs, 0u);
}

// fp8-group-ue8m0's power of two is torch.exp2(torch.ceil(torch.log2(s))) with a binary32 log2. For s = 16 * (1 +
// 2^-23) the log2, 4 + 1.7e-7, rounds to 4 (half an ulp of 4 is 2.4e-7): the result is 16, not 32 (the control: an
// exact ceiling gives 32). Over every bf16 and fp16 amax, s = amax * f32(1/448) is a power of two or at least 2^-11
// (relative) from one, so the binary32 log2 and the exact ceiling agree on every scale the contract meets.
TEST(Reference_QuantBlock, Ue8m0Pow2StepEveryAmax) {
  QuantGraph g;
  const int s = g.scalar(0, "s");
  const int p = g.pow2_ceil(s, "pow2");
  g.begin_elements();
  g.code(QuantOp::kCodeE4m3, g.element(), E4m3Overflow::kNan);
  QuantOpSpec one_step = op_named("fp8_group_quant");
  QuantContractSpec cs;
  cs.contract = QuantContract::kFp8GroupUe8m0;
  cs.scalars = {"s"};
  cs.scale_steps = g.scale_steps();
  cs.element_steps = g.element_steps();
  cs.scale_out = p;
  cs.scale_format = ScaleFormat::kUe8m0;
  one_step.contracts = {cs};
  const QuantPlan step(one_step, QuantContract::kFp8GroupUe8m0, Dtype::kBf16, QuantModels{}, kCfg);
  const float above16 = f32_from_bits(0x41800001u);
  EXPECT_EQ(step.scale_step(0, &above16).scale.value, 16.0f);
  const float above1 = f32_from_bits(0x3F800001u), sixteen = 16.0f, zero = 0.0f;
  EXPECT_EQ(step.scale_step(0, &above1).scale.value, 2.0f);  // log2 = 1.7e-7, above 0: ceil 1
  EXPECT_EQ(step.scale_step(0, &sixteen).scale.value, 16.0f);
  EXPECT_EQ(step.scale_step(0, &zero).scale.value, 0.0f);
  for (Dtype d : kAllDtypes) {
    const QuantPlan u(op_named("fp8_group_quant"), QuantContract::kFp8GroupUe8m0, d, QuantModels{}, kCfg);
    uint64_t cases = 0, errors = 0;
    for (uint32_t a = 0; a <= 0x7FFF; ++a) {
      if (is_nan_bits(d, uint16_t(a))) continue;
      ++cases;
      const float sv = half_to_f32(d, uint16_t(a)) * float(1.0 / 448.0);
      float want = sv == 0.0f ? 0.0f : sv;
      if (sv > 0.0f && sv < INFINITY) {
        int e = 0;
        const float m = std::frexp(sv, &e);
        want = std::ldexp(1.0f, m == 0.5f ? e - 1 : e);  // the exact ceiling
      }
      const float floor = float(1.0 / (448.0 * 512.0));
      want = want < floor ? floor : want;
      const float got = u.scale_step(uint16_t(a), nullptr).scale.value;
      if (f32_bits(got) != f32_bits(want) && ++errors <= 8)
        ADD_FAILURE() << dtype_name(d) << std::hex << " amax=0x" << a << " => 0x" << f32_bits(got) << " expected 0x"
                      << f32_bits(want);
    }
    EXPECT_EQ(errors, 0u);
    std::printf("In %llu cases, no errors found in fp8-group-ue8m0 %s scale step (the exact power-of-two ceiling, "
                "floored)\n", (unsigned long long)cases, dtype_name(d));
  }
}

TEST(Reference_QuantBlock, VllmRefAndKernelArithmeticDifferOnSignedZeros) {
  // With exact reciprocals the kernel's arithmetic equals vllm-ref on every finite element except where the scaled
  // value is -0: x = -0.0 under every scale code, and every negative x under scale code 0x00 (output scale 0, so
  // x * 0 = -0): vLLM's table * sign(-0) gives +0 (0x0), cvt keeps the sign (0x8). A scale of 0x00 with nonzero
  // members happens when g * amax / 6 is below 2^-10. The NaN member is the other difference (NanMemberEachContract).
  QuantModels m;
  m.rcp_approx = rcp_stand_in_exact;
  const QuantOpSpec& op = op_named("nvfp4_quant");
  const QuantPlan v(op, QuantContract::kVllmRef, Dtype::kBf16, m, kCfg);
  const QuantPlan k(op, QuantContract::kRcpApprox, Dtype::kBf16, m, kCfg);
  const float g = 1.0f;
  uint64_t differ = 0, unexpected = 0;
  for (int code = 0; code <= 0x7E; ++code) {
    const QuantBlockState a = v.scale_from_code(uint8_t(code), &g), b = k.scale_from_code(uint8_t(code), &g);
    for (uint32_t x = 0; x <= 0xFFFF; ++x) {
      if (is_nan_bits(Dtype::kBf16, uint16_t(x)) || (x & 0x7FFF) == 0x7F80) continue;  // NaN, +-Inf
      const uint8_t cv = v.element_step(uint16_t(x), a), ck = k.element_step(uint16_t(x), b);
      if (cv == ck) continue;
      ++differ;
      const bool expected = (x == 0x8000 || (code == 0 && (x & 0x8000))) && cv == 0x0 && ck == 0x8;
      if (!expected && ++unexpected <= 8)
        ADD_FAILURE() << std::hex << "x=0x" << x << " scale=0x" << code << " vllm 0x" << int(cv) << " kernel 0x"
                      << int(ck);
    }
  }
  EXPECT_EQ(unexpected, 0u);
  EXPECT_EQ(differ, 126u + 32640u);  // -0.0 under codes 0x01..0x7E, and 0x8000..0xFF7F under code 0x00
}

/// Blocks whose amaxes spread over most binades (a quarter of the members any 16 bits, NaN and Inf included, the rest
/// in a few binades around 1, with zeros), as the audit's large calls draw them.
std::vector<uint16_t> memo_blocks(Dtype d, int n, int blocks, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint16_t> v(size_t(n) * size_t(blocks));
  const int mbits = d == Dtype::kBf16 ? 7 : 10, bias = d == Dtype::kBf16 ? 127 : 15;
  for (uint16_t& x : v) {
    const uint32_t h = rng();
    if (h % 4 == 0) x = uint16_t(rng());
    else if (h % 16 == 1) x = 0;
    else x = uint16_t(((h >> 8) & 0x8000u) | (uint32_t(bias - 6 + int((h >> 4) % 9u)) << mbits) |
                      ((h >> 12) & ((1u << mbits) - 1)));
  }
  return v;
}

// QuantCodeMemo gives QuantPlan::quantize's bytes, for every op, contract and dtype, with rows for every scale, for
// two and for none (every block computed directly).
TEST(Reference_QuantCodeMemo, EqualsQuantizeEveryOpContractAndDtype) {
  QuantModels models;
  models.rcp_approx = rcp_stand_in_one_ulp_up;
  for (const QuantOpSpec& op : quant_op_registry())
    for (const QuantContractSpec& c : op.contracts)
      for (Dtype d : {Dtype::kBf16, Dtype::kFp16}) {
        const QuantPlan plan(op, c.contract, d, models, kCfg);
        const int n = plan.block_size(), blocks = 512;
        const std::vector<uint16_t> v = memo_blocks(d, n, blocks, 7);
        float scalars[4] = {1.0f, 1.0f, 1.0f, 1.0f};
        if (plan.scalars() > 0) plan.scalars_from_tensor_amax(f32_to_half(d, 3.0f, NanPolicy::kCudaCvtRn), scalars);
        for (int max_rows : {256, 2, 0}) {
          QuantCodeMemo memo(plan, scalars, max_rows);
          uint64_t errors = 0;
          std::vector<uint8_t> want(static_cast<size_t>(n)), got(static_cast<size_t>(n));
          for (int b = 0; b < blocks; ++b) {
            const uint16_t* x = v.data() + size_t(b) * size_t(n);
            const QuantScale ws = plan.quantize(x, scalars, want.data());
            const QuantScale gs = memo.block(plan.block_amax(x, n)).scale;
            for (int e = 0; e < n; ++e) got[size_t(e)] = memo.code(x[e]);
            if ((gs.byte != ws.byte || f32_bits(gs.value) != f32_bits(ws.value) || got != want) && ++errors <= 4)
              ADD_FAILURE() << op.name << " " << quant_contract_name(c.contract) << " " << dtype_name(d)
                            << " max_rows " << max_rows << ": block " << b << " differs from quantize";
          }
          EXPECT_EQ(errors, 0u) << op.name << " " << quant_contract_name(c.contract) << " " << dtype_name(d);
          EXPECT_LE(memo.rows(), size_t(max_rows));
          if (max_rows == 256) EXPECT_GT(memo.rows(), 2u) << op.name << ": the blocks should need more than two rows";
        }
      }
}

// The memo's point: an E4M3 scale gives at most 256 rows however many amaxes the blocks have, since the element step
// reads only registers derived from the scale's byte. A binary32 scale (fp8-group) reads the amax's own value.
TEST(Reference_QuantCodeMemo, Nvfp4RowsAreScalesNotAmaxes) {
  const QuantPlan plan(op_named("nvfp4_quant"), QuantContract::kVllmRef, Dtype::kBf16, {}, kCfg);
  const float g = 896.0f;
  QuantCodeMemo memo(plan, &g);
  const std::vector<uint16_t> v = memo_blocks(Dtype::kBf16, 16, 1 << 14, 11);
  std::vector<uint16_t> amaxes;
  for (size_t b = 0; b < v.size() / 16; ++b) {
    amaxes.push_back(plan.block_amax(v.data() + 16 * b, 16));
    memo.block(amaxes.back());
  }
  std::sort(amaxes.begin(), amaxes.end());
  const size_t distinct = size_t(std::unique(amaxes.begin(), amaxes.end()) - amaxes.begin());
  EXPECT_GT(distinct, 2000u);
  EXPECT_LE(memo.rows(), 256u);
  EXPECT_GT(memo.rows(), 10u);
}

// QuantCodeMemos serves a worker's memo again only for the same plan and the same scalars (bit for bit); with other
// scalars it gives a fresh memo, whose codes are quantize's under those scalars. The control: the first memo's codes,
// read under the second scalars, differ from quantize's somewhere (a memo reused across scalars would be wrong).
TEST(Reference_QuantCodeMemo, MemosAreReplacedWhenTheScalarsChange) {
  const QuantPlan plan(op_named("nvfp4_quant"), QuantContract::kVllmRef, Dtype::kBf16, {}, kCfg);
  const float g1 = 896.0f, g2 = 37.0f;
  const std::vector<uint16_t> v = memo_blocks(Dtype::kBf16, 16, 256, 3);
  QuantCodeMemos memos;
  memos.prepare(2);
  QuantCodeMemo& first = memos.memo(1, plan, &g1);
  EXPECT_TRUE(first.serves(plan, &g1));
  EXPECT_FALSE(first.serves(plan, &g2));
  EXPECT_EQ(&memos.memo(1, plan, &g1), &first);
  uint64_t stale_differs = 0;
  for (size_t b = 0; b < 256; ++b) {
    const uint16_t* x = v.data() + 16 * b;
    uint8_t want[16];
    plan.quantize(x, &g2, want);
    first.block(plan.block_amax(x, 16));
    for (int e = 0; e < 16; ++e) stale_differs += first.code(x[e]) != want[e];
  }
  EXPECT_GT(stale_differs, 0u);
  QuantCodeMemo& second = memos.memo(1, plan, &g2);
  EXPECT_TRUE(second.serves(plan, &g2));
  uint64_t errors = 0;
  for (size_t b = 0; b < 256; ++b) {
    const uint16_t* x = v.data() + 16 * b;
    uint8_t want[16];
    const QuantScale ws = plan.quantize(x, &g2, want);
    errors += second.block(plan.block_amax(x, 16)).scale.byte != ws.byte;
    for (int e = 0; e < 16; ++e) errors += second.code(x[e]) != want[e];
  }
  EXPECT_EQ(errors, 0u);
  EXPECT_THROW(memos.memo(2, plan, &g1), std::out_of_range);
}

}  // namespace
}  // namespace fuseproof::ref
