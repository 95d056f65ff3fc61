// op_registry.cpp: every op of the family, declared once, and the helpers that read a declaration.
#include "op_spec.h"

#include <stdexcept>
#include <utility>

namespace fuseproof::ref {

const char* layout_name(Layout l) {
  switch (l) {
    case Layout::kElementwise: return "elementwise";
    case Layout::kRowBroadcast: return "row-broadcast";
    case Layout::kPackedFirst: return "packed-first";
    case Layout::kPackedSecond: return "packed-second";
    case Layout::kGroupBroadcast: return "group-broadcast";
  }
  return "?";
}

const char* contract_name(Contract c) {
  switch (c) {
    case Contract::kEager: return "eager";
    case Contract::kFp32: return "fp32";
    case Contract::kFma: return "fma";
  }
  return "?";
}

std::optional<Contract> parse_contract(std::string_view s) {
  for (Contract c : kAllContracts)
    if (s == contract_name(c)) return c;
  return std::nullopt;
}

int Composition::push(Node n) {
  nodes_.push_back(n);
  return int(nodes_.size()) - 1;
}
int Composition::input(int i) {
  Node n;
  n.op = NodeOp::kInput;
  n.input = i;
  return push(n);
}
int Composition::activation(Activation act, int a, Precision p) {
  Node n;
  n.op = NodeOp::kActivation;
  n.act = act;
  n.a = a;
  n.precision = p;
  return push(n);
}
int Composition::binary(NodeOp op, int a, int b, Precision p) {
  Node n;
  n.op = op;
  n.a = a;
  n.b = b;
  n.precision = p;
  return push(n);
}

int Composition::add(int a, int b, Precision p) { return binary(NodeOp::kAdd, a, b, p); }

int Composition::mul(int a, int b, Precision p) { return binary(NodeOp::kMul, a, b, p); }

int Composition::constant(float value) {
  Node n;
  n.op = NodeOp::kConst;
  n.value = value;
  n.precision = Precision::kFloat32;  // a literal: nothing rounds it
  return push(n);
}

int Composition::fma(int a, int b, int c, Precision p) {
  Node n;
  n.op = NodeOp::kFma;
  n.a = a;
  n.b = b;
  n.c = c;
  n.precision = p;
  return push(n);
}

namespace {

constexpr Precision kHalf = Precision::kHalf;
constexpr Precision kF32 = Precision::kFloat32;

/// out = act(round_T(x + bias)): eager's add rounds its tensor to T before the activation widens it again.
/// Wan2.2's FFN up projection and its 5,120-wide second GEMM input, and one call above 2^31 elements.
std::vector<ShapeSpec> wan_envelope() {
  return {{32760, 5120, "wan2.2 5120-wide FFN (seed shape)"},
          {32760, 13824, "wan2.2 FFN up, 32,760 tokens (seed shape)"},
          {4096, 13824, "wan2.2 FFN up, 4,096 tokens (seed shape)"},
          {75600, 13824, "wan2.2 FFN up, 81 frames at 720p: 75,600 tokens (seed shape)"},
          // 2^31 / 13,824 = 155,344.6: one more row puts the call above 2^31 elements.
          {155345, 13824, "above 2^31 elements (2,147,489,280)"}};
}

/// Gated MLPs of LLMs and DiTs (d = the intermediate size; x is [tokens, 2d]), and one output above 2^31 elements.
std::vector<ShapeSpec> gated_envelope() {
  return {{8192, 14336, "Llama-3-8B MLP, 8,192 tokens"},
          {8192, 28672, "Llama-3-70B MLP, 8,192 tokens"},
          {32768, 18432, "DeepSeek-V3 dense MLP, 32,768 tokens"},
          {256, 28672, "decode batch of 256 tokens"},
          // 2^31 / 28,672 = 74,898.3: one more row puts the output above 2^31 elements (x above 2^32).
          {74899, 28672, "above 2^31 output elements (2,147,504,128)"}};
}

OpSpec bias_act(const char* name, Activation act, const char* formula, const char* users) {
  // Each step on its own line: the order of the nodes is the order of evaluation (argument order is unspecified).
  Composition eager;
  const int x = eager.input(0), bias = eager.input(1);
  eager.activation(act, eager.add(x, bias, kHalf), kHalf);
  return {name, formula, {{"x", Layout::kElementwise}, {"bias", Layout::kRowBroadcast}},
          {{Contract::kEager, eager.nodes(), "bit-exact with eager PyTorch on the device: x + bias rounded to T, then "
                                             "the activation in binary32 rounded to T"}},
          users, wan_envelope()};
}

/// out = act(gate) * up on vLLM's packed layout: eager rounds act(gate) to T, then the product; fp32 keeps the
/// activation and the product in binary32 and rounds once.
OpSpec act_and_mul(const char* name, Activation act, const char* formula, const char* users) {
  Composition eager, fp32;
  for (auto [c, p] : {std::pair<Composition*, Precision>{&eager, kHalf}, {&fp32, kF32}}) {
    const int gate = c->input(0), up = c->input(1);
    c->mul(c->activation(act, gate, p), up, p);
  }
  return {name, formula, {{"gate", Layout::kPackedFirst}, {"up", Layout::kPackedSecond}},
          {{Contract::kEager, eager.nodes(),
            "bit-exact with eager PyTorch on the device: act(gate) rounded to T, then the product rounded to T"},
           {Contract::kFp32, fp32.nodes(),
            "to_T(act(f32(gate)) * f32(up)) as PyTorch's float32 kernels compute it: one rounding to T"}},
          users, gated_envelope()};
}

/// DiT blocks (Wan, HunyuanVideo, FLUX, SD3): [batch * tokens, d] activations, gate/scale/shift one row per batch
/// element, and one call above 2^31 elements.
std::vector<ShapeSpec> dit_envelope() {
  return {{75600, 5120, "Wan2.2 14B block, 81 frames at 720p: 75,600 tokens"},
          {32760, 5120, "Wan2.2 block, 32,760 tokens"},
          {4096, 3072, "FLUX / SD3 block, 4,096 image tokens"},
          {8, 5120, "a short text-conditioning batch"},
          // 2^31 / 5,120 = 419,430.4: one more row puts the call above 2^31 elements.
          {419431, 5120, "above 2^31 elements (2,147,486,720)"}};
}

/// out = x + gate * y (a DiT block's gated residual around attention and the FFN): eager rounds the product to T,
/// then the sum; fma is one binary32 fmaf(gate, y, x) rounded once.
OpSpec gated_residual() {
  Composition eager, fma;
  {
    const int x = eager.input(0), gate = eager.input(1), y = eager.input(2);
    const int p = eager.mul(gate, y, kHalf);
    eager.add(x, p, kHalf);
  }
  {
    const int x = fma.input(0), gate = fma.input(1), y = fma.input(2);
    fma.fma(gate, y, x, kHalf);
  }
  return {"gated_residual", "out = x + gate * y; gate is [batch, 1, d] over each batch's tokens, or per element",
          {{"x", Layout::kElementwise}, {"gate", Layout::kGroupBroadcast}, {"y", Layout::kElementwise}},
          {{Contract::kEager, eager.nodes(),
            "bit-exact with eager PyTorch on the device: gate * y rounded to T, then x + that rounded to T"},
           {Contract::kFma, fma.nodes(), "to_T(fmaf(gate, y, x)) in binary32: one rounding to T"}},
          "sglang diffusion (residual_gate_add), DiT blocks (Wan, HunyuanVideo, FLUX)", dit_envelope()};
}

/// out = x * (1 + scale) + shift (adaLN modulation before a DiT block's attention and FFN): eager rounds 1 + scale,
/// the product and the sum to T; fma is fmaf(x, 1 + scale, shift) with 1 + scale in binary32, rounded once.
OpSpec modulate() {
  Composition eager, fma;
  {
    const int x = eager.input(0), scale = eager.input(1), shift = eager.input(2);
    const int one = eager.constant(1.0f);
    const int s = eager.add(one, scale, kHalf);
    const int m = eager.mul(x, s, kHalf);
    eager.add(m, shift, kHalf);
  }
  {
    const int x = fma.input(0), scale = fma.input(1), shift = fma.input(2);
    const int one = fma.constant(1.0f);
    const int s = fma.add(one, scale, kF32);
    fma.fma(x, s, shift, kHalf);
  }
  return {"modulate", "out = x * (1 + scale) + shift; scale, shift are [batch, 1, d] over each batch's tokens, or per element",
          {{"x", Layout::kElementwise}, {"scale", Layout::kGroupBroadcast}, {"shift", Layout::kGroupBroadcast}},
          {{Contract::kEager, eager.nodes(),
            "bit-exact with eager PyTorch on the device: 1 + scale, x * that and that + shift each rounded to T"},
           {Contract::kFma, fma.nodes(), "to_T(fmaf(x, 1 + scale, shift)) with 1 + scale in binary32: one rounding to T"}},
          "sglang diffusion (modulate_scale_shift), DiT blocks (Wan, HunyuanVideo, FLUX)", dit_envelope()};
}

/// `op` with the fused quantization ops declared on it.
OpSpec fused(OpSpec op, std::vector<QuantFusion> fusions) {
  op.quant_fusions = std::move(fusions);
  return op;
}

std::vector<OpSpec> build() {
  return {
      fused(bias_act("bias_gelu_tanh", Activation::kGeluTanh, "out = gelu_tanh(round_T(x + bias))",
                     "Wan2.2 NVFP4 FFN (the seed kernel)"),
            {{QuantFusion::kNvfp4,
              "nvfp4(gelu_tanh(round_T(x + bias)), global) (the seed op, then quantized for fc_out)",
              "Wan2.2 NVFP4 FFN fc_out input"}}),
      bias_act("bias_gelu_erf", Activation::kGeluErf, "out = gelu_erf(round_T(x + bias))  (F.gelu(x + bias))",
               "DiT and ViT FFNs with exact GELU"),
      fused(act_and_mul("silu_and_mul", Activation::kSilu, "out = silu(gate) * up; gate = x[:, :d], up = x[:, d:]",
                        "vLLM, FlashInfer, sgl-kernel, sglang diffusion, Liger (SwiGLU)"),
            {{QuantFusion::kFp8Group, "fp8_group(round_T(silu(gate) * up)) (silu_and_mul eager, then quantized)",
              "vLLM and sglang fused SwiGLU + FP8 group quant"},
             {QuantFusion::kNvfp4, "nvfp4(round_T(silu(gate) * up), global) (silu_and_mul eager, then quantized)",
              "vLLM silu_and_mul_nvfp4_quant, FlashInfer"}}),
      act_and_mul("gelu_tanh_and_mul", Activation::kGeluTanh,
                  "out = gelu_tanh(gate) * up; gate = x[:, :d], up = x[:, d:]",
                  "vLLM, FlashInfer, sgl-kernel, Liger (GeGLU, tanh)"),
      act_and_mul("gelu_and_mul", Activation::kGeluErf, "out = gelu_erf(gate) * up; gate = x[:, :d], up = x[:, d:]",
                  "vLLM, FlashInfer, sgl-kernel (GeGLU, exact)"),
      gated_residual(),
      modulate(),
  };
}

}  // namespace

const std::vector<OpSpec>& op_registry() {
  static const std::vector<OpSpec> ops = build();
  return ops;
}

const OpSpec& seed_op() { return op_registry().front(); }

const OpSpec* find_op(std::string_view name) {
  for (const OpSpec& op : op_registry())
    if (op.name == name) return &op;
  return nullptr;
}

std::string op_names() {
  std::string s;
  for (const OpSpec& op : op_registry()) s += (s.empty() ? "" : ", ") + op.name;
  return s;
}

const ContractSpec* OpSpec::contract(Contract c) const {
  for (const ContractSpec& cs : contracts)
    if (cs.contract == c) return &cs;
  return nullptr;
}

std::vector<std::string> OpSpec::buffers() const {
  std::vector<std::string> b;
  for (const InputSpec& in : inputs) {
    if (in.layout == Layout::kPackedSecond) continue;  // shares the first half's buffer
    b.push_back(in.layout == Layout::kPackedFirst ? kPackedBufferName : in.name);
  }
  return b;
}

int OpSpec::buffer_of(int input) const {
  int k = -1;
  for (int i = 0; i <= input; ++i)
    if (inputs[size_t(i)].layout != Layout::kPackedSecond) ++k;
  return k;
}

int64_t OpSpec::buffer_row_elems(int buffer, int64_t width) const {
  for (int i = 0; i < int(inputs.size()); ++i)
    if (buffer_of(i) == buffer && inputs[size_t(i)].layout == Layout::kPackedFirst) return 2 * width;
  return width;
}

bool OpSpec::buffer_broadcast(int buffer) const {
  for (int i = 0; i < int(inputs.size()); ++i)
    if (buffer_of(i) == buffer) return inputs[size_t(i)].layout == Layout::kRowBroadcast;
  return false;
}

bool OpSpec::buffer_grouped(int buffer) const {
  for (int i = 0; i < int(inputs.size()); ++i)
    if (buffer_of(i) == buffer) return inputs[size_t(i)].layout == Layout::kGroupBroadcast;
  return false;
}

int64_t OpSpec::buffer_rows(int buffer, int64_t rows, int64_t group_rows) const {
  if (buffer_broadcast(buffer)) return 1;
  if (buffer_grouped(buffer)) return group_rows > 0 ? (rows + group_rows - 1) / group_rows : rows;
  return rows;
}

bool OpSpec::has_groups() const {
  for (const InputSpec& in : inputs)
    if (in.layout == Layout::kGroupBroadcast) return true;
  return false;
}

int64_t OpSpec::input_offset(int input, int64_t r, int64_t c, int64_t width, int64_t group_rows) const {
  switch (inputs[size_t(input)].layout) {
    case Layout::kElementwise: return r * width + c;
    case Layout::kGroupBroadcast: return (r / group_rows) * width + c;
    case Layout::kRowBroadcast: return c;
    case Layout::kPackedFirst: return r * 2 * width + c;
    case Layout::kPackedSecond: return r * 2 * width + width + c;
  }
  throw std::invalid_argument("op spec: unknown layout");
}

int64_t OpSpec::bytes_per_element() const {
  int64_t per = 1;  // the output
  // A group-broadcast row is read once per group: counted as broadcast (DiT groups are thousands of tokens).
  for (const InputSpec& in : inputs)
    per += in.layout == Layout::kRowBroadcast || in.layout == Layout::kGroupBroadcast ? 0 : 1;
  return 2 * per;
}

}  // namespace fuseproof::ref
