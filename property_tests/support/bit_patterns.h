// bit_patterns.h: rapidcheck generators of 16-bit and 32-bit float BIT PATTERNS by class (never rc's float values).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include <rapidcheck.h>

#include "reference/dtype.h"

namespace fuseproof::test {

// Every generator here draws its class from a fixed weight table and each field of the class (sign, exponent,
// mantissa, payload) uniformly over its whole range, whatever rapidcheck's size: rapidcheck scales inRange and
// arbitrary by size, which at small sizes yields only tiny exponents and the first of each range. The fields
// still shrink (towards the smallest exponent, a zero mantissa, a positive sign), so a counterexample minimises.

/// Classes of one 16-bit pattern; rapidcheck's own float generator yields no NaN, Inf or subnormal, so it is not used.
enum class HalfClass : int { kZero, kSubnormal, kNormal, kNearOverflow, kInf, kQuietNan, kSignalingNan, kAny };
inline constexpr HalfClass kAllHalfClasses[] = {HalfClass::kZero,     HalfClass::kSubnormal,   HalfClass::kNormal,
                                                HalfClass::kNearOverflow, HalfClass::kInf,    HalfClass::kQuietNan,
                                                HalfClass::kSignalingNan, HalfClass::kAny};
const char* half_class_name(HalfClass c);

/// One pattern of the class, either sign, from `entropy` (deterministic; for seeded fills and special values).
uint16_t half_of_class(ref::Dtype d, HalfClass c, uint32_t entropy);

/// A pattern of a fixed class (kAny: uniformly random bits).
rc::Gen<uint16_t> gen_half_bits_of(ref::Dtype d, HalfClass c);
/// A pattern of dtype d: every class weighted.
rc::Gen<uint16_t> gen_half_bits(ref::Dtype d);

/// Classes of an (x, bias) pair.
enum class PairClass : int {
  kExactTie,      ///< x + bias lies exactly halfway between two consecutive patterns of the dtype
  kTieNeighbour,  ///< bias one of its own ulps from a kExactTie bias: the sum just misses the tie, either side
  kIndependent,   ///< x and bias drawn independently by gen_half_bits
};
inline constexpr PairClass kAllPairClasses[] = {PairClass::kExactTie, PairClass::kTieNeighbour, PairClass::kIndependent};

/// (x, bias) of a fixed class. Ties cover every binade of the sum where a tie between two sums of the dtype can exist
/// (all normal binades but the lowest: below it every sum is exact), either sign, x and bias in either order.
rc::Gen<std::pair<uint16_t, uint16_t>> gen_half_pair_of(ref::Dtype d, PairClass c);
/// (x, bias) of dtype d: every pair class weighted.
rc::Gen<std::pair<uint16_t, uint16_t>> gen_half_pair(ref::Dtype d);
/// gen_half_pair with both finite (for properties that exclude NaN and Inf).
rc::Gen<std::pair<uint16_t, uint16_t>> gen_finite_half_pair(ref::Dtype d);

/// Classes of a binary32 pattern: those that decide narrowing to bf16 and fp16.
enum class F32Class : int {
  kZero, kSubnormal, kNormal,
  kFp16SubnormalRange,  ///< 2^-25 .. 2^-14: fp16's subnormals and their lower edge
  kNearFp16Overflow,    ///< 65504 .. 65536
  kNearBf16Overflow,    ///< bf16's largest finite .. Inf
  kBf16Tie,             ///< exactly halfway between two bf16 patterns, or one binary32 ulp either side
  kFp16Tie,             ///< exactly halfway between two fp16 patterns (normal or subnormal), or one ulp either side
  kInf, kQuietNan, kSignalingNan,
};
inline constexpr F32Class kAllF32Classes[] = {
    F32Class::kZero,     F32Class::kSubnormal, F32Class::kNormal, F32Class::kFp16SubnormalRange,
    F32Class::kNearFp16Overflow, F32Class::kNearBf16Overflow, F32Class::kBf16Tie, F32Class::kFp16Tie,
    F32Class::kInf,      F32Class::kQuietNan,  F32Class::kSignalingNan};

/// binary32 patterns of a fixed class, either sign.
rc::Gen<uint32_t> gen_f32_bits_of(F32Class c);
/// binary32 patterns: every class weighted.
rc::Gen<uint32_t> gen_f32_bits();

/// The special patterns of a dtype, each class at least once (for "special values first" sweeps).
std::vector<uint16_t> special_half_patterns(ref::Dtype d);

}  // namespace fuseproof::test
