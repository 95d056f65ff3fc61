// audit_inputs.h: the audit's input sets: special patterns, rounding ties, weighted random patterns, domain biases.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "reference/dtype.h"

namespace fuseproof::audit {

/// +-0, subnormals (min, max, middle), min normal, +-0.5, 1, 2, 3, values where GELU turns (-0.75, -3, -5, -10),
/// where tanh saturates (9, 10), max finite, +-Inf, quiet and signalling NaN with payloads, 0x7FFF and 0xFFFF.
std::vector<uint16_t> extreme_patterns(ref::Dtype d);

/// Biases b with |b| = half an ulp of every x in binade `e` (x + b is a rounding tie), and b's two neighbours
/// (just below and just above the tie), both signs; empty when half an ulp is not representable.
std::vector<uint16_t> tie_biases(ref::Dtype d, int e);
/// Every pattern of binade e (unbiased exponent), both signs.
std::vector<uint16_t> binade_patterns(ref::Dtype d, int e);
/// The normal binades of the dtype: [-126, 127] for bf16, [-14, 15] for fp16.
int min_normal_exponent(ref::Dtype d);
int max_exponent(ref::Dtype d);

/// A weighted random pattern: 40% finite with |v| in [2^-8, 16) (where GELU bends), 20% any bits, 15% a special,
/// 10% subnormal, 15% any finite normal.
uint16_t random_pattern(ref::Dtype d, std::mt19937_64& rng);

/// The biases the CPU domain subset covers, sorted and distinct: every extreme pattern, one pattern from each binade
/// and sign (both zeros and the subnormal range included), then uniform random patterns up to `count`.
std::vector<uint16_t> domain_subset_biases(ref::Dtype d, uint32_t count, uint64_t seed);

}  // namespace fuseproof::audit
