// audit_inputs.h: the audit's input sets: special patterns, ties and near-ties at every rounding node of an op's
// plan, weighted random patterns, the domain's second inputs.
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "audit/counter_patterns.h"
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
/// The same weights drawn from a counter-based generator (audit/counter_patterns.h): one element's own stream.
uint16_t random_pattern(ref::Dtype d, CounterRng& rng);

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
/// rounds; the activation after the join), found by scanning the plan's tables; `seed` picks among equals. 2-input
/// plans only (the tables are their tabulated form); ops of more inputs: tuple_ties.
std::vector<TieSet> rounding_ties(const ref::OpPlan& plan, uint64_t seed);

/// The declared inputs of one case, in order (entries past the op's count unused).
using InputTuple = std::array<uint16_t, ref::kMaxOpInputs>;

/// Every tuple of n extreme patterns, one in each slot (the last input fastest): extreme_patterns(d).size()^n tuples
/// (38^3 = 54,872 for 3 inputs).
std::vector<InputTuple> extreme_tuples(ref::Dtype d, int n);

/// `count` tuples of n weighted random patterns (random_pattern), from `seed`: the same tuples for the same seed.
std::vector<InputTuple> random_tuples(ref::Dtype d, int n, size_t count, uint64_t seed);

/// Tuples that put one rounding node of a composition at or next to a tie of round_T.
struct TupleTieSet {
  std::string node;                 ///< "round_T(gate * y) of gated_residual"
  std::vector<InputTuple> tuples;
  uint64_t ties = 0;                ///< tuples whose binary32 value at the node is exactly a tie
  uint64_t near = 0;                ///< one unit (of the value, or of an input pattern) from a tie
  uint64_t cancel = 0;              ///< an added input set to the pattern nearest minus the rest, and its neighbours
};

/// For every rounding node of the plan's composition (each kHalf node, and the last node, whose rounding to T gives
/// the output: an fma contract's one rounding): from random base tuples (finite at every node), every pattern of one
/// input the node depends on scanned with the others fixed, keeping those whose binary32 value at the node is a tie
/// or one unit from one (and the tie's pattern neighbours); where the node adds a declared input (an add, or an
/// fma's addend), that input set to the T pattern nearest minus the rest and its two neighbours on each side
/// (cancellation). Op-generic: it reads only the composition's nodes. `seed` draws the bases.
std::vector<TupleTieSet> tuple_ties(const ref::OpPlan& plan, uint64_t seed);

}  // namespace fuseproof::audit
