// op_plan.cpp: compiling a composition into its tabulated form.
#include "op_plan.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "sweep_row.h"
#include "half_codec.h"

namespace fuseproof::ref {

uint32_t node_depends(const std::vector<Node>& nodes, int n) {
  const Node& node = nodes[size_t(n)];
  if (node.op == NodeOp::kInput) return 1u << node.input;
  if (node.op == NodeOp::kConst) return 0u;
  uint32_t m = node_depends(nodes, node.a);
  if (node.b >= 0) m |= node_depends(nodes, node.b);
  if (node.c >= 0) m |= node_depends(nodes, node.c);
  return m;
}

uint16_t OpPlan::round_(float v) const { return f32_to_half(dtype_, v, cfg_.nan); }

float OpPlan::node_raw(int n, const float* in, int override_node, float override_value) const {
  const Node& node = nodes_[size_t(n)];
  auto operand = [&](int k) { return node_value(k, in, override_node, override_value); };
  switch (node.op) {
    case NodeOp::kInput: return in[node.input];
    case NodeOp::kActivation: return activation_f32(node.act, operand(node.a), cfg_);
    case NodeOp::kAdd: return operand(node.a) + operand(node.b);
    case NodeOp::kMul: return operand(node.a) * operand(node.b);
    case NodeOp::kConst: return node.value;
    // std::fma of three binary32 values rounds once to binary32, as the device's fma.rn.f32.
    case NodeOp::kFma: return std::fma(operand(node.a), operand(node.b), operand(node.c));
  }
  throw std::invalid_argument("op plan: unknown node");
}

float OpPlan::node_value(int n, const float* in, int override_node, float override_value) const {
  if (n == override_node) return override_value;
  const float v = node_raw(n, in, override_node, override_value);
  return nodes_[size_t(n)].op != NodeOp::kInput && nodes_[size_t(n)].op != NodeOp::kConst &&
                 nodes_[size_t(n)].precision == Precision::kHalf
             ? half_to_f32(dtype_, round_(v)) : v;
}

uint16_t OpPlan::eval_nodes(const uint16_t* in) const {
  float wide[kMaxOpInputs];
  for (size_t i = 0; i < op_->inputs.size(); ++i) wide[i] = half_to_f32(dtype_, in[i]);
  const Node& out = nodes_.back();
  if (out.op == NodeOp::kInput) return in[out.input];
  // A kHalf output node's own rounding, or the final rounding of a binary32 one: round_T either way.
  return round_(node_raw(int(nodes_.size()) - 1, wide, -1, 0));
}

void OpPlan::trace(const uint16_t* in, float* value, float* raw) const {
  forward_<true>(in, int(nodes_.size()) - 1, value, -1, 0.0f, raw);
}

uint16_t OpPlan::forward(const uint16_t* in, int last, float* v, int override_node, float override_value) const {
  return forward_<false>(in, last, v, override_node, override_value, nullptr);
}

template <bool kTrace>
uint16_t OpPlan::forward_(const uint16_t* in, int last, float* v, int override_node, float override_value,
                          float* raw) const {
  for (int k = 0;; ++k) {
    const Node& n = nodes_[size_t(k)];
    float r;
    bool rounds = n.precision == Precision::kHalf;
    if (k == override_node) {
      r = override_value;
      rounds = false;
    } else {
      switch (n.op) {
        case NodeOp::kInput:
          if (k == last) {
            if constexpr (kTrace) raw[k] = v[k] = widen_[in[n.input]];
            return in[n.input];
          }
          r = widen_[in[n.input]];
          rounds = false;
          break;
        case NodeOp::kConst: r = n.value; rounds = false; break;
        case NodeOp::kActivation: r = activation_f32(n.act, v[n.a], cfg_); break;
        case NodeOp::kAdd: r = v[n.a] + v[n.b]; break;
        case NodeOp::kMul: r = v[n.a] * v[n.b]; break;
        case NodeOp::kFma: r = std::fma(v[n.a], v[n.b], v[n.c]); break;
        default: throw std::invalid_argument("op plan: unknown node");
      }
    }
    if constexpr (kTrace) raw[k] = r;
    // The last node's value is rounded to T whatever its precision: a kFloat32 output is narrowed once at the end.
    if (k == last) {
      const uint16_t out = round_(r);
      if constexpr (kTrace) v[k] = widen_[out];
      return out;
    }
    v[k] = rounds ? widen_[round_(r)] : r;
  }
}

void OpPlan::eval_run(const uint16_t* const* in, size_t n, uint16_t* out) const {
  if (tabulated()) {
    for (size_t j = 0; j < n; ++j) out[j] = eval(in[0][j], in[1][j]);
    return;
  }
  constexpr size_t kBlock = 128;
  const int last = int(nodes_.size()) - 1;
  if (nodes_[size_t(last)].op == NodeOp::kInput) {
    for (size_t j = 0; j < n; ++j) out[j] = in[nodes_[size_t(last)].input][j];
    return;
  }
  const float* widen = widen_.data();
  float v[kMaxPlanNodes][kBlock];
  for (size_t j0 = 0; j0 < n; j0 += kBlock) {
    const size_t m = std::min(kBlock, n - j0);
    for (int k = 0; k <= last; ++k) {
      const Node& nd = nodes_[size_t(k)];
      float* r = v[k];
      switch (nd.op) {
        case NodeOp::kInput: {
          const uint16_t* x = in[nd.input] + j0;
          for (size_t j = 0; j < m; ++j) r[j] = widen[x[j]];
          continue;  // an input is exact: no rounding
        }
        case NodeOp::kConst:
          for (size_t j = 0; j < m; ++j) r[j] = nd.value;
          if (k != last) continue;
          break;
        case NodeOp::kActivation:
          for (size_t j = 0; j < m; ++j) r[j] = activation_f32(nd.act, v[nd.a][j], cfg_);
          break;
        case NodeOp::kAdd:
          for (size_t j = 0; j < m; ++j) r[j] = v[nd.a][j] + v[nd.b][j];
          break;
        case NodeOp::kMul:
          for (size_t j = 0; j < m; ++j) r[j] = v[nd.a][j] * v[nd.b][j];
          break;
        case NodeOp::kFma:
          for (size_t j = 0; j < m; ++j) r[j] = std::fma(v[nd.a][j], v[nd.b][j], v[nd.c][j]);
          break;
        default: throw std::invalid_argument("op plan: unknown node");
      }
      // As forward_: the last node is rounded to T whatever its precision; a kHalf node rounds before its users.
      if (k == last) {
        for (size_t j = 0; j < m; ++j) out[j0 + j] = round_(r[j]);
      } else if (nd.precision == Precision::kHalf) {
        for (size_t j = 0; j < m; ++j) r[j] = widen[round_(r[j])];
      }
    }
  }
}

float OpPlan::side_value(const Side& s, uint16_t pattern, bool unrounded) const {
  float in[kMaxOpInputs] = {};
  in[s.input] = half_to_f32(dtype_, pattern);
  return unrounded ? node_raw(s.node, in, -1, 0) : node_value(s.node, in, -1, 0);
}

float OpPlan::a_unrounded(uint16_t in0) const { return side_value(side0_, in0, true); }

float OpPlan::p_unrounded(uint16_t t) const {
  // The chain after the binary step is unary: the last node's raw value with the step's value substituted.
  float in[kMaxOpInputs] = {};
  return node_raw(int(nodes_.size()) - 1, in, join_, half_to_f32(dtype_, t));
}

OpPlan::OpPlan(const OpSpec& op, Contract contract, Dtype d, const MathConfig& cfg)
    : op_(&op), contract_(contract), dtype_(d), cfg_(cfg) {
  const ContractSpec* cs = op.contract(contract);
  if (!cs) throw std::invalid_argument(op.name + " has no contract " + contract_name(contract));
  if (op.inputs.empty() || op.inputs.size() > size_t(kMaxOpInputs))
    throw std::invalid_argument(op.name + ": an op has 1 to " + std::to_string(kMaxOpInputs) + " inputs, got " +
                                std::to_string(op.inputs.size()));
  nodes_ = cs->nodes;
  if (nodes_.empty() || nodes_.size() > size_t(kMaxPlanNodes))
    throw std::invalid_argument(op.name + ": a composition has 1 to " + std::to_string(kMaxPlanNodes) +
                                " nodes, got " + std::to_string(nodes_.size()));
  widen_.resize(65536);
  for (uint32_t p = 0; p < 65536; ++p) widen_[p] = half_to_f32(d, uint16_t(p));
  if (op.inputs.size() != 2) return;  // no tabulated form: eval() runs the nodes, stages() gives the boundaries
  for (int n = 0; n < int(nodes_.size()); ++n)
    if (node_depends(nodes_, n) == 3u) {
      join_ = n;
      break;
    }
  if (join_ < 0) throw std::invalid_argument(op.name + ": no step joins the two inputs");
  const Node& j = nodes_[size_t(join_)];
  if (j.op != NodeOp::kAdd && j.op != NodeOp::kMul)
    throw std::invalid_argument(op.name + ": the step that joins the inputs must be an add or a multiply");
  combine_ = j.op == NodeOp::kAdd ? Combine::kAdd : Combine::kMul;
  combine_precision_ = j.precision;
  Side sa{j.a, node_depends(nodes_, j.a) == 1u ? 0 : 1}, sb{j.b, node_depends(nodes_, j.b) == 1u ? 0 : 1};
  if (sa.input == sb.input) throw std::invalid_argument(op.name + ": both operands of the join read one input");
  side0_ = sa.input == 0 ? sa : sb;
  side1_ = sa.input == 0 ? sb : sa;  // the step is commutative in IEEE arithmetic: A always holds input 0's side
  // Every node after the join must be a unary step on the one before it (so P is a table of T patterns).
  for (int n = join_ + 1; n < int(nodes_.size()); ++n) {
    const Node& node = nodes_[size_t(n)];
    if (node.op != NodeOp::kActivation || node.a != n - 1)
      throw std::invalid_argument(op.name + ": only unary steps may follow the join");
  }
  if (join_ + 1 < int(nodes_.size()) && combine_precision_ != Precision::kHalf)
    throw std::invalid_argument(op.name + ": steps after a binary32 join have no table of T patterns");
  const Node& n0 = nodes_[size_t(side0_.node)];
  a_rounds_ = n0.op == NodeOp::kActivation && n0.precision == Precision::kHalf;
  a_.resize(65536);
  b_.resize(65536);
  for (uint32_t p = 0; p < 65536; ++p) {
    a_[p] = side_value(side0_, uint16_t(p), false);
    b_[p] = side_value(side1_, uint16_t(p), false);
  }
  if (join_ + 1 < int(nodes_.size())) {
    p_.resize(65536);
    for (uint32_t t = 0; t < 65536; ++t) p_[t] = round_(p_unrounded(uint16_t(t)));
  }
  add_shortcuts_ = combine_ == Combine::kAdd && nodes_[size_t(side0_.node)].op == NodeOp::kInput &&
                   nodes_[size_t(side1_.node)].op == NodeOp::kInput && combine_precision_ == Precision::kHalf;
}

void OpPlan::row(uint16_t in1, uint16_t* out) const {
  if (add_shortcuts_) return sweep_row(dtype_, p_.empty() ? nullptr : p_.data(), cfg_.nan, in1, out);
  const float bv = b_[in1];
  const float* a = a_.data();
  if (combine_ == Combine::kAdd) {
    for (uint32_t x = 0; x < 65536; ++x) out[x] = round_(a[x] + bv);
  } else {
    for (uint32_t x = 0; x < 65536; ++x) out[x] = round_(a[x] * bv);
  }
  if (!p_.empty())
    for (uint32_t x = 0; x < 65536; ++x) out[x] = p_[out[x]];
}

std::array<uint16_t, kMaxOpInputs> Stage::inputs(size_t ia, size_t ib) const {
  std::array<uint16_t, kMaxOpInputs> in = neutral;
  for (int i = 0; i < kMaxOpInputs; ++i) {
    if (a.depends >> i & 1u) in[size_t(i)] = a.witness[ia][size_t(i)];
    if (b.depends >> i & 1u) in[size_t(i)] = b.witness[ib][size_t(i)];
  }
  return in;
}

const std::vector<Stage>& OpPlan::stages() const {
  std::call_once(stages_once_, [this] { analyse_stages(); });
  return stages_;
}

std::string OpPlan::no_stages_reason() const {
  stages();
  return no_stages_;
}

const std::vector<std::string>& OpPlan::stages_left_out() const {
  stages();
  return left_out_;
}

}  // namespace fuseproof::ref
