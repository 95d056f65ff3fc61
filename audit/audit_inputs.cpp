// audit_inputs.cpp: special patterns, ties and random patterns for the two 16-bit formats.
#include "audit/audit_inputs.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>

#include "reference/activation.h"
#include "reference/half_codec.h"

namespace fuseproof::audit {

namespace {

constexpr bool bf(ref::Dtype d) { return d == ref::Dtype::kBf16; }
int mant_bits(ref::Dtype d) { return bf(d) ? 7 : 10; }
int exp_bias(ref::Dtype d) { return bf(d) ? 127 : 15; }
uint16_t exp_mask(ref::Dtype d) { return bf(d) ? 0x7F80 : 0x7C00; }

/// The pattern of a binary32 value that is exactly representable in d.
uint16_t exact(ref::Dtype d, float v) { return ref::f32_to_half(d, v, ref::NanPolicy::kCudaCvtRn); }

}  // namespace

int min_normal_exponent(ref::Dtype d) { return 1 - exp_bias(d); }
int max_exponent(ref::Dtype d) { return exp_bias(d); }

std::vector<uint16_t> extreme_patterns(ref::Dtype d) {
  std::vector<uint16_t> p;
  const uint16_t m = uint16_t((1u << mant_bits(d)) - 1);
  const uint16_t mag[] = {
      0x0000, 0x0001, uint16_t(m / 2), m,                            // zero, subnormals
      uint16_t(1u << mant_bits(d)),                                  // min normal
      exact(d, 0.5f), exact(d, 1.0f), exact(d, 2.0f), exact(d, 3.0f), exact(d, 0.75f), exact(d, 5.0f),
      exact(d, 9.0f), exact(d, 10.0f), uint16_t(exp_mask(d) - 1),    // max finite
      exp_mask(d),                                                   // Inf
      uint16_t(exp_mask(d) | 1), uint16_t(exp_mask(d) | (1u << (mant_bits(d) - 1))), uint16_t(exp_mask(d) | m),
      uint16_t(exp_mask(d) | 0x0005),                                // signalling and quiet NaNs
  };
  for (uint16_t v : mag) {
    p.push_back(v);
    p.push_back(uint16_t(v | 0x8000));
  }
  std::sort(p.begin(), p.end());
  p.erase(std::unique(p.begin(), p.end()), p.end());
  return p;
}

std::vector<uint16_t> binade_patterns(ref::Dtype d, int e) {
  std::vector<uint16_t> p;
  const uint32_t biased = uint32_t(e + exp_bias(d));
  for (uint32_t mant = 0; mant < (1u << mant_bits(d)); ++mant) {
    const uint16_t v = uint16_t((biased << mant_bits(d)) | mant);
    p.push_back(v);
    p.push_back(uint16_t(v | 0x8000));
  }
  return p;
}

namespace {

/// random_pattern for one dtype: counter_patterns.h's weighted_pattern_of with this dtype's extreme patterns.
template <bool kBf16, class Rng>
uint16_t weighted_pattern(Rng& rng) {
  static const std::vector<uint16_t> special = extreme_patterns(kBf16 ? ref::Dtype::kBf16 : ref::Dtype::kFp16);
  return weighted_pattern_of<kBf16>(rng, special.data(), special.size());
}

template <class Rng>
uint16_t weighted_pattern(ref::Dtype d, Rng& rng) {
  return bf(d) ? weighted_pattern<true>(rng) : weighted_pattern<false>(rng);
}

}  // namespace

uint16_t random_pattern(ref::Dtype d, std::mt19937_64& rng) { return weighted_pattern(d, rng); }
uint16_t random_pattern(ref::Dtype d, CounterRng& rng) { return weighted_pattern(d, rng); }

std::vector<uint16_t> domain_subset_biases(ref::Dtype d, uint32_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::set<uint16_t> s;
  for (uint16_t v : extreme_patterns(d)) s.insert(v);
  const uint32_t exps = uint32_t(exp_mask(d) >> mant_bits(d)) + 1;  // biased exponents, subnormal and Inf/NaN included
  const uint16_t m = uint16_t((1u << mant_bits(d)) - 1);
  for (uint32_t e = 0; e < exps; ++e)
    for (uint16_t sign : {uint16_t(0), uint16_t(0x8000)}) s.insert(uint16_t(sign | (e << mant_bits(d)) | (rng() & m)));
  while (s.size() < std::min<uint32_t>(count, 65536)) s.insert(uint16_t(rng()));
  return {s.begin(), s.end()};
}

bool is_rounding_tie(ref::Dtype d, float v) {
  if (!std::isfinite(v)) return false;
  const uint32_t u = ref::f32_bits(v);
  if (bf(d)) return (u & 0xFFFFu) == 0x8000u;  // bf16 keeps binary32's top 16 bits: the tie is 1 then zeros
  const float a = std::fabs(v);
  if (a >= 0x1p-14f) return (u & 0x1FFFu) == 0x1000u;  // fp16 normal: 13 bits dropped
  const double k = double(a) * 0x1p24;                 // fp16 subnormal grid 2^-24 (exact scaling in binary64)
  return k - std::floor(k) == 0.5;
}

bool is_near_rounding_tie(ref::Dtype d, float v) {
  return std::isfinite(v) && !is_rounding_tie(d, v) &&
         (is_rounding_tie(d, std::nextafter(v, INFINITY)) || is_rounding_tie(d, std::nextafter(v, -INFINITY)));
}

namespace {

/// Binary32 units from v to the nearest tie of round_T (0 at a tie); large when v is not finite.
uint32_t units_from_tie(ref::Dtype d, float v) {
  if (!std::isfinite(v)) return 0xFFFFFFFFu;
  const uint32_t u = ref::f32_bits(v);
  if (bf(d)) {
    const uint32_t low = u & 0xFFFFu;
    return low > 0x8000u ? low - 0x8000u : 0x8000u - low;
  }
  if (std::fabs(v) >= 0x1p-14f) {
    const uint32_t low = u & 0x1FFFu;
    return low > 0x1000u ? low - 0x1000u : 0x1000u - low;
  }
  return is_rounding_tie(d, v) ? 0 : is_near_rounding_tie(d, v) ? 1 : 0xFFFFu;
}

/// (sign, binary32 exponent field) of a finite value: the group whose members share a binade.
int binade_key(float v) { return int(ref::f32_bits(v) >> 23); }

/// Up to `k` entries of v spread evenly over it.
std::vector<uint16_t> spread(const std::vector<uint16_t>& v, size_t k) {
  if (v.size() <= k) return v;
  std::vector<uint16_t> out;
  for (size_t i = 0; i < k; ++i) out.push_back(v[i * v.size() / k]);
  return out;
}

void add_column(std::map<uint16_t, std::set<uint16_t>>& cols, uint16_t in1, const std::vector<uint16_t>& in0) {
  cols[in1].insert(in0.begin(), in0.end());
}

std::vector<TieColumn> to_columns(const std::map<uint16_t, std::set<uint16_t>>& cols, size_t cap) {
  std::vector<TieColumn> out;
  for (const auto& [in1, in0] : cols) out.push_back({in1, spread(std::vector<uint16_t>(in0.begin(), in0.end()), cap)});
  return out;
}

float join(const ref::OpPlan& p, uint16_t i0, uint16_t i1) {
  return p.combine() == ref::Combine::kAdd ? p.a(i0) + p.b(i1) : p.a(i0) * p.b(i1);
}

void count(const ref::OpPlan& p, TieSet& t, const std::function<float(uint16_t, uint16_t)>& value) {
  for (const TieColumn& c : t.columns)
    for (uint16_t i0 : c.in0) {
      const float v = value(i0, c.in1);
      t.ties += is_rounding_tie(p.dtype(), v);
      t.near += is_near_rounding_tie(p.dtype(), v);
    }
}

std::string node_text(const ref::OpPlan& p, const char* what) {
  return std::string("round_T(") + what + ") of " + p.op().name;
}

/// The joining step: for three first inputs of each (sign, binade) of A, the second inputs that make A (+|*) B a tie
/// (the two smallest |B| first, then two at random), and their pattern neighbours; each column runs down every first
/// input of the representative's binade.
TieSet join_ties(const ref::OpPlan& p, std::mt19937_64& rng) {
  const ref::Dtype d = p.dtype();
  std::map<int, std::vector<uint16_t>> groups;
  for (uint32_t i = 0; i < 65536; ++i)
    if (std::isfinite(p.a(uint16_t(i)))) groups[binade_key(p.a(uint16_t(i)))].push_back(uint16_t(i));
  std::vector<uint16_t> by_size(65536);
  for (uint32_t i = 0; i < 65536; ++i) by_size[i] = uint16_t(i);
  std::stable_sort(by_size.begin(), by_size.end(), [&](uint16_t a, uint16_t b) {
    return std::fabs(p.b(a)) < std::fabs(p.b(b));  // NaN sorts nowhere in particular; ties skip them
  });
  std::map<uint16_t, std::set<uint16_t>> cols;
  for (const auto& [key, members] : groups) {
    const std::vector<uint16_t> rows = spread(members, 64);
    for (uint16_t rep : spread(members, 3)) {
      std::vector<uint16_t> found;
      for (uint16_t c : by_size)
        if (is_rounding_tie(d, join(p, rep, c))) found.push_back(c);
      std::vector<uint16_t> pick(found.begin(), found.begin() + long(std::min<size_t>(2, found.size())));
      for (int k = 0; k < 2 && found.size() > 2; ++k) pick.push_back(found[2 + rng() % (found.size() - 2)]);
      for (uint16_t c : pick)
        for (int delta : {0, -1, 1}) add_column(cols, uint16_t(c + delta), rows);
    }
    (void)key;
  }
  TieSet t;
  t.node = node_text(p, p.combine() == ref::Combine::kAdd ? "in0 + in1" : "in0 * in1");
  t.columns = to_columns(cols, 64);
  count(p, t, [&](uint16_t a, uint16_t b) { return join(p, a, b); });
  return t;
}

/// Every first input whose activation lands at or next to a tie before its own rounding (then the nearest others, to
/// 512), times second inputs whose product keeps the rounding visible.
TieSet unary_ties(const ref::OpPlan& p, const std::string& what,
                  const std::function<float(uint16_t)>& unrounded, const std::vector<uint16_t>& in1s) {
  const ref::Dtype d = p.dtype();
  std::vector<std::pair<uint32_t, uint16_t>> by_units;
  for (uint32_t i = 0; i < 65536; ++i) by_units.push_back({units_from_tie(d, unrounded(uint16_t(i))), uint16_t(i)});
  std::stable_sort(by_units.begin(), by_units.end());
  std::vector<uint16_t> rows;
  for (const auto& [units, i] : by_units)
    if (units <= 1 || rows.size() < 512) rows.push_back(i);
    else break;
  TieSet t;
  t.node = node_text(p, what.c_str());
  for (uint16_t c : in1s) t.columns.push_back({c, rows});
  for (uint16_t i : rows) {
    const float v = unrounded(i);
    t.ties += is_rounding_tie(d, v) * in1s.size();
    t.near += is_near_rounding_tie(d, v) * in1s.size();
  }
  return t;
}

uint16_t pattern(ref::Dtype d, float v) { return ref::f32_to_half(d, v, ref::NanPolicy::kCudaCvtRn); }

}  // namespace

std::vector<TieSet> rounding_ties(const ref::OpPlan& p, uint64_t seed) {
  if (!p.tabulated())
    throw std::logic_error("audit: rounding_ties needs a 2-input plan; " + p.op().name + " takes " +
                           std::to_string(p.inputs()) + " inputs (tuple_ties)");
  std::mt19937_64 rng(seed);
  const ref::Dtype d = p.dtype();
  std::vector<TieSet> sets;
  sets.push_back(join_ties(p, rng));
  if (p.a_rounds()) {
    // Second inputs with several mantissa bits, so that a product differs when the first rounding is skipped.
    std::vector<uint16_t> in1s;
    for (float v : {1.5f, -1.25f, 3.0f, 0.75f, 1.0078125f, -2.5f}) in1s.push_back(pattern(d, v));
    while (in1s.size() < 10) {
      const uint16_t r = random_pattern(d, rng);
      const float v = ref::half_to_f32(d, r);
      if (std::isfinite(v) && v != 0.0f) in1s.push_back(r);
    }
    sets.push_back(unary_ties(p, "act(in0)", [&](uint16_t i) { return p.a_unrounded(i); }, in1s));
  }
  if (p.has_p()) {
    // The activation after the join: reach each T value t by in0 = t's widening partner and in1 = the join's
    // identity (+-0 for an add, 1 for a multiply), then keep the t nearest a tie.
    std::unordered_map<uint32_t, uint16_t> inverse_a;
    for (uint32_t i = 0; i < 65536; ++i) inverse_a.emplace(ref::f32_bits(p.a(uint16_t(i))), uint16_t(i));
    std::vector<uint16_t> identity;
    for (uint32_t i = 0; i < 65536; ++i) {
      const float b = p.b(uint16_t(i));
      if (p.combine() == ref::Combine::kAdd ? b == 0.0f : b == 1.0f) identity.push_back(uint16_t(i));
    }
    TieSet t = unary_ties(p, "act(round_T(in0 (+) in1))", [&](uint16_t tt) { return p.p_unrounded(tt); }, identity);
    // Rows hold the targets t; replace each by the first input that reaches it (those that none reaches are dropped).
    for (TieColumn& c : t.columns) {
      std::vector<uint16_t> in0;
      for (uint16_t tt : c.in0) {
        const auto it = inverse_a.find(ref::f32_bits(ref::half_to_f32(d, tt)));
        if (it != inverse_a.end()) in0.push_back(it->second);
      }
      c.in0 = in0;
    }
    sets.push_back(t);
  }
  return sets;
}

std::vector<InputTuple> extreme_tuples(ref::Dtype d, int n) {
  const std::vector<uint16_t> e = extreme_patterns(d);
  size_t total = 1;
  for (int i = 0; i < n; ++i) total *= e.size();
  std::vector<InputTuple> out(total, InputTuple{});
  for (size_t k = 0; k < total; ++k) {
    size_t rest = k;
    for (int i = n - 1; i >= 0; --i) {
      out[k][size_t(i)] = e[rest % e.size()];
      rest /= e.size();
    }
  }
  return out;
}

std::vector<InputTuple> random_tuples(ref::Dtype d, int n, size_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<InputTuple> out(count, InputTuple{});
  for (auto& t : out)
    for (int i = 0; i < n; ++i) t[size_t(i)] = random_pattern(d, rng);
  return out;
}

namespace {

/// The nodes of a plan's composition as the tie search sees them: which round to T, what they depend on, their text,
/// and their values (OpPlan::trace, the plan's own forward pass).
class NodeValues {
 public:
  explicit NodeValues(const ref::OpPlan& p) : p_(p), nodes_(p.op().contract(p.contract())->nodes) {}

