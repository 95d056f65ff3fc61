// op_spec.h: the op family's one description: each op's inputs with their layout, its contracts, and each contract's
// composition with the rounding boundaries. Everything that names an op (the reference, the audit's model and
// generators, the domain sweep and its digests, the golden capture, the CLI, the Python signature) reads it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "activation.h"

namespace fuseproof::ref {

/// Where a logical input element (r, c) of an op with output [rows, width] lives.
enum class Layout : int {
  kElementwise,   ///< its own contiguous [rows, width] tensor
  kRowBroadcast,  ///< its own [width] tensor, shared by every row (a bias)
  kPackedFirst,   ///< the first half of one contiguous [rows, 2 * width] tensor (vLLM's and sglang's gate)
  kPackedSecond,  ///< the second half of that same tensor (up)
  /// its own [rows / group_rows, width] tensor: output row r reads row r / group_rows (a DiT's [batch, 1, d] gate,
  /// scale or shift over a batch's tokens). group_rows is a property of the call: 1 makes it per element, rows makes
  /// it one row shared by every row.
  kGroupBroadcast,
};

/// "elementwise", "row-broadcast", "packed-first", "packed-second", "group-broadcast".
const char* layout_name(Layout l);

/// The name of the [rows, 2 * width] tensor that the packed halves share (vLLM's `input`).
inline constexpr const char* kPackedBufferName = "x";

struct InputSpec {
  std::string name;  ///< "x", "bias", "gate", "up", "y", "scale", "shift"
  Layout layout;
};

/// What a kernel promises to compute; the audit judges a kernel against the contract it claims.
enum class Contract : int {
  kEager,  ///< bit-exact with eager PyTorch's composition on the device: every intermediate tensor rounded to T
  kFp32,   ///< the intermediate steps in binary32, one rounding to T at the end (FlashInfer's, sgl-kernel's claim)
  kFma,    ///< the 3-input ops as one binary32 fmaf, rounded once to T (a fused DiT kernel's claim)
};

inline constexpr Contract kAllContracts[] = {Contract::kEager, Contract::kFp32, Contract::kFma};

/// "eager", "fp32", "fma".
const char* contract_name(Contract c);
std::optional<Contract> parse_contract(std::string_view s);

/// One step of a composition.
enum class NodeOp : int {
  kInput,       ///< a declared input, widened exactly
  kActivation,  ///< act(a), the activation's eager binary32 formula
  kAdd,         ///< a + b in binary32
  kMul,         ///< a * b in binary32
  kConst,       ///< a binary32 constant (Node::value): the 1 of `1 + scale`
  kFma,         ///< fmaf(a, b, c): a * b + c in binary32 with one rounding
};

/// The tensor a node's result lives in: kHalf rounds it to the op's dtype (and widens it again for the next step).
enum class Precision : int { kHalf, kFloat32 };

struct Node {
  NodeOp op = NodeOp::kInput;
  int input = -1;                          ///< kInput: index into OpSpec::inputs
  Activation act = Activation::kGeluTanh;  ///< kActivation
  int a = -1, b = -1, c = -1;              ///< operands: indices of earlier nodes (c: kFma's addend)
  float value = 0.0f;                      ///< kConst
  Precision precision = Precision::kHalf;
};

struct ContractSpec {
  Contract contract = Contract::kEager;
  std::vector<Node> nodes;  ///< in evaluation order; the last is the output, rounded to T (once more if kFloat32)
  std::string meaning;      ///< one line: what a kernel claiming it promises
};

/// A production shape of the op's output, for the audit's shapes class.
struct ShapeSpec {
  int64_t rows;
  int64_t width;
  std::string why;
};

/// A quantization the op's output feeds in a fused kernel (the next GEMM's input): the quantization registry
/// (reference/quant_registry.cpp) declares "<op>_fp8_group_quant" or "<op>_nvfp4_quant" from it, with the op as its
/// activation stage.
struct QuantFusion {
  enum Kind { kFp8Group, kNvfp4 } kind;
  std::string formula;  ///< the fused op's formula, as `fuseproof ops` prints it
  std::string users;    ///< who ships the fused kernel
};

struct OpSpec {
  std::string name;                     ///< the name every other part of the suite finds the op by (find_op)
  std::string formula;                  ///< "out = silu(gate) * up"
  std::vector<InputSpec> inputs;        ///< declared order; the domain's canonical order has the last input outer
  std::vector<ContractSpec> contracts;  ///< contracts[0] is kEager
  std::string users;                    ///< who ships it, for `fuseproof ops` and docs/OPS.md
  std::vector<ShapeSpec> envelope;      ///< the production envelope on a GPU (the last above 2^31 elements)
  std::vector<QuantFusion> quant_fusions;  ///< the fused quantization ops built on this one, in their listed order

  const ContractSpec* contract(Contract c) const;
  /// The buffers a call allocates, in order: an input's own name, or kPackedBufferName once for a packed pair.
  std::vector<std::string> buffers() const;
  /// Index into buffers() of input i.
  int buffer_of(int input) const;
  /// Elements of buffer k for an output of [rows, width] (width per row: width, or 2 * width when packed).
  int64_t buffer_row_elems(int buffer, int64_t width) const;
  bool buffer_broadcast(int buffer) const;  ///< one row shared by every output row (kRowBroadcast)
  bool buffer_grouped(int buffer) const;    ///< one row per group of group_rows output rows (kGroupBroadcast)
  /// Rows of buffer k for an output of `rows` rows in groups of `group_rows`: 1, rows / group_rows or rows.
  int64_t buffer_rows(int buffer, int64_t rows, int64_t group_rows) const;
  /// Whether any input is group-broadcast (the call then carries group_rows; ABI version 3).
  bool has_groups() const;
  /// The element offset of input i at (r, c) inside its buffer.
  int64_t input_offset(int input, int64_t r, int64_t c, int64_t width, int64_t group_rows = 1) const;
  /// Bytes of every buffer plus the output per element of the output (2 * (1 + elements read per output element)).
  int64_t bytes_per_element() const;
};

/// Every op, in the order `fuseproof ops` lists them.
const std::vector<OpSpec>& op_registry();
/// The seed op (the registry's first: bias_gelu_tanh): the default of every --op, the only op of plugin ABI v1 and
/// of `fuseproof bench`.
const OpSpec& seed_op();
/// The op named `name`, or nullptr.
const OpSpec* find_op(std::string_view name);
/// "bias_gelu_tanh, bias_gelu_erf, ..." for messages.
std::string op_names();

/// Builds a composition step by step (op_registry.cpp writes every entry with it).
class Composition {
 public:
  int input(int i);
  int activation(Activation act, int a, Precision p);
  int add(int a, int b, Precision p);
  int mul(int a, int b, Precision p);
  int constant(float value);
  /// fmaf(a, b, c) rounded once; p is the precision of its result.
  int fma(int a, int b, int c, Precision p);
  std::vector<Node> nodes() const { return nodes_; }

 private:
  int push(Node n);
  int binary(NodeOp op, int a, int b, Precision p);
  std::vector<Node> nodes_;
};

}  // namespace fuseproof::ref
