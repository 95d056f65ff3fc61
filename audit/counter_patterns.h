// counter_patterns.h: input patterns from a counter-based generator, identical on the host and the device, so a call
// of 2^31 elements is generated where it runs and regenerated where it is checked, never held twice.
#pragma once

#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define FUSEPROOF_HD __host__ __device__
#else
#define FUSEPROOF_HD
#endif

namespace fuseproof::audit {

/// Salt that separates the bias stream from the x stream of one seed.
inline constexpr uint64_t kBiasSalt = 0xB1A5B1A5B1A5B1A5ull;

/// splitmix64 of seed + i: every element its own independent draw.
FUSEPROOF_HD inline uint64_t counter_hash(uint64_t seed, uint64_t i) {
  uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// SplitMix64 as a generator (std::uniform_random_bit_generator): draw k is counter_hash(seed, k). Seeded per element
/// (counter_hash of a case's seed and the element's index), every element of every case is drawn on its own, on
/// any thread, in any order.
struct CounterRng {
  using result_type = uint64_t;
  uint64_t seed;
  uint64_t next = 0;
  static constexpr uint64_t min() { return 0; }
  static constexpr uint64_t max() { return ~uint64_t(0); }
  FUSEPROOF_HD uint64_t operator()() { return counter_hash(seed, next++); }
};

/// Pattern i of a stream: 1/2 activation-like (|v| in [2^-6, 8), both signs), 1/4 any 16 bits (NaN, Inf and
/// subnormals included), 1/8 small (|v| < 2^-6, zeros and subnormals included), 1/8 any finite normal.
///   bf16 | S |EEEEEEEE|MMMMMMM|   fp16 | S |EEEEE|MMMMMMMMMM|
/// counter_pattern for one dtype, its constants known at compile time (the divisions become multiplications, and a
/// run of patterns compiles without a branch on the dtype). Every case's exponent is computed and the pick selects by
/// masks, without a branch: the pick is a random draw, so branches on it mispredicted about half the time, and this
/// form regenerates a run about 2x faster on the host (the shapes class's reference values); the same patterns
/// (Audit_Inputs_both.CounterPatternsEqualTheirBranchingDefinition, property_tests/audit/audit_inputs_test.cpp,
/// checks them against the branching definition).
template <bool kBf16>
FUSEPROOF_HD inline uint16_t counter_pattern_of(uint64_t seed, uint64_t i) {
  const uint64_t h = counter_hash(seed, i);
  const uint32_t pick = uint32_t(h >> 61);          // 0..7
  const uint16_t any = uint16_t(h >> 16);
  const uint16_t sign = uint16_t((h >> 40) & 0x8000u);
  constexpr int bias = kBf16 ? 127 : 15, mbits = kBf16 ? 7 : 10, emax = kBf16 ? 254 : 30;
  const uint16_t mant = uint16_t((h >> 8) & ((1u << mbits) - 1));
  const uint32_t r = uint32_t(h >> 32);
  const uint32_t e_act = uint32_t(bias - 6) + r % 9u;   // pick 0..3: 2^-6 .. 2^2 binades, |v| in [2^-6, 8)
  const uint32_t e_small = r % uint32_t(bias - 6);      // pick 6: 0 (zero, subnormal) .. the 2^-7 binade
  const uint32_t e_normal = 1u + r % uint32_t(emax);    // pick 7: any normal binade
  const uint32_t e = (e_act & (0u - uint32_t(pick < 4))) | (e_small & (0u - uint32_t(pick == 6))) |
                     (e_normal & (0u - uint32_t(pick == 7)));
  const uint16_t v = uint16_t(sign | (uint16_t(e) << mbits) | mant);
  const uint16_t take_any = uint16_t(0u - uint32_t((pick >> 1) == 2));  // pick 4, 5: any 16 bits
  return uint16_t((any & take_any) | (v & ~take_any));
}

/// The weighted patterns of the audit's random calls (audit_inputs.h, random_pattern): 40% finite with |v| in
/// [2^-8, 16), 20% any bits, 15% one of `special` (extreme_patterns), 10% subnormal, 15% any finite normal. Drawn
/// from any generator; with CounterRng, the same element on the host and on the device.
template <bool kBf16, class Rng>
FUSEPROOF_HD inline uint16_t weighted_pattern_of(Rng& rng, const uint16_t* special, uint64_t specials) {
  constexpr int kMant = kBf16 ? 7 : 10, kBias = kBf16 ? 127 : 15;
  constexpr uint32_t kM = (1u << kMant) - 1, kBinades = (kBf16 ? 0x7F80u : 0x7C00u) >> kMant;  // 255 or 31
  const uint32_t pick = uint32_t(rng() % 100);
  const uint16_t sign = (rng() & 1) ? 0x8000 : 0;
  if (pick < 40) {
    const int e = -8 + int(rng() % 12);  // [2^-8, 16)
    return uint16_t(sign | (uint32_t(e + kBias) << kMant) | (rng() & kM));
  }
  if (pick < 60) return uint16_t(rng());
  if (pick < 75) return special[rng() % specials];
  if (pick < 85) return uint16_t(sign | (1 + rng() % kM));
  const uint32_t e = 1 + uint32_t(rng() % (kBinades - 1));
  return uint16_t(sign | (e << kMant) | (rng() & kM));
}

/// Element i of a weighted stream: weighted_pattern_of drawn from CounterRng{counter_hash(seed, i)} (what
/// fill_counter_random writes into element i of a buffer seeded `seed`).
FUSEPROOF_HD inline uint16_t weighted_pattern_at(bool bf16, uint64_t seed, uint64_t i, const uint16_t* special,
                                                 uint64_t specials) {
  CounterRng rng{counter_hash(seed, i)};
  return bf16 ? weighted_pattern_of<true>(rng, special, specials) : weighted_pattern_of<false>(rng, special, specials);
}

FUSEPROOF_HD inline uint16_t counter_pattern(bool bf16, uint64_t seed, uint64_t i) {
  return bf16 ? counter_pattern_of<true>(seed, i) : counter_pattern_of<false>(seed, i);
}

/// out[j] = counter_pattern(bf16, seed, first + j) for j in [0, n): a run, the dtype chosen once.
inline void counter_run(bool bf16, uint64_t seed, uint64_t first, size_t n, uint16_t* out) {
  if (bf16)
    for (size_t j = 0; j < n; ++j) out[j] = counter_pattern_of<true>(seed, first + j);
  else
    for (size_t j = 0; j < n; ++j) out[j] = counter_pattern_of<false>(seed, first + j);
}

}  // namespace fuseproof::audit