  size_t size() const { return nodes_.size(); }
  const ref::Node& node(size_t n) const { return nodes_[n]; }
  /// Whether node n's result is rounded to T: a kHalf step, or the last node (the output is always in T).
  bool rounds(size_t n) const {
    const ref::Node& nd = nodes_[n];
    if (nd.op == ref::NodeOp::kInput || nd.op == ref::NodeOp::kConst) return false;
    return nd.precision == ref::Precision::kHalf || n + 1 == nodes_.size();
  }
  /// Bit i: node n depends on declared input i.
  uint32_t depends(size_t n) const { return ref::node_depends(nodes_, int(n)); }
  /// value[n]: node n as the next step sees it; raw[n]: its binary32 result before its own rounding.
  void eval(const uint16_t* in, float* value, float* raw) const { p_.trace(in, value, raw); }
  /// "round_T(gate * y)", "round_T(fmaf(x, 1 + scale, shift))": node n in words, with the rounding of the output.
  std::string text(size_t n) const {
    const std::string t = ref::node_text(p_.op(), nodes_, int(n));
    return rounds(n) && nodes_[n].precision != ref::Precision::kHalf ? "round_T(" + t + ")" : t;
  }
  /// The declared input that node n adds to the rest (an add with an input operand, an fma's input addend), or -1;
  /// `rest` gets the node of the other operand (an fma: -1, the rest is its product).
  int added_input(size_t n, int* rest) const {
    const ref::Node& nd = nodes_[n];
    auto input_of = [&](int k) { return k >= 0 && nodes_[size_t(k)].op == ref::NodeOp::kInput ? nodes_[size_t(k)].input : -1; };
    if (nd.op == ref::NodeOp::kAdd) {
      if (input_of(nd.a) >= 0) return *rest = nd.b, input_of(nd.a);
      if (input_of(nd.b) >= 0) return *rest = nd.a, input_of(nd.b);
    }
    if (nd.op == ref::NodeOp::kFma && input_of(nd.c) >= 0) return *rest = -1, input_of(nd.c);
    return -1;
  }

