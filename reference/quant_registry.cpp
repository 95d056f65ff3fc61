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
QuantContractSpec vllm_ref() {
  QuantGraph g;
  const int amax = g.amax(AmaxRule::kTorchMax);
  const int gs = g.scalar(0, "global_scale");
  const int r6 = g.constant(kOneSixth, "1/6");
  const int t = g.mul(amax, r6, "amax_over_6");
  const int s = g.mul(gs, t, "s");
  const int sc = g.clamp(s, -448.0f, 448.0f, "s_clamped");
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
  return finish(QuantContract::kVllmRef, g, q, ScaleFormat::kE4m3, {"global_scale"},
                "scale = e4m3(clamp(g * (amax * f32(1/6)), +-448)); out_scale = where(p == 0, 0, 1 / p), "
                "p = scale * where(g == 0, 0, 1 / g); code = table(clamp(x * out_scale, +-6)) * sign(x)",
                "NaN member: the amax is NaN, scale 0x7F, every code NaN (0xFF); zero block: scale 0x00, output "
                "scale 0, codes 0x0; a -0 product codes +0 (torch.sign(-0.0) = 0): -0.0, and every negative member under scale "
                "0x00; 448 * 6 and above clamp to 448 (0x7E)",
                "vllm-project/vllm tests/kernels/quantization/nvfp4_utils.py (ref_nvfp4_quant, get_reciprocal, "
                "cast_to_fp4)");
}

/// The kernel cvt_warp_fp16_to_fp4 (vllm-project/vllm csrc/quantization/fp4/nvfp4_utils.cuh; the same in
/// TensorRT-LLM and FlashInfer), with the reciprocal either rcp.approx.ftz (injected) or exact.
QuantContractSpec kernel_arith(QuantContract c, bool approx) {
  QuantGraph g;
  auto rcp = [&](int a, const char* name) { return approx ? g.rcp_approx(a, name) : g.rcp_exact(a, name); };
  const int amax = g.amax(AmaxRule::kHmax);
  const int gs = g.scalar(0, "global_scale");
  const int six = g.constant(6.0f, "6");
  const int r6 = rcp(six, "rcp_6");
  const int t = g.mul(amax, r6, "amax_over_6");
  const int s = g.mul(gs, t, "SFValue");
  const int q = g.e4m3_round_trip(s, kSat, "scale");
  const int rg = rcp(gs, "rcp_global");
  const int p = g.mul(q, rg, "p");
  const int rp = rcp(p, "rcp_p");
  const int zero = g.constant(0.0f, "0");
  const int os = g.if_zero(q, zero, rp, "output_scale");
  g.begin_elements();
  const int x = g.element();
  const int y = g.mul(x, os, "scaled");
  g.code(QuantOp::kCodeE2m1Cvt, y);
  const char* rcp_name = approx ? "rcp.approx.ftz" : "exact 1/x";
  return finish(c, g, q, ScaleFormat::kE4m3, {"global_scale"},
                std::string("scale = e4m3_satfinite(g * (amax * rcp(6))); out_scale = scale != 0 ? rcp(scale * "
                            "rcp(g)) : 0; code = cvt.rn.satfinite.e2m1(x * out_scale); rcp = ") + rcp_name +
                    "; amax by __hmax2 in T",
                "NaN member: dropped by __hmax2 (the scale comes from the rest), its code 0x7 (cvt gives +6); all "
                "NaN: scale 0x7F; zero block: scale 0x00, output scale 0, codes 0x0; -0.0 codes 0x8; SFValue above "
                "464 saturates to 448 (0x7E)",
                approx ? "vllm-project/vllm csrc/quantization/fp4/nvfp4_utils.cuh (cvt_warp_fp16_to_fp4), the same "
                         "in TensorRT-LLM and FlashInfer (csrc/nv_internal quantization)"
                       : "FlashInfer's fp4 quantization built without fast math: modelled as the kernel's arithmetic "
                         "with exact reciprocals (source not confirmed line by line)");
}

