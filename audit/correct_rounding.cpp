// correct_rounding.cpp: binary64 evaluation with an error bound, MPFR where the bound does not decide the rounding.
#include "audit/correct_rounding.h"

#include <mpfr.h>

#include <cmath>
#include <cstring>
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

/// RAII mpfr_t.
struct Mp {
  mpfr_t v;
  explicit Mp(mpfr_prec_t p = 320) { mpfr_init2(v, p); }
  ~Mp() { mpfr_clear(v); }
  Mp(const Mp&) = delete;
  Mp& operator=(const Mp&) = delete;
  operator mpfr_ptr() { return v; }
};

/// The dtype's correctly rounded pattern of an MPFR value: rounded to p bits within the dtype's exponent range.
uint16_t mpfr_to_half(ref::Dtype d, mpfr_t x) {
  if (mpfr_nan_p(x)) return kNan;
  const Format f = format(d);
  const mpfr_exp_t old_min = mpfr_get_emin(), old_max = mpfr_get_emax();
  // MPFR's exponents: x = m * 2^e with m in [1/2, 1): the smallest subnormal 2^(emin - p + 1) has e = emin - p + 2.
  mpfr_set_emin(f.emin - f.p + 2);
  mpfr_set_emax(f.emax + 1);
  Mp r(f.p);
  int inex = mpfr_set(r, x, MPFR_RNDN);
  inex = mpfr_check_range(r, inex, MPFR_RNDN);
  mpfr_subnormalize(r, inex, MPFR_RNDN);
  const double v = mpfr_get_d(r, MPFR_RNDN);  // exact: the dtype's values are binary64 values
  const bool neg = mpfr_signbit(r);
  mpfr_set_emin(old_min);
  mpfr_set_emax(old_max);
  return bits_of_exact(d, v == 0 ? (neg ? -0.0 : 0.0) : v);
}

