// correct_rounding.cpp: binary64 evaluation with an error bound, MPFR where the bound does not decide the rounding.
#include "audit/correct_rounding.h"

#include <mpfr.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <stdexcept>

#include "reference/half_codec.h"

namespace fuseproof::audit {

namespace {

constexpr uint16_t kNan = 0x7FFF;

struct Format {
  int p;       // significand bits with the hidden one
  int emin;    // exponent of the smallest normal
  int emax;    // exponent of the largest binade
};
Format format(ref::Dtype d) { return d == ref::Dtype::kBf16 ? Format{8, -126, 127} : Format{11, -14, 15}; }

/// The dtype's pattern of an exactly representable value v (or +-0, +-inf).
uint16_t bits_of_exact(ref::Dtype d, double v) {
  // A value of the dtype is a binary32 value too; the narrowing of an exact value rounds nothing.
  return ref::f32_to_half(d, float(v), ref::NanPolicy::kCudaCvtRn);
}

/// Round to nearest even into the dtype, with its subnormals and its overflow to infinity.
double round_to_half(ref::Dtype d, double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  const Format f = format(d);
  int e;
  std::frexp(v, &e);  // |v| in [2^(e-1), 2^e)
  const int exp = std::max(e - 1, f.emin);
  const double q = std::ldexp(1.0, exp - f.p + 1);
  const double r = std::nearbyint(v / q) * q;  // v / q is exact: a power-of-two scaling within binary64's range
  const double max = std::ldexp(2.0 - std::ldexp(1.0, 1 - f.p), f.emax);
  if (std::fabs(r) > max) return std::copysign(INFINITY, v);
  return r;
}

/// The value of a finite pattern, or +-inf.
double value_of(ref::Dtype d, uint16_t h) { return ref::half_to_f32(d, h); }

/// The next pattern toward +inf and toward -inf of a non-NaN pattern (+0 and -0 as one point).
uint16_t next_up(ref::Dtype d, uint16_t h) {
  const uint16_t inf = d == ref::Dtype::kBf16 ? 0x7F80 : 0x7C00;
  if (h == 0x8000 || h == 0x0000) return 0x0001;
  if (h & 0x8000) return uint16_t(h - 1);
  return h == inf ? h : uint16_t(h + 1);
}
uint16_t next_down(ref::Dtype d, uint16_t h) {
  const uint16_t inf = d == ref::Dtype::kBf16 ? 0x7F80 : 0x7C00;
  if (h == 0x8000 || h == 0x0000) return 0x8001;
  if (h & 0x8000) return h == uint16_t(0x8000 | inf) ? h : uint16_t(h + 1);
  return uint16_t(h - 1);
}

/// The boundary between two neighbouring patterns a < b (b may be +inf, a may be -inf: the overflow threshold, the
/// largest finite value plus half its spacing).
double boundary(ref::Dtype d, uint16_t a, uint16_t b) {
  const double va = value_of(d, a), vb = value_of(d, b);
  if (std::isinf(vb)) return va + (va - value_of(d, next_down(d, a))) / 2;
  if (std::isinf(va)) return vb - (value_of(d, next_up(d, b)) - vb) / 2;
  return (va + vb) / 2;  // exact: two values of the dtype
}

/// (hi + lo) - m, with the subtraction exact (TwoSum) and one rounding in the tail.
double minus(double hi, double lo, double m) {
  const double s = hi - m;
  const double bb = s - hi;
  const double t = (hi - (s - bb)) + (-m - bb);
  return s + (t + lo);
}

/// The pattern that hi + lo rounds to when the value lies more than `e` from every rounding boundary; nullopt when it
/// does not (the caller asks MPFR). hi + lo is the value (lo need not be small), e its error bound.
std::optional<uint16_t> decide(ref::Dtype d, double hi, double lo, double e) {
  const double v = hi + lo;
  const uint16_t r = bits_of_exact(d, round_to_half(d, v));
  if (std::isinf(value_of(d, r))) {
    // Beyond the overflow threshold (the largest finite plus half its spacing) by more than e: infinity.
    const uint16_t max = uint16_t((r & 0x8000) | ((r & 0x7FFF) - 1));
    const double threshold = r & 0x8000 ? boundary(d, r, max) : boundary(d, max, r);
    const double past = minus(hi, lo, threshold);
    if (r & 0x8000 ? past < -e : past > e) return r;
    if (r & 0x8000 ? past > e : past < -e) return max;
    return std::nullopt;
  }
  const uint16_t up = next_up(d, r), down = next_down(d, r);
  const bool zero = (r & 0x7FFF) == 0;
  // Next to the largest finite value the boundary is the overflow threshold (boundary() knows).
  const double above = minus(hi, lo, boundary(d, zero ? 0x0000 : r, up));
  const double below = minus(hi, lo, boundary(d, down, zero ? 0x8000 : r));
  // Inside r's cell by more than e (a zero takes the value's sign); else one cell over, when clearly there.
  if (below > e && above < -e) return zero ? uint16_t((v < 0 || (v == 0 && std::signbit(v))) ? 0x8000 : 0x0000) : r;
  if (above > e) return up;
  if (below < -e) return down;
  return std::nullopt;
}

/// RAII mpfr_t.
struct Mp {
  mpfr_t v;
  explicit Mp(mpfr_prec_t p = 320) { mpfr_init2(v, p); }
  ~Mp() { mpfr_clear(v); }
  Mp(const Mp&) = delete;
  Mp& operator=(const Mp&) = delete;
  operator mpfr_ptr() { return v; }
};

/// The dtype's correctly rounded pattern of x - y (y = nullptr: of x), one rounding of the exact difference to p bits
/// within the dtype's exponent range (MPFR rounds correctly whatever the precision of the result).
uint16_t mpfr_to_half(ref::Dtype d, mpfr_t x, mpfr_t y = nullptr) {
  if (mpfr_nan_p(x) || (y && mpfr_nan_p(y))) return kNan;
  const Format f = format(d);
  const mpfr_exp_t old_min = mpfr_get_emin(), old_max = mpfr_get_emax();
  // MPFR's exponents: x = m * 2^e with m in [1/2, 1): the smallest subnormal 2^(emin - p + 1) has e = emin - p + 2.
  mpfr_set_emin(f.emin - f.p + 2);
  mpfr_set_emax(f.emax + 1);
  Mp r(f.p);
  int inex = y ? mpfr_sub(r, x, y, MPFR_RNDN) : mpfr_set(r, x, MPFR_RNDN);
  inex = mpfr_check_range(r, inex, MPFR_RNDN);
  mpfr_subnormalize(r, inex, MPFR_RNDN);
  const double v = mpfr_get_d(r, MPFR_RNDN);  // exact: the dtype's values are binary64 values
  const bool neg = mpfr_signbit(r);
  mpfr_set_emin(old_min);
  mpfr_set_emax(old_max);
  return bits_of_exact(d, v == 0 ? (neg ? -0.0 : 0.0) : v);
}

/// act(s) as main - deficit, each without cancellation: for s > 0, main = s and deficit = s - act(s) > 0 (tiny for
/// large s, kept at full relative precision); else main = act(s) (s <= 0: no cancellation in these forms), deficit 0.
/// s may be +-inf: the limits.
void mpfr_activation(ref::Activation a, mpfr_t main, mpfr_t deficit, mpfr_t s) {
  mpfr_set_zero(deficit, 1);
  if (mpfr_inf_p(s)) {
    if (mpfr_signbit(s)) mpfr_set_zero(main, -1);
    else mpfr_set_inf(main, 1);
    return;
  }
  if (mpfr_zero_p(s)) {
    mpfr_set(main, s, MPFR_RNDN);  // act(+-0) = +-0 for every activation here
    return;
  }
  const bool positive = mpfr_sgn(s) > 0;
  const mpfr_prec_t p = mpfr_get_prec(main) + 64;
  Mp t(p), u(p);
  mpfr_ptr out = positive ? deficit : main;
  switch (a) {
    case ref::Activation::kGeluErf:  // act = s/2 erfc(-s/sqrt2); deficit = s/2 erfc(s/sqrt2)
      mpfr_sqrt_ui(t, 2, MPFR_RNDN);
      mpfr_div(t, s, t, MPFR_RNDN);
      if (!positive) mpfr_neg(t, t, MPFR_RNDN);
      mpfr_erfc(t, t, MPFR_RNDN);
      mpfr_mul(t, t, s, MPFR_RNDN);
      mpfr_div_2ui(out, t, 1, MPFR_RNDN);
      break;
    case ref::Activation::kGeluTanh: {  // act = s / (1 + exp(-2z)); deficit = s / (1 + exp(2z))
      Mp k(p);
      mpfr_set_str(k, "0.044715", 10, MPFR_RNDN);
      mpfr_pow_ui(t, s, 3, MPFR_RNDN);
      mpfr_mul(t, t, k, MPFR_RNDN);
      mpfr_add(t, t, s, MPFR_RNDN);
      mpfr_const_pi(u, MPFR_RNDN);
      mpfr_ui_div(u, 2, u, MPFR_RNDN);
      mpfr_sqrt(u, u, MPFR_RNDN);
      mpfr_mul(t, t, u, MPFR_RNDN);   // z
      mpfr_mul_si(t, t, positive ? 2 : -2, MPFR_RNDN);
      mpfr_exp(t, t, MPFR_RNDN);
      mpfr_add_ui(t, t, 1, MPFR_RNDN);
      mpfr_div(out, s, t, MPFR_RNDN);
      break;
    }
    case ref::Activation::kSilu:  // act = s / (1 + exp(-s)); deficit = s / (1 + exp(s))
      if (positive) mpfr_set(t, s, MPFR_RNDN);
      else mpfr_neg(t, s, MPFR_RNDN);
      mpfr_exp(t, t, MPFR_RNDN);
      mpfr_add_ui(t, t, 1, MPFR_RNDN);
      mpfr_div(out, s, t, MPFR_RNDN);
      break;
  }
  if (positive) {
    mpfr_set(main, s, MPFR_RNDN);
    // s - act(s) > 0 for s > 0 always; where exp overflows MPFR's exponent range the deficit comes out zero: a
    // positive stand-in far below any half value keeps the side of a tie (the value is strictly below s).
    if (mpfr_zero_p(deficit)) mpfr_set_ui_2exp(deficit, 1, mpfr_get_emin() + 1000, MPFR_RNDN);  // survives a product
  }
}

/// act(s) in binary64, relative error a few units of 2^-52 (glibc's exp, erfc; no cancellation in these forms).
double double_activation(ref::Activation a, double s) {
  if (std::isinf(s)) return s > 0 ? s : -0.0;
  if (s == 0) return s;
  switch (a) {
    case ref::Activation::kGeluErf: return 0.5 * s * std::erfc(-s * 0.70710678118654752440);
    case ref::Activation::kGeluTanh: {
      const double z = 0.79788456080286535588 * (s + 0.044715 * s * s * s);
      return s / (1.0 + std::exp(-2.0 * z));
    }
    case ref::Activation::kSilu: return s / (1.0 + std::exp(-s));
  }
  return NAN;
}

/// The activation of each node-chain shape the family has: which node is which.
struct Shape {
  bool act_of_sum = false;   // act(in0 + in1): the bias ops
  bool act_times = false;    // act(in0) * in1: the *_and_mul ops
  ref::Activation act = ref::Activation::kGeluTanh;
};

Shape shape_of(const ref::OpSpec& op) {
  const std::vector<ref::Node>& n = op.contracts.at(0).nodes;
  Shape s;
  for (const ref::Node& node : n)
    if (node.op == ref::NodeOp::kActivation) s.act = node.act;
  const ref::Node& last = n.back();
  if (last.op == ref::NodeOp::kActivation && n[size_t(last.a)].op == ref::NodeOp::kAdd) s.act_of_sum = true;
  if (last.op == ref::NodeOp::kMul && n[size_t(last.a)].op == ref::NodeOp::kActivation) s.act_times = true;
  if (!s.act_of_sum && !s.act_times)
    throw std::invalid_argument("correct rounding: " + op.name + " is neither act(a + b) nor act(a) * b");
  return s;
}

/// act(a) * b for an infinite b: act(a) is exactly zero only at a = +-0 and a = -inf (its limit -0), so NaN there
/// (0 * inf); elsewhere an infinity of sign(a) * sign(b) (each activation has its argument's sign). Neither binary64
/// nor MPFR's exponent range holds every act(a) (gelu_erf(-38656) is about 2^-1.08e9), so the sign decides.
uint16_t times_infinity(ref::Dtype d, double a, double b) {
  if (a == 0 || a == -INFINITY) return kNan;
  return bits_of_exact(d, std::signbit(a) != std::signbit(b) ? -INFINITY : INFINITY);
}

}  // namespace

struct CorrectRounding::Impl {
  Shape shape;
  // act_times: act(in0) for every pattern as a double-double (hi + lo, 106 bits); NaN marks a NaN input.
  std::vector<double> act_hi, act_lo;
  std::vector<double> act_err;  // a bound on |act(in0) - (hi + lo)|
};

CorrectRounding::CorrectRounding(const ref::OpSpec& op, ref::Dtype d)
    : op_(&op), dtype_(d), impl_(std::make_unique<Impl>()) {
  impl_->shape = shape_of(op);
  if (impl_->shape.act_times) {
    impl_->act_hi.resize(65536);
    impl_->act_lo.resize(65536);
    impl_->act_err.resize(65536);
    Mp s(64), main(256), deficit(256), a(320), r(320);
    for (uint32_t p = 0; p < 65536; ++p) {
      const double x = ref::half_to_f32(d, uint16_t(p));
      if (std::isnan(x)) {
        impl_->act_hi[p] = impl_->act_lo[p] = NAN;
        continue;
      }
      mpfr_set_d(s, x, MPFR_RNDN);
      mpfr_activation(impl_->shape.act, main, deficit, s);
      mpfr_sub(a, main, deficit, MPFR_RNDN);
      const double hi = mpfr_get_d(a, MPFR_RNDN);
      // The tail act - hi from main - hi - deficit (exact first step: main and hi are close), so that a deficit far
      // below hi's last bit still gives the tail its sign.
      mpfr_sub_d(r, main, hi, MPFR_RNDN);
      mpfr_sub(r, r, deficit, MPFR_RNDN);
      double lo = mpfr_get_d(r, MPFR_RNDN);
      // A tail too small for binary64 is kept as a stand-in of its sign, still far below any rounding boundary of the
      // dtype after a product (2^-930 times the smallest subnormal is not zero in binary64).
      if (lo == 0 && !mpfr_zero_p(r.v) && std::fabs(hi) >= 0x1p-800) lo = std::copysign(0x1p-930, double(mpfr_sgn(r.v)));
      impl_->act_hi[p] = hi;
      impl_->act_lo[p] = lo;
      // lo's own rounding, and MPFR's 256 bits of the part that is not exact (the deficit; act itself for x <= 0).
      const double inexact = mpfr_zero_p(deficit.v) ? std::fabs(hi) : std::fabs(mpfr_get_d(deficit, MPFR_RNDU));
      impl_->act_err[p] = std::ldexp(std::fabs(lo), -52) + std::ldexp(inexact, -250);
    }
  }
}

CorrectRounding::~CorrectRounding() { release_thread_caches(); }

void CorrectRounding::release_thread_caches() { mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE); }