/// TransformerEngine's NVFP4QuantizerRef._quantize_blockwise_reference (1x16 tiles, E4M3 scales): the scalar is the
/// tensor's global amax; global_encode_scale = min(2688 / global_amax, FLT_MAX), 1 where it is 0; decode scale
/// vec_max * (global_encode_scale * reciprocal(6)), min FLT_MAX, clamp +-448, to e4m3; encode scale
/// min(1 / (decode * (1 / global_encode_scale)), FLT_MAX); codes by cast_to_fp4x2's table.
QuantContractSpec te() {
  QuantGraph g;
  const int amax = g.amax(AmaxRule::kTorchMax);
  const int ga = g.scalar(0, "global_amax");
  const int k2688 = g.constant(2688.0f, "448*6");
  const int ges0 = g.div(k2688, ga, "ges_raw");
  const int ges1 = g.min(ges0, FLT_MAX, "ges_finite");
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
  return finish(QuantContract::kTe, g, q, ScaleFormat::kE4m3, {"global_amax"},
                "ges = min(2688 / global_amax, FLT_MAX) (1 if 0); scale = e4m3(clamp(min(amax * (ges * "
                "reciprocal(6)), FLT_MAX), +-448)); enc = min(1 / (scale * (1 / ges)), FLT_MAX); code = "
                "table(clamp(x * enc, +-6))",
                "NaN member: amax NaN, scale 0x7F, codes 0x0 (the table matches nothing); zero block: scale 0x00, "
                "encode scale FLT_MAX, codes 0x0; -0.0 codes 0x0; global_amax 0 gives ges FLT_MAX, +Inf gives 2688 / Inf = 0, "
                "replaced by 1",
                "NVIDIA/TransformerEngine transformer_engine/pytorch/custom_recipes/quantization_nvfp4.py "
                "(NVFP4QuantizerRef._quantize_blockwise_reference, cast_to_fp4x2)");
}

