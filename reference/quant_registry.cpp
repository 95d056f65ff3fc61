// quant_registry.cpp: every quantization op and each public reference it can be judged against, declared once.
#include "quant_spec.h"

#include <cfloat>
#include <cstdio>
#include <stdexcept>

#include "dtype.h"

namespace fuseproof::ref {

const char* quant_contract_name(QuantContract c) {
  switch (c) {
    case QuantContract::kVllmRef: return "vllm-ref";
    case QuantContract::kRcpApprox: return "rcp-approx";
    case QuantContract::kTe: return "te";
    case QuantContract::kFlashinferExact: return "flashinfer-exact";
    case QuantContract::kFp8Group: return "fp8-group";
    case QuantContract::kFp8GroupUe8m0: return "fp8-group-ue8m0";
  }
  return "?";
}

std::optional<QuantContract> parse_quant_contract(std::string_view s) {
  for (QuantContract c : kAllQuantContracts)
    if (s == quant_contract_name(c)) return c;
  return std::nullopt;
}

const char* element_format_name(ElementFormat f) { return f == ElementFormat::kE2m1 ? "e2m1" : "e4m3"; }
const char* scale_format_name(ScaleFormat f) {
  return f == ScaleFormat::kFp32 ? "fp32" : f == ScaleFormat::kUe8m0 ? "ue8m0" : "e4m3";
}
const char* scale_layout_name(ScaleLayout l) { return l == ScaleLayout::kLinear ? "linear" : "swizzled-128x4"; }

const QuantContractSpec* QuantOpSpec::contract(QuantContract c) const {
  for (const QuantContractSpec& s : contracts)
    if (s.contract == c) return &s;
  return nullptr;
}

int QuantGraph::push(QuantStep s) {
  steps_.push_back(std::move(s));
  return int(steps_.size()) - 1;
}
int QuantGraph::amax(AmaxRule rule, const char* name) {
  QuantStep s;
  s.op = QuantOp::kAmax;
  s.amax = rule;
  s.name = name;
  return push(s);
}
int QuantGraph::element(const char* name) {
  QuantStep s;
  s.op = QuantOp::kElement;
  s.name = name;
  return push(s);
}
int QuantGraph::scalar(int index, const char* name) {
  QuantStep s;
  s.op = QuantOp::kScalar;
  s.index = index;
  s.name = name;
  return push(s);
}
int QuantGraph::constant(float value, const char* name) {
  QuantStep s;
  s.op = QuantOp::kConst;
  s.value = value;
  s.name = name;
  return push(s);
}
int QuantGraph::clamp_min_half(int a, float eps, const char* name) {
  QuantStep s;
  s.op = QuantOp::kClampMinHalf;
  s.a = a;
  s.value = eps;
  s.name = name;
  return push(s);
}
namespace {
QuantStep binary_step(QuantOp op, int a, int b, const char* name) {
  QuantStep s;
  s.op = op;
  s.a = a;
  s.b = b;
  s.name = name;
  return s;
}
}  // namespace
int QuantGraph::mul(int a, int b, const char* name) { return push(binary_step(QuantOp::kMul, a, b, name)); }
int QuantGraph::div(int a, int b, const char* name) { return push(binary_step(QuantOp::kDiv, a, b, name)); }
int QuantGraph::rcp_exact(int a, const char* name) { return push(binary_step(QuantOp::kRcpExact, a, -1, name)); }
int QuantGraph::rcp_approx(int a, const char* name) { return push(binary_step(QuantOp::kRcpApprox, a, -1, name)); }
int QuantGraph::min(int a, float value, const char* name) {
  QuantStep s = binary_step(QuantOp::kMin, a, -1, name);
  s.value = value;
  return push(s);
}
int QuantGraph::max(int a, float value, const char* name) {
  QuantStep s = binary_step(QuantOp::kMax, a, -1, name);
  s.value = value;
  return push(s);
}
int QuantGraph::clamp(int a, float lo, float hi, const char* name) {
  QuantStep s = binary_step(QuantOp::kClamp, a, -1, name);
  s.value = lo;
  s.value2 = hi;
  return push(s);
}
int QuantGraph::if_zero(int a, int then_, int else_, const char* name) {
  QuantStep s = binary_step(QuantOp::kIfZero, a, then_, name);
  s.c = else_;
  return push(s);
}
int QuantGraph::e4m3_round_trip(int a, E4m3Overflow o, const char* name) {
  QuantStep s = binary_step(QuantOp::kE4m3RoundTrip, a, -1, name);
  s.overflow = o;
  return push(s);
}
int QuantGraph::pow2_ceil(int a, const char* name) { return push(binary_step(QuantOp::kPow2Ceil, a, -1, name)); }
int QuantGraph::code(QuantOp op, int a, E4m3Overflow o) {
  QuantStep s = binary_step(op, a, -1, "code");
  s.overflow = o;
  return push(s);
}
std::vector<QuantStep> QuantGraph::scale_steps() const {
  return {steps_.begin(), steps_.begin() + (scale_count_ < 0 ? long(steps_.size()) : long(scale_count_))};
}
std::vector<QuantStep> QuantGraph::element_steps() const {
  if (scale_count_ < 0) return {};
  return {steps_.begin() + scale_count_, steps_.end()};
}

namespace {

constexpr E4m3Overflow kSat = E4m3Overflow::kSaturate;
constexpr E4m3Overflow kNanOv = E4m3Overflow::kNan;
// Python floats that torch narrows to binary32 (`tensor * python_scalar`, `tensor / python_scalar` multiplies by
// the scalar's binary32 reciprocal): the double is rounded once, at compile time.
constexpr float kOneSixth = float(1.0 / 6.0);      // 0x3E2AAAAB
constexpr float kOne448th = float(1.0 / 448.0);    // 0x3B124925
// vLLM's _FP8_MIN_SCALING_FACTOR = 1.0 / (448.0 * 512.0), narrowed by clamp(min=) on a binary32 tensor.
constexpr float kMinScalingFactor = float(1.0 / (448.0 * 512.0));

QuantContractSpec finish(QuantContract c, QuantGraph& g, int scale_out, ScaleFormat f, std::vector<std::string> scalars,
                         std::string meaning, std::string specials, std::string source) {
  QuantContractSpec s;
  s.contract = c;
  s.scalars = std::move(scalars);
  s.scale_steps = g.scale_steps();
  s.element_steps = g.element_steps();
  s.scale_out = scale_out;
  s.scale_format = f;
  s.meaning = std::move(meaning);
  s.specials = std::move(specials);
  s.source = std::move(source);
  return s;
}

/// vLLM's ref_nvfp4_quant, at PyTorch-CUDA level: vec_max = torch.max(abs(x)) on the T tensor, to fp32;
/// scale = global_scale * (vec_max * get_reciprocal(6.0)) with the Python 1/6 narrowed to binary32; clamp +-448;
/// to(float8_e4m3fn) and back; output_scale = get_reciprocal(scale * get_reciprocal(global_scale)), get_reciprocal
/// being torch.where(t == 0, 0, 1.0 / t) and 1.0 / t torch.reciprocal(t) * 1.0; the element x * output_scale, clamp
/// +-6, cast_to_fp4 (a comparison table on |x| times torch.sign(x)).
/// FlashInfer's test reference ref_fp4_quant (tests/test_helpers/utils_fp4.py, E4M3 scales) is the same without the
/// clamp (`clamp448` false): a block scale above 464 casts to E4M3 NaN, which reaches every element.
QuantContractSpec vllm_ref(bool clamp448) {
  QuantGraph g;
  const int amax = g.amax(AmaxRule::kTorchMax);
  const int gs = g.scalar(0, "global_scale");
  const int r6 = g.constant(kOneSixth, "1/6");
  const int t = g.mul(amax, r6, "amax_over_6");
  const int s = g.mul(gs, t, "s");
  const int sc = clamp448 ? g.clamp(s, -448.0f, 448.0f, "s_clamped") : s;
  const int q = g.e4m3_round_trip(sc, kNanOv, "scale");
  const int zero = g.constant(0.0f, "0");
  const int rg0 = g.rcp_exact(gs, "rcp_global");
  const int rg = g.if_zero(gs, zero, rg0, "inv_global");
  const int p = g.mul(q, rg, "p");
  const int rp = g.rcp_exact(p, "rcp_p");
  const int os = g.if_zero(p, zero, rp, "output_scale");
  g.begin_elements();
  const int x = g.element();
  const int y = g.mul(x, os, "scaled");
  const int yc = g.clamp(y, -6.0f, 6.0f, "clipped");
  g.code(QuantOp::kCodeE2m1VllmTable, yc);
  if (!clamp448)
    return finish(QuantContract::kFlashinferExact, g, q, ScaleFormat::kE4m3, {"global_scale"},
                  "scale = e4m3(g * (amax * f32(1/6))) (no clamp); out_scale = where(p == 0, 0, 1 / p), p = scale * "
                  "where(g == 0, 0, 1 / g); code = table(clamp(x * out_scale, +-6)) * sign(x)",
                  "a scale above 464 (448 * 6 * (1 + 1/28) / g and above) is E4M3 NaN (0x7F) and every code NaN "
                  "(0xFF); 464 itself ties to 448 (0x7E); NaN member: scale 0x7F, codes 0xFF; zero block: scale 0x00, "
                  "codes 0x0; a -0 product codes +0 (torch.sign(-0.0) = 0)",
                  "flashinfer-ai/flashinfer tests/test_helpers/utils_fp4.py (ref_fp4_quant with sf_use_ue8m0=False, "
                  "get_reciprocal, cast_to_fp4)");
  return finish(QuantContract::kVllmRef, g, q, ScaleFormat::kE4m3, {"global_scale"},
                "scale = e4m3(clamp(g * (amax * f32(1/6)), +-448)); out_scale = where(p == 0, 0, 1 / p), "
                "p = scale * where(g == 0, 0, 1 / g); code = table(clamp(x * out_scale, +-6)) * sign(x)",
                "NaN member: the amax is NaN, scale 0x7F, every code NaN (0xFF); zero block: scale 0x00, output "
                "scale 0, codes 0x0; a -0 product codes +0 (torch.sign(-0.0) = 0): -0.0, and every negative member under scale "
                "0x00; 448 * 6 and above clamp to 448 (0x7E)",
                "vllm-project/vllm vllm/model_executor/layers/quantization/utils/nvfp4_emulation_utils.py "
                "(ref_nvfp4_quant with the +-448 clamp, get_reciprocal, cast_to_fp4; the test copy in "
                "tests/kernels/quantization has no clamp)");
}

/// The kernel cvt_warp_fp16_to_fp4 (vllm-project/vllm csrc/quantization/fp4/nvfp4_utils.cuh; the same in
/// TensorRT-LLM and FlashInfer), every reciprocal PTX rcp.approx.ftz.f32 (the injected model).
QuantContractSpec rcp_approx() {
  QuantGraph g;
  const int amax = g.amax(AmaxRule::kHmax);
  const int gs = g.scalar(0, "global_scale");
  const int six = g.constant(6.0f, "6");
  const int r6 = g.rcp_approx(six, "rcp_6");
  const int t = g.mul(amax, r6, "amax_over_6");
  const int s = g.mul(gs, t, "SFValue");
  const int q = g.e4m3_round_trip(s, kSat, "scale");
  const int rg = g.rcp_approx(gs, "rcp_global");
  const int p = g.mul(q, rg, "p");
  const int rp = g.rcp_approx(p, "rcp_p");
  const int zero = g.constant(0.0f, "0");
  const int os = g.if_zero(q, zero, rp, "output_scale");
  g.begin_elements();
  const int x = g.element();
  const int y = g.mul(x, os, "scaled");
  g.code(QuantOp::kCodeE2m1Cvt, y);
  return finish(QuantContract::kRcpApprox, g, q, ScaleFormat::kE4m3, {"global_scale"},
                "scale = e4m3_satfinite(g * (amax * rcp(6))); out_scale = scale != 0 ? rcp(scale * rcp(g)) : 0; "
                "code = cvt.rn.satfinite.e2m1(x * out_scale); rcp = rcp.approx.ftz; amax by __hmax2 in T",
                "NaN member: dropped by __hmax2 (the scale comes from the rest), its code 0x7 (cvt gives +6); all "
                "NaN: scale 0x7F; zero block: scale 0x00, output scale 0, codes 0x0; -0.0 codes 0x8; SFValue above "
                "464 saturates to 448 (0x7E)",
                "vllm-project/vllm csrc/quantization/fp4/nvfp4_utils.cuh (cvt_warp_fp16_to_fp4), the same in "
                "TensorRT-LLM and FlashInfer (csrc/nv_internal quantization)");
}

/// TransformerEngine's NVFP4QuantizerRef._quantize_blockwise_reference (1x16 tiles, E4M3 scales) from its global
/// encode scale, the record's scalar (what a kernel receives): ges = min(scalar, FLT_MAX), 1 where it is 0 (identities
/// on the encode scale TE derives, with_te_global); global_decode_scale = torch.div(1.0, ges); decode scale vec_max *
/// (ges * reciprocal(6)), min FLT_MAX, clamp +-448, to e4m3; encode scale min(1 / (decode * gds), FLT_MAX); codes by
/// cast_to_fp4x2's table.
QuantContractSpec te() {
  QuantGraph g;
  const int amax = g.amax(AmaxRule::kTorchMax);
  const int gs = g.scalar(0, "global_scale");
  const int ges1 = g.min(gs, FLT_MAX, "ges_finite");
  const int one = g.constant(1.0f, "1");
  const int ges = g.if_zero(ges1, one, ges1, "global_encode_scale");
  const int gds = g.div(one, ges, "global_decode_scale");
  const int six = g.constant(6.0f, "6");
  const int r6 = g.rcp_exact(six, "reciprocal_6");
  const int m = g.mul(ges, r6, "encode_multiplier");
  const int d0 = g.mul(amax, m, "d");
  const int d1 = g.min(d0, FLT_MAX, "d_finite");
  const int d2 = g.clamp(d1, -448.0f, 448.0f, "d_clamped");
  const int q = g.e4m3_round_trip(d2, kNanOv, "scale");
  const int p = g.mul(q, gds, "p");
  const int e0 = g.div(one, p, "encode_raw");
  const int e = g.min(e0, FLT_MAX, "encode_scale");
  g.begin_elements();
  const int x = g.element();
  const int y = g.mul(x, e, "scaled");
  const int yc = g.clamp(y, -6.0f, 6.0f, "clipped");
  g.code(QuantOp::kCodeE2m1TeTable, yc);
  return finish(QuantContract::kTe, g, q, ScaleFormat::kE4m3, {"global_scale"},
                "ges = min(g, FLT_MAX) (1 if 0), g the global encode scale; scale = e4m3(clamp(min(amax * (ges * "
                "reciprocal(6)), FLT_MAX), +-448)); enc = min(1 / (scale * (1 / ges)), FLT_MAX); code = "
                "table(clamp(x * enc, +-6))",
                "NaN member: amax NaN, scale 0x7F, codes 0x0 (the table matches nothing); zero block: scale 0x00, "
                "encode scale FLT_MAX, codes 0x0; -0.0 codes 0x0; g 0 is replaced by 1, g +Inf by FLT_MAX, a NaN g "
                "gives scale 0x7F and codes 0x0",
                "NVIDIA/TransformerEngine transformer_engine/pytorch/custom_recipes/quantization_nvfp4.py "
                "(NVFP4QuantizerRef._quantize_blockwise_reference, cast_to_fp4x2)");
}

/// sglang's (and vLLM's test) native_per_token_group_quant_fp8: amax = abs(x).max() on the T tensor, clamp(min=1e-10)
/// on that T tensor (eps rounded to T: 0 in fp16), to fp32; x_s = amax / 448 (times binary32(1/448)); x_q = (x / x_s)
/// clamped to +-448, to(float8_e4m3fn).
QuantContractSpec fp8_group() {
  QuantGraph g;
  const int amax = g.amax(AmaxRule::kTorchMax);
  const int a = g.clamp_min_half(amax, 1e-10f, "amax_eps");
  const int r = g.constant(kOne448th, "1/448");
  const int scale = g.mul(a, r, "scale");
  g.begin_elements();
  const int x = g.element();
  const int y = g.div(x, scale, "scaled");
  const int yc = g.clamp(y, -448.0f, 448.0f, "clipped");
  g.code(QuantOp::kCodeE4m3, yc, kNanOv);
  return finish(QuantContract::kFp8Group, g, scale, ScaleFormat::kFp32, {},
                "scale = max(amax, round_T(1e-10)) * f32(1/448); code = e4m3(clamp(x / scale, +-448))",
                "NaN member: amax NaN, scale NaN, every code 0x7F; zero group: bf16 scale 2.2e-13, codes 0x00; fp16 eps "
                "rounds to 0, scale 0, 0/0 NaN: codes 0x7F; -0.0 codes 0x80",
                "sgl-project/sglang python/sglang/test/test_block_fp8.py native_per_token_group_quant_fp8 (the same "
                "in vllm-project/vllm tests/kernels/quantization/test_block_fp8.py)");
}

/// vLLM's QuantFP8._quantize_group_native with use_ue8m0 (vllm/model_executor/layers/quantization/input_quant_fp8.py,
/// the op's torch path): absmax = x.abs().max() in T, .float(); scales_raw = absmax / 448 (times binary32(1/448));
/// exp2(ceil(log2(scales_raw))) in binary32; clamp(min=1 / (448 * 512)); x_q = (x / scales) clamped to +-448, to
/// float8_e4m3fn.
QuantContractSpec fp8_group_ue8m0() {
  QuantGraph g;
  const int amax = g.amax(AmaxRule::kTorchMax);
  const int r = g.constant(kOne448th, "1/448");
  const int s = g.mul(amax, r, "scales_raw");
  const int p = g.pow2_ceil(s, "pow2");
  const int scale = g.max(p, kMinScalingFactor, "scale");
  g.begin_elements();
  const int x = g.element();
  const int y = g.div(x, scale, "scaled");
  const int yc = g.clamp(y, -448.0f, 448.0f, "clipped");
  g.code(QuantOp::kCodeE4m3, yc, kNanOv);
  return finish(QuantContract::kFp8GroupUe8m0, g, scale, ScaleFormat::kUe8m0, {},
                "scale = max(exp2(ceil(log2_f32(amax * f32(1/448)))), f32(1 / 229376)); code = e4m3(clamp(x / scale, "
                "+-448)); log2 rounded to binary32, so a scale just above 2^k (|k| >= 2) can round to 2^k",
                "NaN member: scale NaN, every code 0x7F; zero group (and any amax / 448 <= 2^-18): scale the floor "
                "f32(1/229376) = 4.36e-6, not a power of two, codes 0x00 (-0.0 0x80); Inf member: scale +Inf, its code "
                "0x7F, the rest 0x00/0x80; from a bf16/fp16 amax the scale is never in log2's rounding gap: the exact "
                "power-of-two ceiling",
                "vllm-project/vllm vllm/model_executor/layers/quantization/input_quant_fp8.py "
                "(QuantFP8._quantize_group_native, use_ue8m0)");
}

/// vLLM's get_nvfp4_global_scale: (448.0 * 6.0) / torch.abs(a).max().to(float32), a Python float over a tensor:
/// reciprocal(tensor_amax) * 2688 (the Python product 2688.0 is exact). The kernels take the scale vLLM passes them.
QuantContractSpec with_vllm_global(QuantContractSpec c) {
  QuantGraph g;
  const int amax = g.amax(AmaxRule::kTorchMax, "tensor_amax");
  const int r = g.rcp_exact(amax, "rcp_tensor_amax");
  const int k = g.constant(2688.0f, "448*6");
  c.global_out = {g.mul(r, k, "global_scale")};
  c.global_steps = g.scale_steps();
  c.global_source = "vllm-project/vllm tests/kernels/quantization/nvfp4_utils.py (get_nvfp4_global_scale)";
  return c;
}

/// TransformerEngine's global encode scale from the tensor amax: torch.div(448 * 6, global_amax) (tensor constants:
/// one true division), min FLT_MAX, 1 where it is 0.
QuantContractSpec with_te_global(QuantContractSpec c) {
  QuantGraph g;
  const int amax = g.amax(AmaxRule::kTorchMax, "global_amax");
  const int k = g.constant(2688.0f, "448*6");
  const int ges0 = g.div(k, amax, "ges_raw");
  const int ges1 = g.min(ges0, FLT_MAX, "ges_finite");
  const int one = g.constant(1.0f, "1");
  c.global_out = {g.if_zero(ges1, one, ges1, "global_scale")};
  c.global_steps = g.scale_steps();
  c.global_source = "NVIDIA/TransformerEngine transformer_engine/pytorch/custom_recipes/quantization_nvfp4.py "
                    "(NVFP4QuantizerRef: global_encode_scale from global_amax)";
  return c;
}

std::vector<QuantContractSpec> nvfp4_contracts() {
  QuantContractSpec flashinfer = with_vllm_global(vllm_ref(false));
  flashinfer.global_source = "(448 * 6) / tensor_amax with Python floats, as vLLM's get_nvfp4_global_scale; assumed "
                             "for FlashInfer's tests/utils/test_fp4_quantize.py, not confirmed line by line";
  return {with_vllm_global(vllm_ref(true)), with_vllm_global(rcp_approx()), with_te_global(te()), flashinfer};
}

/// A quantization op; `family`, when given, is its activation stage (the op's inputs are the family op's).
QuantOpSpec quant_op(const std::string& name, const std::string& formula, const OpSpec* family, int block,
                     ElementFormat f, std::vector<QuantContractSpec> contracts, const std::string& users) {
  QuantOpSpec op;
  op.name = name;
  op.formula = formula;
  op.block_size = block;
  op.element_format = f;
  op.contracts = std::move(contracts);
  op.users = users;
  if (family) {
    op.inputs = family->inputs;  // the activation stage's inputs, in its declared order
    op.activation = {family->name, Contract::kEager};
  } else {
    op.inputs = {{"x", Layout::kElementwise}};
  }
  op.scale_layouts = f == ElementFormat::kE2m1 ? std::vector<ScaleLayout>{ScaleLayout::kLinear, ScaleLayout::kSwizzled128x4}
                                               : std::vector<ScaleLayout>{ScaleLayout::kLinear};
  return op;
}

/// What a quantization kind fixes: its name in op names, its block, its element format, its contracts.
struct QuantScheme {
  std::string name;
  int block;
  ElementFormat format;
  std::vector<QuantContractSpec> contracts;
};
QuantScheme scheme(QuantFusion::Kind k) {
  if (k == QuantFusion::kFp8Group) return {"fp8_group", 128, ElementFormat::kE4m3, {fp8_group(), fp8_group_ue8m0()}};
  return {"nvfp4", 16, ElementFormat::kE2m1, nvfp4_contracts()};
}

/// The two quantizations alone, then every fused op the op spec declares (OpSpec::quant_fusions), in the spec's
/// order of ops.
std::vector<QuantOpSpec> build() {
  const QuantScheme fp8 = scheme(QuantFusion::kFp8Group), nvfp4 = scheme(QuantFusion::kNvfp4);
  std::vector<QuantOpSpec> ops = {
      quant_op(fp8.name + "_quant", "codes, scales = fp8_group(x); groups of 128 along a row", nullptr, fp8.block,
               fp8.format, fp8.contracts, "sglang per_token_group_quant_fp8, vLLM, DeepSeek-V3 activations"),
      quant_op(nvfp4.name + "_quant", "codes, scales = nvfp4(x, global); blocks of 16 along a row", nullptr,
               nvfp4.block, nvfp4.format, nvfp4.contracts,
               "vLLM scaled_fp4_quant, TensorRT-LLM, FlashInfer fp4_quantize, TransformerEngine"),
  };
  for (const OpSpec& family : op_registry())
    for (const QuantFusion& q : family.quant_fusions) {
      const QuantScheme& s = q.kind == QuantFusion::kFp8Group ? fp8 : nvfp4;
      ops.push_back(quant_op(family.name + "_" + s.name + "_quant", q.formula, &family, s.block, s.format,
                             s.contracts, q.users));
    }
  return ops;
}

std::string operand(const QuantContractSpec& c, int i) {
  const int n = int(c.scale_steps.size());
  return i < n ? c.scale_steps[size_t(i)].name : c.element_steps[size_t(i - n)].name;
}

std::string float_text(float v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.9g [0x%08X]", double(v), f32_bits(v));
  return b;
}

}  // namespace

const std::vector<QuantOpSpec>& quant_op_registry() {
  static const std::vector<QuantOpSpec> ops = build();
  return ops;
}

const QuantOpSpec* find_quant_op(std::string_view name) {
  for (const QuantOpSpec& op : quant_op_registry())
    if (op.name == name) return &op;
  return nullptr;
}

std::string quant_op_names() {
  std::string s;
  for (const QuantOpSpec& op : quant_op_registry()) s += (s.empty() ? "" : ", ") + op.name;
  return s;
}

std::string quant_step_text(const QuantContractSpec& c, int i) {
  const int n = int(c.scale_steps.size());
  const QuantStep& s = i < n ? c.scale_steps[size_t(i)] : c.element_steps[size_t(i - n)];
  auto a = [&] { return operand(c, s.a); };
  std::string rhs;
  switch (s.op) {
    case QuantOp::kAmax: rhs = s.amax == AmaxRule::kTorchMax ? "max|x| in T (torch.max: NaN propagates)"
                                                             : "max|x| in T (__hmax2: NaN dropped)"; break;
    case QuantOp::kElement: rhs = "x widened from T"; break;
    case QuantOp::kScalar: rhs = "scalar " + std::to_string(s.index) + " (binary32)"; break;
    case QuantOp::kConst: rhs = float_text(s.value); break;
    case QuantOp::kClampMinHalf: rhs = "max(" + a() + ", round_T(" + float_text(s.value) + "))"; break;
    case QuantOp::kMul: rhs = "mul(" + a() + ", " + operand(c, s.b) + ")"; break;
    case QuantOp::kDiv: rhs = "div(" + a() + ", " + operand(c, s.b) + ")"; break;
    case QuantOp::kRcpExact: rhs = "rcp-exact(" + a() + ")"; break;
    case QuantOp::kRcpApprox: rhs = "rcp-approx(" + a() + ")"; break;
    case QuantOp::kMin: rhs = "min(" + a() + ", " + float_text(s.value) + ")"; break;
    case QuantOp::kMax: rhs = "max(" + a() + ", " + float_text(s.value) + ")"; break;
    case QuantOp::kClamp: rhs = "clamp(" + a() + ", " + float_text(s.value) + ", " + float_text(s.value2) + ")"; break;
    case QuantOp::kIfZero: rhs = a() + " == 0 ? " + operand(c, s.b) + " : " + operand(c, s.c); break;
    case QuantOp::kE4m3RoundTrip:
      rhs = std::string("e4m3-round-trip(") + a() + ", " + e4m3_overflow_name(s.overflow) + ")"; break;
    case QuantOp::kPow2Ceil: rhs = "exp2(ceil(log2_f32(" + a() + ")))"; break;
    case QuantOp::kCodeE2m1Cvt: rhs = "e2m1-cvt(" + a() + ")"; break;
    case QuantOp::kCodeE2m1VllmTable: rhs = "e2m1-vllm-table(" + a() + ")"; break;
    case QuantOp::kCodeE2m1TeTable: rhs = "e2m1-te-table(" + a() + ")"; break;
    case QuantOp::kCodeE4m3: rhs = std::string("e4m3(") + a() + ", " + e4m3_overflow_name(s.overflow) + ")"; break;
  }
  return s.name + " = " + rhs;
}

int64_t scale_offset(ScaleLayout l, int64_t r, int64_t k, int64_t /*rows*/, int64_t blocks) {
  if (l == ScaleLayout::kLinear) return r * blocks + k;
  // [ceil(rows/128), ceil(blocks/4), 32, 4, 4]: row r = 128 * tile + 32 * inner + outer, block k = 4 * ktile + kin.
  const int64_t k_tiles = (blocks + 3) / 4;
  return ((r >> 7) * k_tiles + (k >> 2)) * 512 + (r & 31) * 16 + ((r >> 5) & 3) * 4 + (k & 3);
}

int64_t scale_tensor_size(ScaleLayout l, int64_t rows, int64_t blocks) {
  if (l == ScaleLayout::kLinear) return rows * blocks;
  return (rows + 127) / 128 * 128 * ((blocks + 3) / 4 * 4);
}

}  // namespace fuseproof::ref