uint16_t CorrectRounding::value_mpfr(uint16_t in0, uint16_t in1) const {
  const double a = ref::half_to_f32(dtype_, in0), b = ref::half_to_f32(dtype_, in1);
  if (std::isnan(a) || std::isnan(b)) return kNan;
  Mp x(64), y(64), t(320), main(320), deficit(320);
  mpfr_set_d(x, a, MPFR_RNDN);
  mpfr_set_d(y, b, MPFR_RNDN);
  if (impl_->shape.act_of_sum) {
    mpfr_add(t, x, y, MPFR_RNDN);  // exact: 320 bits span every sum of two half values
    if (mpfr_nan_p(t.v)) return kNan;  // inf - inf
    if (mpfr_zero_p(t.v)) mpfr_set_zero(t, (std::signbit(a) && std::signbit(b)) ? -1 : 1);  // IEEE: -0 + -0 only
    mpfr_activation(impl_->shape.act, main, deficit, t);
  } else {
    if (std::isinf(b)) return times_infinity(dtype_, a, b);
    mpfr_activation(impl_->shape.act, main, deficit, x);
    mpfr_mul(main, main, y, MPFR_RNDN);        // exact at 320 bits
    mpfr_mul(deficit, deficit, y, MPFR_RNDN);
  }
  return mpfr_zero_p(deficit.v) ? mpfr_to_half(dtype_, main) : mpfr_to_half(dtype_, main, deficit);
}

