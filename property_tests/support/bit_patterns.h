// bit_patterns.h: rapidcheck generators of 16-bit and 32-bit float BIT PATTERNS by class (never rc's float values).
#pragma once

#include <cstdint>
#include <vector>

#include <rapidcheck.h>

#include "reference/dtype.h"

namespace fuseproof::test {

/// Classes of 16-bit patterns; rapidcheck's own float generator yields no NaN, Inf or subnormal, so it is not used.
enum class HalfClass : int {
  kZero, kSubnormal, kNormal, kNearOverflow, kInf, kQuietNan, kSignalingNan, kTieNeighbour, kAny,
};

/// One pattern of the class, either sign.
uint16_t half_of_class(ref::Dtype d, HalfClass c, uint32_t entropy);

/// A pattern of dtype d: every class weighted, plus uniformly random bits.
rc::Gen<uint16_t> gen_half_bits(ref::Dtype d);
/// A pattern of a fixed class.
rc::Gen<uint16_t> gen_half_bits_of(ref::Dtype d, HalfClass c);
/// Finite, non-NaN patterns only (for properties that exclude NaN).
rc::Gen<uint16_t> gen_finite_half_bits(ref::Dtype d);

/// binary32 patterns by class: zeros, subnormals, normals, exact ties and their neighbours for both 16-bit formats,
/// near the fp16/bf16 overflow thresholds, Inf, quiet and signalling NaN with payloads.
rc::Gen<uint32_t> gen_f32_bits();

/// The special patterns of a dtype, each class at least once (for "special values first" sweeps).
std::vector<uint16_t> special_half_patterns(ref::Dtype d);

}  // namespace fuseproof::test
