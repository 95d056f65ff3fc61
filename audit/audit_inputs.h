// audit_inputs.h: the audit's input sets: special patterns, ties and near-ties at every rounding node of an op's
// plan, weighted random patterns, the domain's second inputs.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "reference/dtype.h"
#include "reference/op_plan.h"

namespace fuseproof::audit {

/// +-0, subnormals (min, max, middle), min normal, +-0.5, 1, 2, 3, values where GELU turns (-0.75, -3, -5, -10),
/// where tanh saturates (9, 10), max finite, +-Inf, quiet and signalling NaN with payloads, 0x7FFF and 0xFFFF.
std::vector<uint16_t> extreme_patterns(ref::Dtype d);

/// Every pattern of binade e (unbiased exponent), both signs.
std::vector<uint16_t> binade_patterns(ref::Dtype d, int e);
/// The normal binades of the dtype: [-126, 127] for bf16, [-14, 15] for fp16.
int min_normal_exponent(ref::Dtype d);
int max_exponent(ref::Dtype d);

/// A weighted random pattern: 40% finite with |v| in [2^-8, 16) (where the activations bend), 20% any bits, 15% a
/// special, 10% subnormal, 15% any finite normal.
uint16_t random_pattern(ref::Dtype d, std::mt19937_64& rng);

/// The second inputs the CPU domain subset covers, sorted and distinct: every extreme pattern, one pattern from each
/// binade and sign (both zeros and the subnormal range included), then uniform random patterns up to `count`.
std::vector<uint16_t> domain_subset_biases(ref::Dtype d, uint32_t count, uint64_t seed);

/// Whether a binary32 value lies exactly halfway between two neighbours of the dtype (a tie of round_T), or one
/// binary32 unit from such a point.
bool is_rounding_tie(ref::Dtype d, float v);
bool is_near_rounding_tie(ref::Dtype d, float v);

/// One column of a tie set: a second input and the first inputs that go with it down the rows.
struct TieColumn {
  uint16_t in1;
  std::vector<uint16_t> in0;
};

/// The rounding nodes of `plan`, each as columns of (in0, in1) pairs that put it at or next to a tie, in words:
struct TieSet {
  std::string node;               ///< "round_T(x + bias)", "round_T(silu(gate))", ...
  std::vector<TieColumn> columns;
  uint64_t ties = 0;              ///< pairs whose value at the node is exactly a tie
  uint64_t near = 0;              ///< pairs one unit (of the value, or of an input pattern) from a tie
};

/// Ties and near-ties at every rounding node of the plan (its joining step; the first input's activation when it
/// rounds; the activation after the join), found by scanning the plan's tables; `seed` picks among equals.
std::vector<TieSet> rounding_ties(const ref::OpPlan& plan, uint64_t seed);

}  // namespace fuseproof::audit