/// g(s) = s - act(s) for s > 0, in binary64 without cancellation (act(s) < s there for the three activations).
double double_deficit(ref::Activation a, double s) {
  switch (a) {
    case ref::Activation::kGeluErf: return 0.5 * s * std::erfc(s * 0.70710678118654752440);
    case ref::Activation::kGeluTanh: {
      const double z = 0.79788456080286535588 * (s + 0.044715 * s * s * s);
      return s / (1.0 + std::exp(2.0 * z));
    }
    case ref::Activation::kSilu: return s / (1.0 + std::exp(s));
  }
  return NAN;
}

uint16_t CorrectRounding::value(uint16_t in0, uint16_t in1) const {
  const double a = ref::half_to_f32(dtype_, in0), b = ref::half_to_f32(dtype_, in1);
  if (std::isnan(a) || std::isnan(b)) return kNan;
  std::optional<uint16_t> r;
  if (impl_->shape.act_times) {
    const double hi = impl_->act_hi[in0], lo = impl_->act_lo[in0];
    const double p = hi * b;
    if (std::isinf(b)) return times_infinity(dtype_, a, b);  // even where binary64's act(a) underflowed
    // Infinities, and exact zeros: IEEE's signs decide.
    if (std::isinf(hi) || p == 0) return std::isnan(p) ? kNan : bits_of_exact(dtype_, p);
    // An activation below 2^-800 times any finite half value lies far below the dtype's smallest subnormal: a zero
    // of the product's sign (hi carries act's sign even where binary64 keeps few of its bits).
    if (std::fabs(hi) < 0x1p-800) return bits_of_exact(dtype_, std::signbit(hi) != std::signbit(b) ? -0.0 : 0.0);
    // act(in0) * in1 = p + (the product's error, exact by FMA) + lo * in1, to 2^-104 of the value.
    const double tail = std::fma(hi, b, -p) + lo * b;
    // Error: the table's bound times in1, and the rounding of lo * in1; the product and its FMA error are exact.
    r = decide(dtype_, p, tail, impl_->act_err[in0] * std::fabs(b) * 1.01 + std::ldexp(std::fabs(lo * b), -52) + 1e-320);
  } else {
    const double s = a + b;
    if (std::isnan(s)) return kNan;  // inf - inf
    if (std::isinf(s)) return bits_of_exact(dtype_, double_activation(impl_->shape.act, s));
    const double s_lo = (a - (s - (s - a))) + (b - (s - a));  // TwoSum: s + s_lo = a + b exactly
    if (s == 0 && s_lo == 0)
      return bits_of_exact(dtype_, (std::signbit(a) && std::signbit(b)) ? -0.0 : 0.0);  // act(+-0) = +-0
    if (std::fabs(s) < 0x1p-20) {
      // Near zero every activation here is s/2 + c s^2 + O(s^4) (c = 1/sqrt(2 pi) for both GELUs, 1/4 for SiLU): s/2
      // may be a tie of the dtype's grid exactly, and c s^2 decides the side (the s^4 term is 2^-43 of it).
      const double c = impl_->shape.act == ref::Activation::kSilu ? 0.25 : 0.39894228040143267794;
      const double lo = c * s * s + 0.5 * s_lo;
      r = decide(dtype_, 0.5 * s, lo, std::ldexp(std::fabs(c * s * s), -38) + std::fabs(s_lo) * 0x1p-30 + 1e-320);
    } else {
      // act(s) as hi + lo: for s > 0, s - g(s) with g > 0 computed without cancellation (an underflowed g stands in
      // as a positive value far below the dtype's smallest subnormal: the value is strictly below s); for s < 0,
      // act(s) itself. Then first order in the sum's tail: act(s + s_lo) = act(s) + act'(s) s_lo, the slope by a
      // central difference whose own error is bounded from the two values it takes.
      double hi, lo, e;
      if (s > 0) {
        const double g = double_deficit(impl_->shape.act, s);
        hi = s;
        lo = g > 0 ? -g : -0x1p-1010;
        e = g > 0 ? std::ldexp(g, -40) : 0x1p-1020;
      } else {
        hi = double_activation(impl_->shape.act, s);
        // act(s) < 0 for s < 0 here; one below binary64's range is far below the dtype's too: -0.
        if (hi == 0) return bits_of_exact(dtype_, -0.0);
        lo = 0;
        e = std::ldexp(std::fabs(hi), -40);
      }
      if (s_lo != 0) {
        const double h = std::fabs(s) * 0x1p-26;
        const double a1 = double_activation(impl_->shape.act, s + h), a2 = double_activation(impl_->shape.act, s - h);
        const double slope = (a1 - a2) / (2 * h);
        const double slope_error = std::ldexp(std::max(std::fabs(a1), std::fabs(a2)), -48) / h +
                                   std::ldexp(std::fabs(slope), -40);
        lo += slope * s_lo;
        // The second order, act''(s) s_lo^2 / 2, from the same three values (|s_lo| <= 2^-53 |s| << h), generously.
        const double mid = s > 0 ? s - double_deficit(impl_->shape.act, s) : hi;
        const double second = (std::fabs(a1 - 2 * mid + a2) + std::ldexp(std::max(std::fabs(a1), std::fabs(a2)), -46)) /
                              (h * h);
        e += slope_error * std::fabs(s_lo) + 4 * second * s_lo * s_lo;
      }
      r = decide(dtype_, hi, lo, e + 1e-320);
    }
  }
  if (r) return *r;
  fallbacks_.fetch_add(1, std::memory_order_relaxed);
  return value_mpfr(in0, in1);
}

}  // namespace fuseproof::audit
