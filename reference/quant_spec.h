// quant_spec.h: the quantization ops (an optional activation stage feeding a block quantizer) and their contracts,
// each written once as a step list over named scalars. `fuseproof ops`, `fuseproof eval` and the one interpreter
// (quant_block.h) read it; the elementwise family of op_spec.h is a separate list and does not change.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "f32_to_e4m3.h"
#include "op_spec.h"

namespace fuseproof::ref {

/// The public references a quantization op can be judged against (docs/OPS.md, Quantization ops and contracts).
enum class QuantContract : int {
  kVllmRef,          ///< vLLM's torch reference ref_nvfp4_quant (with the +-448 clamp)
  kRcpApprox,        ///< the CUDA kernels' cvt_warp_fp16_to_fp4 (vLLM, TensorRT-LLM, FlashInfer): rcp.approx.ftz
  kTe,               ///< TransformerEngine's NVFP4QuantizerRef._quantize_blockwise_reference
  kFlashinferExact,  ///< FlashInfer's torch test reference ref_fp4_quant: vllm-ref without the +-448 clamp
  kFp8Group,         ///< sglang/vLLM native_per_token_group_quant_fp8: fp32 scale amax / 448
  kFp8GroupUe8m0,    ///< vLLM's QuantFP8 native path with use_ue8m0: exp2(ceil(log2(amax / 448))), floored
};

inline constexpr QuantContract kAllQuantContracts[] = {QuantContract::kVllmRef,         QuantContract::kRcpApprox,
                                                       QuantContract::kTe,              QuantContract::kFlashinferExact,
                                                       QuantContract::kFp8Group,        QuantContract::kFp8GroupUe8m0};

/// "vllm-ref", "rcp-approx", "te", "flashinfer-exact", "fp8-group", "fp8-group-ue8m0".
const char* quant_contract_name(QuantContract c);
std::optional<QuantContract> parse_quant_contract(std::string_view s);

enum class ElementFormat : int { kE2m1, kE4m3 };
enum class ScaleFormat : int { kFp32, kUe8m0, kE4m3 };
/// Where block (r, k) of an output of [rows, blocks per row] keeps its scale.
enum class ScaleLayout : int {
  kLinear,         ///< [rows, blocks]: r * blocks + k
  kSwizzled128x4,  ///< tcgen05/cuBLAS 128x4 tiles: [ceil(rows/128), ceil(blocks/4), 32, 4, 4], padded
};

const char* element_format_name(ElementFormat f);  ///< "e2m1", "e4m3"
const char* scale_format_name(ScaleFormat f);      ///< "fp32", "ue8m0", "e4m3"
const char* scale_layout_name(ScaleLayout l);      ///< "linear", "swizzled-128x4"

/// How a block's absolute maximum is taken over its T values. The maximum of |x| is exact; only NaN differs.
enum class AmaxRule : int {
  kTorchMax,  ///< torch.max / torch.amax of torch.abs(x) on the T tensor: one NaN member makes the amax NaN
  kHmax,      ///< __habs2 then __hmax2 (max.{f16,bf16}x2): NaN members are dropped; all NaN gives 0x7FFF
};

/// One step of a contract. A step's result is a binary32 register; a, b, c index earlier steps (the element steps
/// continue the numbering after the scale steps, so they can read the block's registers).
enum class QuantOp : int {
  kAmax,          ///< the block's amax by `amax`, a T value widened exactly (scale steps only)
  kElement,       ///< the element's T value widened exactly (element steps only)
  kScalar,        ///< scalar input `index` of the record, binary32
  kConst,         ///< binary32 `value`
  kClampMinHalf,  ///< max(a, round_T(value)) on a T value: torch clamp(min=eps) on a T tensor; NaN propagates
  kMul,           ///< a * b in binary32, round to nearest even
  kDiv,           ///< a / b in binary32, correctly rounded (torch tensor / tensor on CUDA)
  kRcpExact,      ///< 1 / a correctly rounded (torch.reciprocal; `1.0 / t` is reciprocal(t) * 1.0)
  kRcpApprox,     ///< PTX rcp.approx.ftz.f32 of a: the injected model (QuantModels::rcp_approx)
  kMin,           ///< min(a, value), torch.min of two tensors: NaN propagates
  kMax,           ///< max(a, value), torch.maximum: NaN propagates
  kClamp,         ///< torch.clamp(a, value, value2): NaN propagates
  kIfZero,        ///< a == 0 ? b : c (torch.where(a == 0, ...); the kernel's `SFValue != 0 ? ... : 0`)
  kE4m3RoundTrip, ///< e4m3_to_f32(f32_to_e4m3(a, overflow)); the byte is the block's scale when scale_out names it
  kPow2Ceil,      ///< torch.exp2(torch.ceil(torch.log2(a))) in binary32, log2 rounded to binary32 (so a just above
                  ///< 2^k may give 2^k); 0 gives 0, NaN stays NaN, +Inf stays +Inf, ceil 128 gives +Inf
  kCodeE2m1Cvt,   ///< the element's code: cvt.rn.satfinite.e2m1x2.f32 (f32_to_e2m1): -0.0 gives 0x8, NaN 0x7
  kCodeE2m1VllmTable,  ///< vLLM's cast_to_fp4 (table * sign(x)) coded: -0.0 gives +0 (0x0), NaN no code (0xFF)
  kCodeE2m1TeTable,    ///< TransformerEngine's cast_to_fp4x2 code table: -0.0 and NaN give 0x0
  kCodeE4m3,      ///< the element's code: f32_to_e4m3(a, overflow)
};

/// The byte an element gets when its reference result has no code (vLLM's table returns NaN for a NaN).
inline constexpr uint8_t kQuantNoCode = 0xFF;

struct QuantStep {
  QuantOp op = QuantOp::kConst;
  int a = -1, b = -1, c = -1;
  int index = -1;                          ///< kScalar
  float value = 0.0f, value2 = 0.0f;       ///< kConst, kClampMinHalf, kMin, kMax, kClamp
  AmaxRule amax = AmaxRule::kTorchMax;     ///< kAmax
  E4m3Overflow overflow = E4m3Overflow::kNan;  ///< kE4m3RoundTrip, kCodeE4m3
  std::string name;                        ///< the register's name in `fuseproof ops` ("amax", "scale", ...)
};

struct QuantContractSpec {
  QuantContract contract = QuantContract::kVllmRef;
  std::vector<std::string> scalars;       ///< the record's binary32 scalars, in order ("global_scale")
  std::vector<QuantStep> scale_steps;     ///< once per block
  int scale_out = -1;                     ///< the scale step stored: its E4M3 byte, or its binary32 value
  /// What the scale is. An E4M3 scale is stored as its byte; fp32 and UE8M0 scales as the binary32 value the torch
  /// reference returns (for UE8M0 a power of two, or vLLM's floor 1/229376 for tiny groups, or NaN/Inf where the
  /// reference gives them: values no UE8M0 byte holds).
  ScaleFormat scale_format = ScaleFormat::kE4m3;
  std::vector<QuantStep> element_steps;   ///< once per element; the last is a kCode* step
  /// How the reference derives each scalar from the tensor's amax (kAmax is the tensor amax here; global_out[j] is
  /// the step giving scalars[j]); empty when the contract has no scalars. The scale step's domain is then every
  /// (tensor amax, block amax) pair of T patterns.
  std::vector<QuantStep> global_steps;
  std::vector<int> global_out;
  std::string global_source;              ///< where that derivation is written
  std::string meaning;                    ///< one line: the arithmetic
  std::string specials;                   ///< one line: zero blocks, NaN and Inf members, overflow
  std::string source;                     ///< the repository and path it models
};

/// The stage in front of the quantizer: a family op (op_registry) under one of its contracts, rounded to T.
struct QuantActivation {
  std::string family_op;                  ///< "" for a quantizer alone
  Contract contract = Contract::kEager;
};

struct QuantOpSpec {
  std::string name;                       ///< "silu_and_mul_nvfp4_quant"
  std::string formula;
  std::vector<InputSpec> inputs;          ///< T inputs per element, declared order (a record holds a block of each)
  QuantActivation activation;
  int block_size = 16;                    ///< elements per scale
  ElementFormat element_format = ElementFormat::kE2m1;
  std::vector<ScaleLayout> scale_layouts;
  std::vector<QuantContractSpec> contracts;  ///< contracts[0] is the default
  std::string users;

