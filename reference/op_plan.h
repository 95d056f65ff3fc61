// op_plan.h: an op's contract compiled for one dtype: the composition evaluated node by node (the definition), the
// tabulated form every 2-input op reduces to, out = P[round_T(A[in0] (+|*) B[in1])], for the domain's rows, and the
// rounding boundaries (stages) of a 3-input eager composition, each a 2-input step whose whole domain is enumerable.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "dtype.h"
#include "math_model.h"
#include "op_spec.h"

namespace fuseproof::ref {

/// The one binary step of a 2-input composition.
enum class Combine : int { kAdd, kMul };

/// Most declared inputs of an op (kernels/fuseproof_kernel_abi.h's FUSEPROOF_MAX_INPUTS).
inline constexpr int kMaxOpInputs = 4;
/// Most nodes of one contract's composition (the forward pass keeps their values on the stack).
inline constexpr int kMaxPlanNodes = 32;

/// One rounding boundary of an eager composition: a kHalf node of two operands, each a declared input, an earlier
/// kHalf node or a constant, so that the step sees T patterns only and its domain is at most 65,536 x 65,536 pairs.
/// The analysis finds, for every pattern an operand can take, op inputs that give it (a witness), and values of the
/// other inputs that make the rest of the composition the identity on the stage's result, so the op's output shows
/// the stage's rounding directly.
struct Stage {
  int node = -1;                ///< the rounding node
  std::string text;             ///< "round_T(gate * y)", "round_T(1 + scale)"
  Combine combine = Combine::kAdd;
  struct Operand {
    int node = -1;              ///< the node feeding the stage
    std::string text;           ///< "gate", "round_T(gate * y)", "1"
    uint32_t depends = 0;       ///< bit i: depends on declared input i (0 for a constant)
    uint32_t varies = 0;        ///< bit i: input i is not the same in every witness (within depends)
    std::vector<uint16_t> values;  ///< the patterns it can take, ascending (one for a constant)
    /// witness[k]: inputs giving values[k] in the bits of `depends`; every input outside both operands' depends holds
    /// the stage's neutral value, the other operand's inputs 0 (Stage::inputs overwrites them)
    std::vector<std::array<uint16_t, kMaxOpInputs>> witness;
    std::string how;            ///< how the values are reached, one line: "every gate with y = 0x3F80 (1)"
  };
  Operand a, b;                 ///< a is the node's first operand
  std::array<uint16_t, kMaxOpInputs> neutral{};  ///< the inputs outside a's and b's that pass the result through
  std::string neutral_text;     ///< "x = 0x8000 (-0)"
  uint64_t pairs() const { return uint64_t(a.values.size()) * b.values.size(); }
  /// The op's inputs for the pair (a.values[ia], b.values[ib]): a's witness with b's depends bits from b's witness.
  std::array<uint16_t, kMaxOpInputs> inputs(size_t ia, size_t ib) const;
};

/// Bit i set when node n of a composition depends on declared input i (0 for a constant).
uint32_t node_depends(const std::vector<Node>& nodes, int n);

/// Node n of a composition as an expression of the op's input names: "gate", "1", "round_T(gate * y)",
/// "fmaf(gate, y, x)"; a kHalf result is wrapped in round_T(), a kFloat32 one is not.
std::string node_text(const OpSpec& op, const std::vector<Node>& nodes, int n);

/// "0x3F80 (1)", "0x8000 (-0)", "0x7FFF (nan)": a pattern of dtype d, hex first, then the shortest decimal that
/// rounds back to it.
std::string half_text(Dtype d, uint16_t h);

class OpPlan {
 public:
  /// Compiles `contract` of `op` for dtype d under cfg (the cuda model needs cfg.mufu; cfg must outlive the plan).
  /// Throws std::invalid_argument (one line) when the op has no such contract, or it has 2 inputs and its
  /// composition has no tabulated form (it needs exactly one step that joins the two inputs, a unary chain of half
  /// tensors after it). Ops of 3 or more inputs have no tabulated form: eval() runs the nodes.
  OpPlan(const OpSpec& op, Contract contract, Dtype d, const MathConfig& cfg);

  /// Whether the op has the 2-input tabulated form (a(), b(), row(), ... are valid only then).
  bool tabulated() const { return join_ >= 0; }
  int inputs() const { return int(op_->inputs.size()); }
  /// The expected output for the op's declared inputs in[0 .. inputs()-1]: the tabulated form when there is one, else
  /// the nodes compiled into one forward pass (equal to eval_nodes; property_tests/reference/op_plan_test.cpp).
  uint16_t eval(const uint16_t* in) const {
    if (tabulated()) return eval(in[0], in[1]);
    float v[kMaxPlanNodes];
    return forward(in, int(nodes_.size()) - 1, v, -1, 0.0f);
  }
  /// eval() of n elements: out[j] = eval({in[0][j], in[1][j], ...}) for the declared inputs. The nodes run one at a
  /// time over blocks of elements (one dispatch per node and block, loops the compiler vectorizes), equal to eval()
  /// element by element (property_tests/reference/op_plan_test.cpp): the 3-input ops' expected values on the host.
  void eval_run(const uint16_t* const* in, size_t n, uint16_t* out) const;
  /// The rounding boundaries of a composition of 3 or more inputs, in evaluation order (empty for a 2-input op,
  /// whose one join the domain class enumerates, and for a contract with a rounding of more than two T operands:
  /// fma). Computed once, on first use (a few passes over 65,536 patterns per operand); thread-safe.
  const std::vector<Stage>& stages() const;
  /// Why stages() is empty, one line ("" when it is not).
  std::string no_stages_reason() const;
  /// out[ia] = the op's output at pair (s.a.values[ia], s.b.values[ib]) of stage s (one of stages()), for every ia:
  /// one row of the stage's pairs in canonical order (b outer, a inner). The neutral inputs make that output the
  /// stage's own rounding, round_T(a (+|*) b), which this computes directly (equal to eval(s.inputs(ia, ib));
  /// property_tests/reference/op_stages_test.cpp).
  void stage_row(const Stage& s, size_t ib, uint16_t* out) const;
  /// The candidate steps stages() leaves out, one line each with the reason (operands sharing an input, a rest of
  /// the composition no choice of the other inputs makes the identity, a constant that is not a T value).
  const std::vector<std::string>& stages_left_out() const;

