// correct_rounding.h: the correctly rounded value of an op: its composition evaluated in real arithmetic (no
// intermediate rounding, the activations' exact functions) and rounded once to the dtype, with MPFR as the arbiter.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "reference/dtype.h"
#include "reference/op_spec.h"

namespace fuseproof::audit {

/// For an op of two inputs. Each value is first computed in binary64 arithmetic (double-double where an activation is
/// tabulated: act(gate) from MPFR at 256 bits for every gate pattern); when the binary64 value lies within its error
/// bound of a rounding boundary of the dtype, it is computed again with MPFR at 320 bits (the sum of two half values
/// is exact there) and that result is used. So every value is the correctly rounded one (round to nearest even, the
/// dtype's subnormals, overflow to infinity), as MPFR decides it.
///
/// The real functions: gelu_tanh(s) = s/2 (1 + tanh(sqrt(2/pi) (s + 0.044715 s^3))) with the decimal constant,
/// gelu_erf(s) = s/2 erfc(-s/sqrt(2)), silu(s) = s / (1 + e^-s); at infinities their limits (act(+inf) = +inf,
/// act(-inf) = -0); NaN in gives NaN out, written 0x7FFF; 0 * inf and inf - inf are NaN. Exact zeros keep IEEE signs.
class CorrectRounding {
 public:
  CorrectRounding(const ref::OpSpec& op, ref::Dtype d);
  ~CorrectRounding();
  CorrectRounding(const CorrectRounding&) = delete;
  CorrectRounding& operator=(const CorrectRounding&) = delete;

  ref::Dtype dtype() const { return dtype_; }
  /// The correctly rounded pattern for (in0, in1). Thread-safe.
  uint16_t value(uint16_t in0, uint16_t in1) const;
  /// The full MPFR evaluation, without the binary64 path (the tests' oracle of value()).
  uint16_t value_mpfr(uint16_t in0, uint16_t in1) const;
  /// Frees MPFR's caches of the calling thread (constants, exp tables): a worker thread that called value() calls it
  /// before it ends, else they leak with the thread.
  static void release_thread_caches();
  /// How many values needed MPFR so far (the binary64 value was too near a boundary).
  uint64_t mpfr_fallbacks() const { return fallbacks_.load(); }

 private:
  struct Impl;
  const ref::OpSpec* op_;
  ref::Dtype dtype_;
  std::unique_ptr<Impl> impl_;
  mutable std::atomic<uint64_t> fallbacks_{0};
};

}  // namespace fuseproof::audit
