// bit_patterns.cpp: class-based bit-pattern generation.
#include "property_tests/support/bit_patterns.h"

namespace fuseproof::test {

namespace {
struct Layout {
  uint16_t exp_mask, mant_mask, quiet_bit, inf;
  int mant_bits;
};
Layout layout(ref::Dtype d) {
  return d == ref::Dtype::kBf16 ? Layout{0x7F80, 0x007F, 0x0040, 0x7F80, 7} : Layout{0x7C00, 0x03FF, 0x0200, 0x7C00, 10};
}
}  // namespace

uint16_t half_of_class(ref::Dtype d, HalfClass c, uint32_t e) {
  const Layout L = layout(d);
  const uint16_t sign = (e & 1u) ? 0x8000 : 0;
  e >>= 1;
  const uint16_t mant = uint16_t(e & L.mant_mask);
  const uint16_t exp_max = uint16_t(L.exp_mask >> L.mant_bits);  // all-ones exponent
  switch (c) {
    case HalfClass::kZero: return sign;
    case HalfClass::kSubnormal: return uint16_t(sign | (mant ? mant : 1));
    case HalfClass::kNormal: {
      const uint16_t ex = uint16_t(1 + (e >> 10) % (exp_max - 1));
      return uint16_t(sign | (ex << L.mant_bits) | mant);
    }
    case HalfClass::kNearOverflow: {
      // The top few finite patterns: largest finite and its neighbours.
      return uint16_t(sign | (L.inf - 1 - (e % 4)));
    }
    case HalfClass::kInf: return uint16_t(sign | L.inf);
    case HalfClass::kQuietNan: return uint16_t(sign | L.inf | L.quiet_bit | (mant & (L.quiet_bit - 1)));
    case HalfClass::kSignalingNan: {
      const uint16_t payload = uint16_t(mant & (L.quiet_bit - 1));
      return uint16_t(sign | L.inf | (payload ? payload : 1));
    }
    case HalfClass::kTieNeighbour: {
      // Patterns whose sum with a small power-of-two bias lands on or next to a rounding tie: low mantissa bits set.
      const uint16_t ex = uint16_t(1 + (e >> 10) % (exp_max - 1));
      const uint16_t low = uint16_t((e >> 20) % 3);  // ...0, ...1, ...2 around the tie point
      return uint16_t(sign | (ex << L.mant_bits) | ((L.mant_mask & ~3u) | low));
    }
    case HalfClass::kAny: return uint16_t(e);
  }
  return 0;
}

rc::Gen<uint16_t> gen_half_bits_of(ref::Dtype d, HalfClass c) {
  return rc::gen::map(rc::gen::arbitrary<uint32_t>(), [d, c](uint32_t e) { return half_of_class(d, c, e); });
}

rc::Gen<uint16_t> gen_half_bits(ref::Dtype d) {
  return rc::gen::weightedOneOf<uint16_t>({
      {2, gen_half_bits_of(d, HalfClass::kZero)},
      {3, gen_half_bits_of(d, HalfClass::kSubnormal)},
      {8, gen_half_bits_of(d, HalfClass::kNormal)},
      {2, gen_half_bits_of(d, HalfClass::kNearOverflow)},
      {1, gen_half_bits_of(d, HalfClass::kInf)},
      {1, gen_half_bits_of(d, HalfClass::kQuietNan)},
      {1, gen_half_bits_of(d, HalfClass::kSignalingNan)},
      {3, gen_half_bits_of(d, HalfClass::kTieNeighbour)},
      {4, gen_half_bits_of(d, HalfClass::kAny)},
  });
}

rc::Gen<uint16_t> gen_finite_half_bits(ref::Dtype d) {
  return rc::gen::suchThat(gen_half_bits(d), [d](uint16_t h) {
    return (h & 0x7FFF) < (d == ref::Dtype::kBf16 ? 0x7F80 : 0x7C00);
  });
}

rc::Gen<uint32_t> gen_f32_bits() {
  auto with_sign = [](rc::Gen<uint32_t> g) {
    return rc::gen::map(rc::gen::pair(g, rc::gen::arbitrary<bool>()),
                        [](std::pair<uint32_t, bool> p) { return p.first | (p.second ? 0x80000000u : 0u); });
  };
  auto in = [](uint32_t lo, uint32_t hi) { return rc::gen::inRange<uint32_t>(lo, hi); };
  // Ties for bf16 (low 16 bits = 0x8000) and fp16 normals (low 13 bits = 0x1000), and one ulp either side.
  auto tie = rc::gen::map(rc::gen::tuple(in(0x00800000u, 0x7F800000u), in(0u, 2u), rc::gen::arbitrary<bool>()),
                          [](std::tuple<uint32_t, uint32_t, bool> t) {
                            const auto [base, delta, bf] = t;
                            const uint32_t tie_bits = bf ? ((base & 0xFFFF0000u) | 0x8000u) : ((base & 0xFFFFE000u) | 0x1000u);
                            return tie_bits + delta - 1u;  // tie - 1, tie, tie + 1
                          });
  return with_sign(rc::gen::weightedOneOf<uint32_t>({
      {1, rc::gen::just(0u)},
      {3, in(1u, 0x00800000u)},                  // binary32 subnormals
      {6, in(0x00800000u, 0x7F800000u)},          // normals
      {3, in(0x33000000u, 0x38800000u)},          // fp16 subnormal range and its lower edge (2^-25 .. 2^-14)
      {2, in(0x477FE000u, 0x47800100u)},          // around fp16 overflow (65504 .. 65536)
      {2, in(0x7F7F0000u, 0x7F800000u)},          // around bf16 overflow
      {5, tie},
      {1, rc::gen::just(0x7F800000u)},            // Inf
      {2, in(0x7FC00000u, 0x80000000u)},          // quiet NaN with payloads
      {2, in(0x7F800001u, 0x7FC00000u)},          // signalling NaN with payloads
  }));
}

std::vector<uint16_t> special_half_patterns(ref::Dtype d) {
  std::vector<uint16_t> v;
  for (int c = 0; c <= int(HalfClass::kTieNeighbour); ++c)
    for (uint32_t e : {0u, 1u, 2u, 3u, 0x12345u, 0xABCDEFu, 0xFFFFFFFFu}) v.push_back(half_of_class(d, HalfClass(c), e));
  return v;
}

}  // namespace fuseproof::test