  const QuantContractSpec* contract(QuantContract c) const;
};

/// Every quantization op, in the order `fuseproof ops` lists them.
const std::vector<QuantOpSpec>& quant_op_registry();
/// The quantization op named `name`, or nullptr.
const QuantOpSpec* find_quant_op(std::string_view name);
/// "fp8_group_quant, nvfp4_quant, ..." for messages.
std::string quant_op_names();
/// One step as text, "scale = mul(global_scale, t)", for `fuseproof ops`.
std::string quant_step_text(const QuantContractSpec& c, int step);
/// Byte offset of block (r, k)'s scale in a scale tensor of `rows` rows and `blocks` blocks per row.
int64_t scale_offset(ScaleLayout l, int64_t r, int64_t k, int64_t rows, int64_t blocks);
/// Bytes of that scale tensor (the swizzled layout pads rows to 128 and blocks to 4).
int64_t scale_tensor_size(ScaleLayout l, int64_t rows, int64_t blocks);

/// Builds a contract's steps (quant_registry.cpp writes every contract with it). Indices are global: the element
/// steps' numbers continue after the scale steps'.
class QuantGraph {
 public:
  int amax(AmaxRule rule, const char* name = "amax");
  int element(const char* name = "x");
  int scalar(int index, const char* name);
  int constant(float value, const char* name);
  int clamp_min_half(int a, float eps, const char* name);
  int mul(int a, int b, const char* name);
  int div(int a, int b, const char* name);
  int rcp_exact(int a, const char* name);
  int rcp_approx(int a, const char* name);
  int min(int a, float value, const char* name);
  int max(int a, float value, const char* name);
  int clamp(int a, float lo, float hi, const char* name);
  int if_zero(int a, int then_, int else_, const char* name);
  int e4m3_round_trip(int a, E4m3Overflow o, const char* name);
  int pow2_ceil(int a, const char* name);
  int code(QuantOp op, int a, E4m3Overflow o = E4m3Overflow::kNan);
  /// Closes the scale steps: later steps are element steps.
  void begin_elements() { scale_count_ = int(steps_.size()); }
  std::vector<QuantStep> scale_steps() const;
  std::vector<QuantStep> element_steps() const;

 private:
  int push(QuantStep s);
  std::vector<QuantStep> steps_;
  int scale_count_ = -1;
};

}  // namespace fuseproof::ref
