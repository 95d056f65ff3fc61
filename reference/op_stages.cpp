// op_stages.cpp: the rounding boundaries (stages) of a composition of 3 or more inputs: each a 2-input step of T
// patterns, with a witness (op inputs) for every pattern its operands take, and neutral values of the other inputs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "half_codec.h"
#include "op_plan.h"

namespace fuseproof::ref {

namespace {

/// The values tried for the inputs an operand or the rest of the composition does not enumerate, in this order.
constexpr float kCandidates[] = {0.0f, -0.0f, 1.0f, -1.0f, 2.0f, 0.5f};
constexpr const char* kCandidatesText = "{+0, -0, 1, -1, 2, 0.5}";

bool is_binary(NodeOp op) { return op == NodeOp::kAdd || op == NodeOp::kMul || op == NodeOp::kFma; }

/// The input names of the bits of m: "x", "gate and y", "x, gate and y".
std::string input_names(const OpSpec& op, uint32_t m) {
  std::vector<std::string> v;
  for (int i = 0; i < int(op.inputs.size()); ++i)
    if (m >> i & 1u) v.push_back(op.inputs[size_t(i)].name);
  std::string s;
  for (size_t k = 0; k < v.size(); ++k) s += (k == 0 ? "" : k + 1 == v.size() ? " and " : ", ") + v[k];
  return s;
}

/// The bits of m, lowest first.
std::vector<int> bits_of(uint32_t m) {
  std::vector<int> v;
  for (int i = 0; i < 32; ++i)
    if (m >> i & 1u) v.push_back(i);
  return v;
}

/// Steps `combo` (one index into kCandidates per entry) to the next assignment, the first entry slowest; false after
/// the last one.
bool next_combo(std::vector<int>& combo) {
  for (size_t k = combo.size(); k-- > 0;) {
    if (++combo[k] < int(std::size(kCandidates))) return true;
    combo[k] = 0;
  }
  return false;
}

}  // namespace

std::string half_text(Dtype d, uint16_t h) {
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%04X", h);
  const float f = half_to_f32(d, h);
  std::string dec;
  if (std::isnan(f)) {
    dec = "nan";
  } else if (std::isinf(f)) {
    dec = f < 0 ? "-inf" : "inf";
  } else if (f == 0.0f) {
    dec = std::signbit(f) ? "-0" : "+0";
  } else {
    // The shortest decimal that rounds back to h (9 digits always do: they round-trip binary32).
    char b[32];
    for (int p = 1; p <= 9; ++p) {
      std::snprintf(b, sizeof b, "%.*g", p, double(f));
      if (f32_to_half(d, std::strtof(b, nullptr), NanPolicy::kCudaCvtRn) == h) break;
    }
    dec = b;
  }
  return std::string(hex) + " (" + dec + ")";
}

std::string node_text(const OpSpec& op, const std::vector<Node>& nodes, int n) {
  const Node& node = nodes[size_t(n)];
  // A binary32 sum or product inside another step is parenthesised: "x * (1 + scale)".
  auto operand = [&](int k) {
    const std::string t = node_text(op, nodes, k);
    const Node& o = nodes[size_t(k)];
    return is_binary(o.op) && o.op != NodeOp::kFma && o.precision == Precision::kFloat32 ? "(" + t + ")" : t;
  };
  std::string e;
  switch (node.op) {
    case NodeOp::kInput: return op.inputs[size_t(node.input)].name;
    case NodeOp::kConst: {
      char b[32];
      std::snprintf(b, sizeof b, "%.9g", double(node.value));
      return b;
    }
    case NodeOp::kActivation: e = std::string(activation_name(node.act)) + "(" + operand(node.a) + ")"; break;
    case NodeOp::kAdd: e = operand(node.a) + " + " + operand(node.b); break;
    case NodeOp::kMul: e = operand(node.a) + " * " + operand(node.b); break;
    case NodeOp::kFma:
      e = "fmaf(" + node_text(op, nodes, node.a) + ", " + node_text(op, nodes, node.b) + ", " +
          node_text(op, nodes, node.c) + ")";
      break;
  }
  return node.precision == Precision::kHalf ? "round_T(" + e + ")" : e;
}

void OpPlan::analyse_stages() const {
  const int n_nodes = int(nodes_.size()), n_in = int(op_->inputs.size()), last = n_nodes - 1;
  const std::string contract = std::string("contract ") + contract_name(contract_);
  if (n_in < 3) {
    no_stages_ = std::to_string(n_in) + "-input op: the domain class enumerates its one boundary";
    return;
  }
  for (int k = 0; k < n_nodes; ++k)
    if (nodes_[size_t(k)].op == NodeOp::kFma) {
      no_stages_ = contract + ": " + node_text(*op_, nodes_, k) +
                   " rounds three operands at once, so no rounding boundary is a 2-input step of T patterns";
      return;
    }
  for (int k = 0; k < last; ++k) {
    const Node& node = nodes_[size_t(k)];
    if (node.op != NodeOp::kInput && node.op != NodeOp::kConst && node.precision == Precision::kFloat32) {
      no_stages_ = contract + ": " + node_text(*op_, nodes_, k) +
                   " stays in binary32, so the step reading it does not see T patterns only";
      return;
    }
  }

  // Every pattern a rounding to T can give: the non-NaN ones and the NaN patterns of the plan's policy (of a NaN
  // input, quieted or not, and of x86's default NaN of either sign).
  std::vector<char> producible(65536, 0);
  for (uint32_t t = 0; t < 65536; ++t) {
    if (!is_nan_bits(dtype_, uint16_t(t))) {
      producible[t] = 1;
      continue;
    }
    const uint32_t w = f32_bits(widen_[t]);
    producible[round_(f32_from_bits(w))] = 1;
    producible[round_(f32_from_bits(w | 0x00400000u))] = 1;
  }
  producible[round_(f32_from_bits(0x7FC00000u))] = 1;
  producible[round_(f32_from_bits(0xFFC00000u))] = 1;
  std::vector<uint16_t> results;  // what every stage's neutral is verified on
  for (uint32_t t = 0; t < 65536; ++t)
    if (producible[t]) results.push_back(uint16_t(t));

  auto candidate = [&](int c) { return round_(kCandidates[c]); };
  float v[kMaxPlanNodes];

  // The patterns operand node `o` takes, with a witness for each; false (and why) when it is not a T operand.
  auto operand = [&](int o, Stage::Operand& op, std::string& why) {
    const Node& node = nodes_[size_t(o)];
    op.node = o;
    op.text = node_text(*op_, nodes_, o);
    op.depends = node_depends(nodes_, o);
    std::array<uint16_t, kMaxOpInputs> w{};
    if (node.op == NodeOp::kConst) {
      const uint16_t t = round_(node.value);
      if (f32_bits(widen_[t]) != f32_bits(node.value)) {
        why = "the constant " + op.text + " is not a T value";
        return false;
      }
      op.values = {t};
      op.witness = {w};
      op.how = "the constant " + half_text(dtype_, t);
      return true;
    }
    if (node.op == NodeOp::kInput) {
      op.values.resize(65536);
      op.witness.assign(65536, w);
      for (uint32_t p = 0; p < 65536; ++p) {
        op.values[p] = uint16_t(p);
        op.witness[p][size_t(node.input)] = uint16_t(p);
      }
      op.varies = op.depends;
      op.how = "every " + op.text;
      return true;
    }
    if (node.precision != Precision::kHalf) {
      why = op.text + " is a binary32 value, not a T pattern";
      return false;
    }
    // A T tensor: enumerate one free input at a time, the others it reads fixed to candidates. Each such choice
    // reaches a set of patterns; take the choice that adds the most (the first on a tie) until every pattern a
    // rounding can give is reached or no choice adds any.
    struct Choice {
      int free;
      std::vector<int> others, combo;
    };
    std::vector<Choice> choices;
    const std::vector<int> deps = bits_of(op.depends);
    for (int f : deps) {
      Choice c{f, {}, {}};
      for (int i : deps)
        if (i != f) c.others.push_back(i);
      c.combo.assign(c.others.size(), 0);
      do choices.push_back(c);
      while (next_combo(c.combo));
    }
    // Runs choice c over every pattern of its free input: fn(t, in) for each result t.
    auto run = [&](const Choice& c, auto&& fn) {
      uint16_t in[kMaxOpInputs] = {};
      for (size_t k = 0; k < c.others.size(); ++k) in[c.others[k]] = candidate(c.combo[k]);
      for (uint32_t p = 0; p < 65536; ++p) {
        in[c.free] = uint16_t(p);
        fn(forward(in, o, v, -1, 0.0f), in);
      }
    };
    std::vector<char> seen(65536, 0), mark(65536, 0);
    std::vector<std::array<uint16_t, kMaxOpInputs>> first(65536);
    size_t reached_results = 0;
    std::vector<std::string> how;
    std::vector<char> used(choices.size(), 0);
    while (reached_results < results.size()) {
      size_t best = choices.size(), best_added = 0;
      for (size_t c = 0; c < choices.size(); ++c) {
        if (used[c]) continue;
        std::fill(mark.begin(), mark.end(), 0);
        size_t added = 0;
        run(choices[c], [&](uint16_t t, const uint16_t*) {
          if (!seen[t] && !mark[t]) added += mark[t] = 1;
        });
        if (added > best_added) best = c, best_added = added;
      }
      if (best == choices.size()) break;
      used[best] = 1;
      const Choice& c = choices[best];
      run(c, [&](uint16_t t, const uint16_t* in) {
        if (seen[t]) return;
        seen[t] = 1;
        std::copy(in, in + kMaxOpInputs, first[t].begin());
        reached_results += producible[t];
      });
      std::string h = "every " + op_->inputs[size_t(c.free)].name;
      for (size_t k = 0; k < c.others.size(); ++k)
        h += (k ? ", " : " with ") + op_->inputs[size_t(c.others[k])].name + " = " +
             half_text(dtype_, candidate(c.combo[k]));
      how.push_back(h);
    }
    for (uint32_t t = 0; t < 65536; ++t)
      if (seen[t]) {
        op.values.push_back(uint16_t(t));
        op.witness.push_back(first[t]);
      }
    for (int i : deps)
      for (const auto& wi : op.witness)
        if (wi[size_t(i)] != op.witness[0][size_t(i)]) {
          op.varies |= 1u << i;
          break;
        }
    for (size_t k = 0; k < how.size(); ++k) op.how += (k ? "; " : "") + how[k];
    return true;
  };

  for (int k = 0; k < n_nodes; ++k) {
    const Node& node = nodes_[size_t(k)];
    if (node.op != NodeOp::kAdd && node.op != NodeOp::kMul) continue;
    Stage s;
    s.node = k;
    s.text = node_text(*op_, nodes_, k);
    s.combine = node.op == NodeOp::kAdd ? Combine::kAdd : Combine::kMul;
    std::string why;
    if (!operand(node.a, s.a, why) || !operand(node.b, s.b, why)) {
      left_out_.push_back(s.text + ": " + why);
      continue;
    }
    const uint32_t ab = s.a.depends | s.b.depends;
    if (s.a.depends & s.b.depends) {
      left_out_.push_back(s.text + ": both operands read " + input_names(*op_, s.a.depends & s.b.depends) +
                          ", so their pairs are not independent");
      continue;
    }
    // The rest of the composition must read the operands' inputs only through this step, so that the step's result
    // alone decides the output once the other inputs are fixed.
    std::vector<char> through(size_t(n_nodes), 0);
    through[size_t(k)] = 1;
    bool leaks = false;
    for (int j = k + 1; j < n_nodes; ++j) {
      const Node& nj = nodes_[size_t(j)];
      for (int o : {nj.a, nj.b, nj.c}) {
        if (o < 0) continue;
        if (through[size_t(o)]) through[size_t(j)] = 1;
        else if (node_depends(nodes_, o) & ab) leaks = true;
      }
    }
    if (leaks || !through[size_t(last)]) {
      left_out_.push_back(s.text + (leaks ? ": the rest of the composition reads " + input_names(*op_, ab) +
                                                " other than through this step"
                                          : ": its result does not reach the output"));
      continue;
    }
    // Neutral values of the other inputs: the first assignment from the candidates under which the rest maps every
    // result t of a rounding to t, bit for bit.
    const uint32_t all = (1u << n_in) - 1u;
    const std::vector<int> free = bits_of(all & ~ab);
    std::vector<int> combo(free.size(), 0);
    bool found = false;
    do {
      uint16_t in[kMaxOpInputs] = {};
      for (size_t c = 0; c < free.size(); ++c) in[free[c]] = candidate(combo[c]);
      const bool ok = std::all_of(results.begin(), results.end(),
                                  [&](uint16_t t) { return forward(in, last, v, k, widen_[t]) == t; });
      if (ok) {
        found = true;
        std::copy(in, in + kMaxOpInputs, s.neutral.begin());
        break;
      }
    } while (next_combo(combo));
    if (!found) {
      left_out_.push_back(s.text + ": no choice of " + input_names(*op_, all & ~ab) + " from " + kCandidatesText +
                          " passes every result through to the output");
      continue;
    }
    for (size_t c = 0; c < free.size(); ++c)
      s.neutral_text += (c ? ", " : "") + op_->inputs[size_t(free[c])].name + " = " +
                        half_text(dtype_, s.neutral[size_t(free[c])]);
    if (free.empty()) s.neutral_text = "none (every input is an operand's)";
    // Each witness carries the neutral values, so a's witness with b's inputs written over it is a whole case.
    for (Stage::Operand* op : {&s.a, &s.b})
      for (auto& w : op->witness)
        for (int i : free) w[size_t(i)] = s.neutral[size_t(i)];
    stages_.push_back(std::move(s));
  }
  if (stages_.empty())
    no_stages_ = contract + ": no step is a 2-input rounding of T patterns that the output shows" +
                 (left_out_.empty() ? std::string() : " (" + left_out_.front() + ")");
}

}  // namespace fuseproof::ref
