// bit_patterns.cpp: class-based bit-pattern generation.
#include "property_tests/support/bit_patterns.h"

#include <cstring>
#include <tuple>

namespace fuseproof::test {

namespace {

/// The fields of a 16-bit format:  | S |EEEEEEEE|MMMMMMM| (bf16)  | S |EEEEE|MMMMMMMMMM| (fp16).
struct Layout {
  uint16_t exp_mask, mant_mask, quiet_bit, inf;
  int mant_bits;  // p
  int bias;       // exponent bias: 127 or 15
  int exp_max() const { return exp_mask >> mant_bits; }
  int emin() const { return 1 - bias; }  // smallest normal exponent
  int emax() const { return exp_max() - 1 - bias; }
};
Layout layout(ref::Dtype d) {
  return d == ref::Dtype::kBf16 ? Layout{0x7F80, 0x007F, 0x0040, 0x7F80, 7, 127}
                                : Layout{0x7C00, 0x03FF, 0x0200, 0x7C00, 10, 15};
}

/// Uniform over [lo, hi) at every rapidcheck size (inRange alone is scaled down by size); shrinks towards lo.
template <class T>
rc::Gen<T> uniform(T lo, T hi) {
  return rc::gen::resize(rc::kNominalSize, rc::gen::inRange<T>(lo, hi));
}

rc::Gen<uint32_t> gen_sign_bit() { return uniform<uint32_t>(0, 2); }

/// The pattern of sign * j * 2^q, which the callers guarantee is exact: j < 2^(p+1), q >= emin - p.
uint16_t encode(const Layout& L, uint32_t sign, uint32_t j, int q) {
  const uint16_t s = sign ? 0x8000 : 0;
  if (j == 0) return s;
  int n = 0;  // bit width of j
  while ((j >> n) != 0) ++n;
  const int e = n - 1 + q;
  if (e >= L.emin())
    return uint16_t(s | ((e + L.bias) << L.mant_bits) | ((j << (L.mant_bits + 1 - n)) & L.mant_mask));
  return uint16_t(s | (j << (q - (L.emin() - L.mant_bits))));  // subnormal: multiples of 2^(emin - p)
}

/// x + bias = (M + 1/2) ulp(E), with sign s: x = (M - k) ulp, bias = (2k + 1) ulp / 2 (p+1 significant bits at most,
/// exponent at least emin - p, so both are exact), in the order given by `swap`.
std::pair<uint16_t, uint16_t> tie_pair(const Layout& L, uint32_t s, int e, uint32_t m, uint32_t k, bool swap) {
  const int p = L.mant_bits;
  const uint16_t x = encode(L, s, m - k, e - p), b = encode(L, s, 2 * k + 1, e - p - 1);
  return swap ? std::pair(b, x) : std::pair(x, b);
}

using Tie = std::tuple<uint32_t, int, uint32_t, uint32_t, bool>;  // sign, binade E, M, k, swap

rc::Gen<Tie> gen_tie(const Layout& L) {
  const uint32_t two_p = 1u << L.mant_bits;
  return rc::gen::tuple(gen_sign_bit(), uniform<int>(L.emin() + 1, L.emax() + 1), uniform<uint32_t>(two_p, 2 * two_p),
                        uniform<uint32_t>(0, two_p), rc::gen::map(uniform<int>(0, 2), [](int v) { return v == 1; }));
}

}  // namespace

const char* half_class_name(HalfClass c) {
  switch (c) {
    case HalfClass::kZero: return "zero";
    case HalfClass::kSubnormal: return "subnormal";
    case HalfClass::kNormal: return "normal";
    case HalfClass::kNearOverflow: return "near-overflow";
    case HalfClass::kInf: return "inf";
    case HalfClass::kQuietNan: return "quiet-nan";
    case HalfClass::kSignalingNan: return "signalling-nan";
    case HalfClass::kAny: return "any";
  }
  return "?";
}

uint16_t half_of_class(ref::Dtype d, HalfClass c, uint32_t e) {
  const Layout L = layout(d);
  const uint16_t sign = (e & 1u) ? 0x8000 : 0;
  e >>= 1;
  const uint16_t mant = uint16_t(e & L.mant_mask);
  switch (c) {
    case HalfClass::kZero: return sign;
    case HalfClass::kSubnormal: return uint16_t(sign | (mant ? mant : 1));
    case HalfClass::kNormal: {
      const uint16_t ex = uint16_t(1 + (e >> 10) % (L.exp_max() - 1));
      return uint16_t(sign | (ex << L.mant_bits) | mant);
    }
    case HalfClass::kNearOverflow: return uint16_t(sign | (L.inf - 1 - (e % 4)));  // largest finite and neighbours
    case HalfClass::kInf: return uint16_t(sign | L.inf);
    case HalfClass::kQuietNan: return uint16_t(sign | L.inf | L.quiet_bit | (mant & (L.quiet_bit - 1)));
    case HalfClass::kSignalingNan: {
      const uint16_t payload = uint16_t(mant & (L.quiet_bit - 1));
      return uint16_t(sign | L.inf | (payload ? payload : 1));
    }
    case HalfClass::kAny: return uint16_t(e);
  }
  return 0;
}

rc::Gen<uint16_t> gen_half_bits_of(ref::Dtype d, HalfClass c) {
  const Layout L = layout(d);
  auto signed_ = [](rc::Gen<uint32_t> magnitude) {
    return rc::gen::apply([](uint32_t s, uint32_t m) { return uint16_t((s << 15) | m); }, gen_sign_bit(), magnitude);
  };
  switch (c) {
    case HalfClass::kZero: return signed_(rc::gen::just(0u));
    case HalfClass::kSubnormal: return signed_(uniform<uint32_t>(1, L.mant_mask + 1u));
    case HalfClass::kNormal:
      return signed_(rc::gen::apply([L](uint32_t ex, uint32_t m) { return (ex << L.mant_bits) | m; },
                                    uniform<uint32_t>(1, uint32_t(L.exp_max())), uniform<uint32_t>(0, L.mant_mask + 1u)));
    case HalfClass::kNearOverflow:
      return signed_(rc::gen::map(uniform<uint32_t>(0, 4), [L](uint32_t k) { return uint32_t(L.inf - 1 - k); }));
    case HalfClass::kInf: return signed_(rc::gen::just(uint32_t(L.inf)));
    case HalfClass::kQuietNan:
      return signed_(rc::gen::map(uniform<uint32_t>(0, L.quiet_bit),
                                  [L](uint32_t payload) { return uint32_t(L.inf | L.quiet_bit | payload); }));
    case HalfClass::kSignalingNan:
      return signed_(
          rc::gen::map(uniform<uint32_t>(1, L.quiet_bit), [L](uint32_t payload) { return uint32_t(L.inf | payload); }));
    case HalfClass::kAny: return rc::gen::cast<uint16_t>(uniform<uint32_t>(0, 65536));
  }
  return rc::gen::just(uint16_t(0));
}

rc::Gen<uint16_t> gen_half_bits(ref::Dtype d) {
  return rc::gen::weightedOneOf<uint16_t>({
      {2, gen_half_bits_of(d, HalfClass::kZero)},
      {3, gen_half_bits_of(d, HalfClass::kSubnormal)},
      {10, gen_half_bits_of(d, HalfClass::kNormal)},
      {2, gen_half_bits_of(d, HalfClass::kNearOverflow)},
      {1, gen_half_bits_of(d, HalfClass::kInf)},
      {1, gen_half_bits_of(d, HalfClass::kQuietNan)},
      {1, gen_half_bits_of(d, HalfClass::kSignalingNan)},
      {4, gen_half_bits_of(d, HalfClass::kAny)},
  });
}

rc::Gen<std::pair<uint16_t, uint16_t>> gen_half_pair_of(ref::Dtype d, PairClass c) {
  const Layout L = layout(d);
  switch (c) {
    case PairClass::kExactTie:
      return rc::gen::map(gen_tie(L), [L](const Tie& t) {
        const auto [s, e, m, k, swap] = t;
        return tie_pair(L, s, e, m, k, swap);
      });
    case PairClass::kTieNeighbour:
      return rc::gen::apply(
          [L](const Tie& t, int up) {
            const auto [s, e, m, k, swap] = t;
            auto [x, b] = tie_pair(L, s, e, m, k, false);
            // One bias ulp up or down in magnitude (never down to zero, which would make the sum x itself).
            const uint16_t mag = b & 0x7FFF;
            b = uint16_t((b & 0x8000) | (up || mag == 1 ? mag + 1 : mag - 1));
            return swap ? std::pair(b, x) : std::pair(x, b);
          },
          gen_tie(L), uniform<int>(0, 2));
    case PairClass::kIndependent: return rc::gen::pair(gen_half_bits(d), gen_half_bits(d));
  }
  return rc::gen::just(std::pair<uint16_t, uint16_t>(0, 0));
}

rc::Gen<std::pair<uint16_t, uint16_t>> gen_half_pair(ref::Dtype d) {
  return rc::gen::weightedOneOf<std::pair<uint16_t, uint16_t>>({
      {3, gen_half_pair_of(d, PairClass::kExactTie)},
      {2, gen_half_pair_of(d, PairClass::kTieNeighbour)},
      {5, gen_half_pair_of(d, PairClass::kIndependent)},
  });
}

rc::Gen<std::pair<uint16_t, uint16_t>> gen_finite_half_pair(ref::Dtype d) {
  const uint16_t inf = layout(d).inf;
  return rc::gen::suchThat(gen_half_pair(d), [inf](const std::pair<uint16_t, uint16_t>& p) {
    return (p.first & 0x7FFF) < inf && (p.second & 0x7FFF) < inf;
  });
}

rc::Gen<uint32_t> gen_f32_bits_of(F32Class c) {
  auto signed_ = [](rc::Gen<uint32_t> magnitude) {
    return rc::gen::apply([](uint32_t s, uint32_t m) { return (s << 31) | m; }, gen_sign_bit(), magnitude);
  };
  // The tie itself, or one binary32 ulp below or above it.
  auto offset = [](rc::Gen<uint32_t> tie) {
    return rc::gen::apply([](uint32_t t, uint32_t delta) { return t + delta - 1u; }, tie, uniform<uint32_t>(0, 3));
  };
  switch (c) {
    case F32Class::kZero: return signed_(rc::gen::just(0u));
    case F32Class::kSubnormal: return signed_(uniform<uint32_t>(1, 0x00800000u));
    case F32Class::kNormal:
      return signed_(rc::gen::apply([](uint32_t ex, uint32_t m) { return (ex << 23) | m; }, uniform<uint32_t>(1, 255),
                                    uniform<uint32_t>(0, 0x00800000u)));
    case F32Class::kFp16SubnormalRange: return signed_(uniform<uint32_t>(0x33000000u, 0x38800000u));
    case F32Class::kNearFp16Overflow: return signed_(uniform<uint32_t>(0x477FE000u, 0x47800100u));
    case F32Class::kNearBf16Overflow: return signed_(uniform<uint32_t>(0x7F7F0000u, 0x7F800000u));
    case F32Class::kBf16Tie:
      // Low 16 bits 0x8000 in any binade, binary32 subnormals (bf16's subnormals) included.
      return signed_(offset(rc::gen::apply([](uint32_t ex, uint32_t m) { return (ex << 23) | (m << 16) | 0x8000u; },
                                           uniform<uint32_t>(0, 255), uniform<uint32_t>(0, 128))));
    case F32Class::kFp16Tie: {
      // fp16 normals (binary32 exponents 113..142, 2^-14 .. 2^15: low 13 bits 0x1000), or fp16 subnormals:
      // (m + 1/2) 2^-24, exact in binary32.
      auto normal = rc::gen::apply([](uint32_t ex, uint32_t m) { return (ex << 23) | (m << 13) | 0x1000u; },
                                   uniform<uint32_t>(113, 143), uniform<uint32_t>(0, 1024));
      auto subnormal = rc::gen::map(uniform<uint32_t>(0, 1024), [](uint32_t m) {
        const float f = float(2 * m + 1) * 0x1p-25f;
        uint32_t u;
        std::memcpy(&u, &f, sizeof u);
        return u;
      });
      return signed_(offset(rc::gen::oneOf(normal, subnormal)));
    }
    case F32Class::kInf: return signed_(rc::gen::just(0x7F800000u));
    case F32Class::kQuietNan: return signed_(uniform<uint32_t>(0x7FC00000u, 0x80000000u));
    case F32Class::kSignalingNan: return signed_(uniform<uint32_t>(0x7F800001u, 0x7FC00000u));
  }
  return rc::gen::just(0u);
}

rc::Gen<uint32_t> gen_f32_bits() {
  return rc::gen::weightedOneOf<uint32_t>({
      {1, gen_f32_bits_of(F32Class::kZero)},
      {3, gen_f32_bits_of(F32Class::kSubnormal)},
      {6, gen_f32_bits_of(F32Class::kNormal)},
      {3, gen_f32_bits_of(F32Class::kFp16SubnormalRange)},
      {2, gen_f32_bits_of(F32Class::kNearFp16Overflow)},
      {2, gen_f32_bits_of(F32Class::kNearBf16Overflow)},
      {3, gen_f32_bits_of(F32Class::kBf16Tie)},
      {3, gen_f32_bits_of(F32Class::kFp16Tie)},
      {1, gen_f32_bits_of(F32Class::kInf)},
      {2, gen_f32_bits_of(F32Class::kQuietNan)},
      {2, gen_f32_bits_of(F32Class::kSignalingNan)},
  });
}

std::vector<uint16_t> special_half_patterns(ref::Dtype d) {
  std::vector<uint16_t> v;
  for (HalfClass c : kAllHalfClasses) {
    if (c == HalfClass::kAny) continue;
    for (uint32_t e : {0u, 1u, 2u, 3u, 0x12345u, 0xABCDEFu, 0xFFFFFFFFu}) v.push_back(half_of_class(d, c, e));
  }
  return v;
}

}  // namespace fuseproof::test