/// act(s) in MPFR (x may be +-inf: the limit).
void mpfr_activation(ref::Activation a, mpfr_t out, mpfr_t s) {
  if (mpfr_inf_p(s)) {
    if (mpfr_signbit(s)) mpfr_set_zero(out, -1);
    else mpfr_set_inf(out, 1);
    return;
  }
  if (mpfr_zero_p(s)) {
    mpfr_set(out, s, MPFR_RNDN);  // act(+-0) = +-0 for every activation here
    return;
  }
  const mpfr_prec_t p = mpfr_get_prec(out) + 64;
  Mp t(p), u(p);
  switch (a) {
    case ref::Activation::kGeluErf:  // s/2 * erfc(-s / sqrt(2))
      mpfr_sqrt_ui(t, 2, MPFR_RNDN);
      mpfr_div(t, s, t, MPFR_RNDN);
      mpfr_neg(t, t, MPFR_RNDN);
      mpfr_erfc(t, t, MPFR_RNDN);
      mpfr_mul(t, t, s, MPFR_RNDN);
      mpfr_div_2ui(out, t, 1, MPFR_RNDN);
      return;
    case ref::Activation::kGeluTanh: {  // s / (1 + exp(-2 z)), z = sqrt(2/pi) (s + 0.044715 s^3)
      Mp k(p);
      mpfr_set_str(k, "0.044715", 10, MPFR_RNDN);
      mpfr_pow_ui(t, s, 3, MPFR_RNDN);
      mpfr_mul(t, t, k, MPFR_RNDN);
      mpfr_add(t, t, s, MPFR_RNDN);
      mpfr_const_pi(u, MPFR_RNDN);
      mpfr_ui_div(u, 2, u, MPFR_RNDN);
      mpfr_sqrt(u, u, MPFR_RNDN);
      mpfr_mul(t, t, u, MPFR_RNDN);   // z
      mpfr_mul_si(t, t, -2, MPFR_RNDN);
      mpfr_exp(t, t, MPFR_RNDN);
      mpfr_add_ui(t, t, 1, MPFR_RNDN);
      mpfr_div(out, s, t, MPFR_RNDN);
      return;
    }
    case ref::Activation::kSilu:  // s / (1 + exp(-s))
      mpfr_neg(t, s, MPFR_RNDN);
      mpfr_exp(t, t, MPFR_RNDN);
      mpfr_add_ui(t, t, 1, MPFR_RNDN);
      mpfr_div(out, s, t, MPFR_RNDN);
      return;
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

}  // namespace

struct CorrectRounding::Impl {
  Shape shape;
  // act_times: act(in0) for every pattern as a double-double (hi + lo, 106 bits); NaN marks a NaN input.
  std::vector<double> act_hi, act_lo;
};

CorrectRounding::CorrectRounding(const ref::OpSpec& op, ref::Dtype d)
    : op_(&op), dtype_(d), impl_(std::make_unique<Impl>()) {
  impl_->shape = shape_of(op);
  if (impl_->shape.act_times) {
    impl_->act_hi.resize(65536);
    impl_->act_lo.resize(65536);
    Mp s(64), a(256), r(256);
    for (uint32_t p = 0; p < 65536; ++p) {
      const double x = ref::half_to_f32(d, uint16_t(p));
      if (std::isnan(x)) {
        impl_->act_hi[p] = impl_->act_lo[p] = NAN;
        continue;
      }
      mpfr_set_d(s, x, MPFR_RNDN);
      mpfr_activation(impl_->shape.act, a, s);
      const double hi = mpfr_get_d(a, MPFR_RNDN);
      mpfr_sub_d(r, a, hi, MPFR_RNDN);
      impl_->act_hi[p] = hi;
      impl_->act_lo[p] = mpfr_get_d(r, MPFR_RNDN);
    }
  }
}

CorrectRounding::~CorrectRounding() = default;

uint16_t CorrectRounding::value_mpfr(uint16_t in0, uint16_t in1) const {
  const double a = ref::half_to_f32(dtype_, in0), b = ref::half_to_f32(dtype_, in1);
  if (std::isnan(a) || std::isnan(b)) return kNan;
  Mp x(64), y(64), t(320), out(320);
  mpfr_set_d(x, a, MPFR_RNDN);
  mpfr_set_d(y, b, MPFR_RNDN);
  if (impl_->shape.act_of_sum) {
    mpfr_add(t, x, y, MPFR_RNDN);  // exact: 320 bits span every sum of two half values
    if (mpfr_nan_p(t)) return kNan;  // inf - inf
    if (mpfr_zero_p(t)) mpfr_set_zero(t, (std::signbit(a) && std::signbit(b)) ? -1 : 1);  // IEEE: -0 + -0 only
    mpfr_activation(impl_->shape.act, out, t);
  } else {
    mpfr_activation(impl_->shape.act, t, x);
    mpfr_mul(out, t, y, MPFR_RNDN);  // 0 * inf is NaN in MPFR as in IEEE
  }
  return mpfr_to_half(dtype_, out);
}

uint16_t CorrectRounding::value(uint16_t in0, uint16_t in1) const {
  const double a = ref::half_to_f32(dtype_, in0), b = ref::half_to_f32(dtype_, in1);
  if (std::isnan(a) || std::isnan(b)) return kNan;
  double v, bound;
  if (impl_->shape.act_times) {
    const double hi = impl_->act_hi[in0], lo = impl_->act_lo[in0];
    if (std::isinf(b) || std::isinf(hi)) {
      const double p = hi * b;  // exact special cases: 0 * inf = NaN, signs by IEEE
      return std::isnan(p) ? kNan : bits_of_exact(dtype_, p);
    }
    const double p = hi * b;
    // An exact zero, or the underflow of a value far below the dtype's smallest subnormal: a zero of that sign.
    if (p == 0) return bits_of_exact(dtype_, p);
    const double e = std::fma(hi, b, -p) + lo * b;  // the product's error, exact, plus the tail's share
    v = p + e;
    bound = std::ldexp(std::fabs(v), -90) + 1e-320;
  } else {
    const double s = a + b;
    if (std::isnan(s)) return kNan;  // inf - inf
    const double s_lo = std::isinf(s) ? 0.0 : (a - (s - (s - a))) + (b - (s - a));  // TwoSum: s + s_lo = a + b
    double sum = s;
    if (s == 0 && s_lo == 0) sum = (std::signbit(a) && std::signbit(b)) ? -0.0 : 0.0;
    v = double_activation(impl_->shape.act, sum);
    if (s_lo != 0) {
      // First order in the tail: act(s + s_lo) = act(s) + act'(s) s_lo, act' within [-0.2, 1.2] for these functions.
      const double h = std::fabs(s) * 0x1p-26 + 0x1p-1000;
      const double slope = (double_activation(impl_->shape.act, s + h) - double_activation(impl_->shape.act, s - h)) / (2 * h);
      v += slope * s_lo;
    }
    if (v == 0) return bits_of_exact(dtype_, v);  // as above: the sign is the value's
    bound = std::ldexp(std::fabs(v), -30) + std::fabs(s_lo) * 2 + 1e-320;
  }
  const double lo = round_to_half(dtype_, v - bound), hi = round_to_half(dtype_, v + bound);
  if (lo == hi && std::signbit(lo) == std::signbit(hi)) return bits_of_exact(dtype_, lo);
  fallbacks_.fetch_add(1, std::memory_order_relaxed);
  return value_mpfr(in0, in1);
}

}  // namespace fuseproof::audit