  const OpSpec& op() const { return *op_; }
  Contract contract() const { return contract_; }
  Dtype dtype() const { return dtype_; }
  const MathConfig& config() const { return cfg_; }

  /// The definition: every node in turn, in binary32, a kHalf node's result rounded to T (cfg.nan) and widened.
  /// in[i] is the pattern of declared input i.
  uint16_t eval_nodes(const uint16_t* in) const;
  /// The forward pass of eval() kept node by node (a float per node of the contract each): raw[k], node k's binary32 result
  /// before its own rounding (an input widened, a constant); value[k], node k as the next steps read it (a kHalf
  /// node's rounded and widened; the last node's rounded to T whatever its precision, as the output is). Where the
  /// audit's input generators look for ties.
  void trace(const uint16_t* in, float* value, float* raw) const;
  /// The tabulated form (equal to eval_nodes for every pair; property_tests/reference/op_plan_test.cpp).
  uint16_t eval(uint16_t in0, uint16_t in1) const {
    const float v = combine_ == Combine::kAdd ? a_[in0] + b_[in1] : a_[in0] * b_[in1];
    const uint16_t r = round_(v);
    return p_.empty() ? r : p_[r];
  }
  /// out[i0] = eval(i0, in1) for all 65,536 first-input patterns: one row of the domain in canonical order (the
  /// second input outer). Rows of an add of two widened inputs take sweep_row.h's proven shortcuts.
  void row(uint16_t in1, uint16_t* out) const;

  /// The pieces of the tabulated form, for the input generators.
  float a(uint16_t in0) const { return a_[in0]; }
  float b(uint16_t in1) const { return b_[in1]; }
  Combine combine() const { return combine_; }
  /// Whether the binary step's result is rounded to T before P (kHalf) or is the binary32 value rounded once at the
  /// end (kFloat32, P the identity).
  Precision combine_precision() const { return combine_precision_; }
  /// P[t] for a T pattern t (identity when P is empty).
  uint16_t p(uint16_t t) const { return p_.empty() ? t : p_[t]; }
  bool has_p() const { return !p_.empty(); }
  /// The binary32 value P's activation rounds, for a T pattern t of the binary step (has_p only).
  float p_unrounded(uint16_t t) const;
  /// Whether input 0's side ends in a kHalf activation (a rounding of its own), and the binary32 value it rounds.
  bool a_rounds() const { return a_rounds_; }
  float a_unrounded(uint16_t in0) const;
  /// The rounding of a binary32 value to T under the plan's NaN policy.
  uint16_t round(float v) const { return round_(v); }

 private:
  struct Side {
    int node = -1;   // the operand node of the binary step on this side
    int input = -1;  // the input it depends on
  };
  float side_value(const Side& s, uint16_t pattern, bool unrounded) const;
  /// The forward pass: nodes 0 .. last in order, v[k] = node k's value as its users read it (a kHalf node's rounded
  /// and widened; override_value for override_node); returns round_T of node last's value (its pattern; a declared
  /// input's own pattern when last is an input).
  uint16_t forward(const uint16_t* in, int last, float* v, int override_node, float override_value) const;
  /// The same pass; with kTrace, raw[k] gets node k's binary32 result before its rounding and v[last] the output
  /// widened (trace()). A template so that eval's pass tests nothing per node (a runtime test cost eval of the 3-input
  /// ops 10-20% on the CPU).
  template <bool kTrace>
  uint16_t forward_(const uint16_t* in, int last, float* v, int override_node, float override_value, float* raw) const;
  float node_raw(int node, const float* in, int override_node, float override_value) const;
  float node_value(int node, const float* in, int override_node, float override_value) const;
  uint16_t round_(float v) const;

  const OpSpec* op_;
  Contract contract_;
  Dtype dtype_;
  MathConfig cfg_;
  std::vector<Node> nodes_;
  int join_ = -1;  // the binary step
  Side side0_, side1_;
  Combine combine_ = Combine::kAdd;
  Precision combine_precision_ = Precision::kHalf;
  bool a_rounds_ = false;
  bool add_shortcuts_ = false;  // A and B are plain widenings and the step is an add
  std::vector<float> a_, b_;
  std::vector<uint16_t> p_;
  std::vector<float> widen_;  // T pattern -> binary32, for the forward pass
  mutable std::once_flag stages_once_;
  mutable std::vector<Stage> stages_;
  mutable std::string no_stages_;
  mutable std::vector<std::string> left_out_;
  void analyse_stages() const;  // op_stages.cpp
};

}  // namespace fuseproof::ref