/// sglang's (and vLLM's) native_per_token_group_quant_fp8: amax = abs(x).max() on the T tensor, clamp(min=1e-10) on
/// that T tensor (eps rounded to T: 0 in fp16), to fp32; x_s = amax / 448 (times binary32(1/448)); x_q = (x / x_s)
/// clamped to +-448, to(float8_e4m3fn). With UE8M0 (sgl-kernel's test reference, the same in FlagGems):
/// x_s = exp2(ceil(log2(maximum(|x_s|, 1e-10)))), the floor a binary32 1e-10.
QuantContractSpec fp8_group(bool ue8m0) {
  QuantGraph g;
  const int amax = g.amax(AmaxRule::kTorchMax);
  const int a = g.clamp_min_half(amax, 1e-10f, "amax_eps");
  const int r = g.constant(kOne448th, "1/448");
  const int s = g.mul(a, r, ue8m0 ? "s" : "scale");
  const int scale = ue8m0 ? g.pow2_ceil(g.max(s, 1e-10f, "s_floor"), "scale") : s;
  g.begin_elements();
  const int x = g.element();
  const int y = g.div(x, scale, "scaled");
  const int yc = g.clamp(y, -448.0f, 448.0f, "clipped");
  g.code(QuantOp::kCodeE4m3, yc, kNanOv);
  const std::string base = "scale = max(amax, round_T(1e-10)) * f32(1/448); code = e4m3(clamp(x / scale, +-448))";
  return finish(
      ue8m0 ? QuantContract::kFp8GroupUe8m0 : QuantContract::kFp8Group, g, scale,
      ue8m0 ? ScaleFormat::kUe8m0 : ScaleFormat::kFp32, {},
      ue8m0 ? base + ", the scale first floored at 1e-10 and rounded up to a power of two (stored as binary32)" : base,
      ue8m0 ? "NaN member: scale NaN, every code 0x7F; zero group: s below 1e-10, floored, scale 2^-33, codes 0x00; "
              "-0.0 codes 0x80; log2 is modelled exact: torch's log2f may round to the integer for the binary32 "
              "values just above a power of two (open: the device's log2f)"
            : "NaN member: amax NaN, scale NaN, every code 0x7F; zero group: bf16 scale 2.2e-13, codes 0x00; fp16 eps "
              "rounds to 0, scale 0, 0/0 NaN: codes 0x7F; -0.0 codes 0x80",
      ue8m0 ? "sgl-project/sglang sgl-kernel test reference of per_token_group_quant_8bit with scale_ue8m0 (the same "
              "in FlagGems' torch reference)"
            : "sgl-project/sglang test native_per_token_group_quant_fp8 (the same in vllm-project/vllm "
              "tests/kernels/quantization)");
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

/// TransformerEngine's scalar is the tensor amax itself: torch.max(torch.abs(x)).to(float32).
QuantContractSpec with_te_global(QuantContractSpec c) {
  QuantGraph g;
  c.global_out = {g.amax(AmaxRule::kTorchMax, "global_amax")};
  c.global_steps = g.scale_steps();
  c.global_source = "NVIDIA/TransformerEngine transformer_engine/pytorch/custom_recipes/quantization_nvfp4.py "
                    "(NVFP4QuantizerRef._quantize: global_amax_row)";
  return c;
}

std::vector<QuantContractSpec> nvfp4_contracts() {
  return {with_vllm_global(vllm_ref()), with_vllm_global(kernel_arith(QuantContract::kRcpApprox, true)),
          with_te_global(te()), with_vllm_global(kernel_arith(QuantContract::kFlashinferExact, false))};
}

QuantOpSpec quant_op(const char* name, const char* formula, const char* family, int block, ElementFormat f,
                     std::vector<QuantContractSpec> contracts, const char* users) {
  QuantOpSpec op;
  op.name = name;
  op.formula = formula;
  op.block_size = block;
  op.element_format = f;
  op.contracts = std::move(contracts);
  op.users = users;
  if (*family) {
    const OpSpec* fam = find_op(family);
    if (!fam) throw std::logic_error(std::string("quant registry: no family op ") + family);
    op.inputs = fam->inputs;  // the activation stage's inputs, in its declared order
    op.activation = {family, Contract::kEager};
  } else {
    op.inputs = {{"x", Layout::kElementwise}};
  }
  op.scale_layouts = f == ElementFormat::kE2m1 ? std::vector<ScaleLayout>{ScaleLayout::kLinear, ScaleLayout::kSwizzled128x4}
                                               : std::vector<ScaleLayout>{ScaleLayout::kLinear};
  return op;
}

std::vector<QuantOpSpec> build() {
  std::vector<QuantContractSpec> fp8 = {fp8_group(false), fp8_group(true)};
  return {
      quant_op("fp8_group_quant", "codes, scales = fp8_group(x); groups of 128 along a row", "", 128,
               ElementFormat::kE4m3, fp8, "sglang per_token_group_quant_fp8, vLLM, DeepSeek-V3 activations"),
      quant_op("nvfp4_quant", "codes, scales = nvfp4(x, global); blocks of 16 along a row", "", 16,
               ElementFormat::kE2m1, nvfp4_contracts(),
               "vLLM scaled_fp4_quant, TensorRT-LLM, FlashInfer fp4_quantize, TransformerEngine"),
      quant_op("silu_and_mul_fp8_group_quant", "fp8_group(round_T(silu(gate) * up)) (silu_and_mul eager, then "
                                               "quantized)",
               "silu_and_mul", 128, ElementFormat::kE4m3, fp8, "vLLM and sglang fused SwiGLU + FP8 group quant"),
      quant_op("silu_and_mul_nvfp4_quant", "nvfp4(round_T(silu(gate) * up), global) (silu_and_mul eager, then "
                                           "quantized)",
               "silu_and_mul", 16, ElementFormat::kE2m1, nvfp4_contracts(),
               "vLLM silu_and_mul_nvfp4_quant, FlashInfer"),
      quant_op("bias_gelu_tanh_nvfp4_quant", "nvfp4(gelu_tanh(round_T(x + bias)), global) (the seed op, then "
                                             "quantized for fc_out)",
               "bias_gelu_tanh", 16, ElementFormat::kE2m1, nvfp4_contracts(), "Wan2.2 NVFP4 FFN fc_out input"),
  };
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
    case QuantOp::kPow2Ceil: rhs = "pow2-ceil(" + a() + ")"; break;
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