 private:
  const ref::OpPlan& p_;
  std::vector<ref::Node> nodes_;
};

}  // namespace

std::vector<TupleTieSet> tuple_ties(const ref::OpPlan& p, uint64_t seed) {
  const ref::Dtype d = p.dtype();
  const NodeValues nv(p);
  const int n_in = p.inputs();
  const size_t nn = nv.size();
  std::vector<float> value(nn), raw(nn);
  // Bases: random tuples finite at every node (a NaN or an infinity has no tie).
  constexpr size_t kBases = 24;
  std::vector<InputTuple> bases;
  for (const InputTuple& t : random_tuples(d, n_in, 4096, seed)) {
    nv.eval(t.data(), value.data(), raw.data());
    if (std::all_of(raw.begin(), raw.end(), [](float v) { return std::isfinite(v) && v != 0.0f; })) bases.push_back(t);
    if (bases.size() == kBases) break;
  }
  std::vector<TupleTieSet> sets;
  for (size_t n = 0; n < nn; ++n) {
    if (!nv.rounds(n)) continue;
    TupleTieSet set;
    set.node = nv.text(n) + " of " + p.op().name;
    std::set<InputTuple> seen;
    auto add = [&](const InputTuple& t) { return seen.insert(t).second ? (set.tuples.push_back(t), true) : false; };
    const uint32_t deps = nv.depends(n);
    for (const InputTuple& base : bases) {
      for (int i = 0; i < n_in; ++i) {
        if (!(deps >> i & 1u)) continue;
        // Every pattern of input i with the others at the base: up to 4 ties (spread over what the scan found) with
        // their pattern neighbours, and 2 near-ties.
        std::vector<uint16_t> ties, near;
        InputTuple t = base;
        for (uint32_t x = 0; x < 65536; ++x) {
          t[size_t(i)] = uint16_t(x);
          nv.eval(t.data(), value.data(), raw.data());
          if (is_rounding_tie(d, raw[n])) ties.push_back(uint16_t(x));
          else if (is_near_rounding_tie(d, raw[n])) near.push_back(uint16_t(x));
        }
        for (uint16_t x : spread(ties, 4))
          for (int delta : {0, -1, 1}) {
            t[size_t(i)] = uint16_t(x + delta);
            if (add(t)) ++(delta == 0 ? set.ties : set.near);
          }
        for (uint16_t x : spread(near, 2)) {
          t[size_t(i)] = x;
          if (add(t)) ++set.near;
        }
      }
      // Cancellation: the added input nearest minus the rest (x close to -gate * y), and its neighbours.
      int rest = -1;
      const int i = nv.added_input(n, &rest);
      if (i >= 0) {
        nv.eval(base.data(), value.data(), raw.data());
        const ref::Node& nd = nv.node(n);
        const double other = rest >= 0 ? double(value[size_t(rest)]) : double(value[size_t(nd.a)]) * double(value[size_t(nd.b)]);
        const uint16_t x = ref::f32_to_half(d, float(-other), ref::NanPolicy::kCudaCvtRn);
        InputTuple t = base;
        for (int delta : {0, -1, 1, -2, 2}) {
          t[size_t(i)] = uint16_t(x + delta);
          set.cancel += add(t);
        }
      }
    }
    sets.push_back(std::move(set));
  }
  return sets;
}

}  // namespace fuseproof::audit
