// family_mutant_kernel.h: the family's element functions with one switchable bug, for device and host (the mutant
// plugins' CUDA kernel and host loop run the same code).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/activation_math.h"
#include "kernels/family_ops.h"
#include "kernels/mutants/family_bugs.h"

namespace fuseproof::mutants {

using kernel::Act;
using kernel::Contract;
using kernel::FamilyOp;
using kernel::kFamily;
using kernel::Half;

/// The fast-math versions the bugs put in: __expf / tanh.approx on the device; on the host a 2^x form (exp2f of
/// x * log2(e)) and 1 - 2 / (exp(2x) + 1).
FUSEPROOF_HD float fast_silu(float x) {
#if defined(__CUDA_ARCH__)
  return x / (1.0f + __expf(-x));
#else
  return x / (1.0f + ::exp2f(-x * 1.4426950408889634f));
#endif
}
FUSEPROOF_HD float fast_tanh(float a) {
#if defined(__CUDA_ARCH__)
  float t;
  asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(a));
  return t;
#else
  return 1.0f - 2.0f / (::expf(2.0f * a) + 1.0f);
#endif
}
FUSEPROOF_HD float fast_gelu_tanh(float x) {
  constexpr float kBeta = float(1.41421356237309504880 * 1.12837916709551257390 * 0.5);
  const float inner = kernel::mul_rn(kBeta, kernel::fma_rn(0.044715f, kernel::mul_rn(kernel::mul_rn(x, x), x), x));
  return kernel::mul_rn(kernel::mul_rn(0.5f, x), kernel::add_rn(1.0f, fast_tanh(inner)));
}

template <FamilyOp Op, FamilyBug B>
FUSEPROOF_HD float mutant_act(float x) {
  if constexpr (B == FamilyBug::kFastExpf && kFamily<Op>.act == Act::kSilu) return fast_silu(x);
  else if constexpr (B == FamilyBug::kFastTanh && kFamily<Op>.act == Act::kGeluTanh) return fast_gelu_tanh(x);
  else return kernel::activation<kFamily<Op>.act>(x);
}

/// One element of a 3-input op (gated_residual, modulate) with the bug; the arithmetic otherwise that of contract C.
template <FamilyOp Op, Half D, FamilyBug B, Contract C>
FUSEPROOF_HD uint16_t mutant_element3(uint16_t a, uint16_t b, uint16_t c) {
  using kernel::float_to_half_rn;
  using kernel::half_to_float;
  if constexpr (B == FamilyBug::kFmaInEager) {
    return kernel::family_element<Op, D, Contract::kFma>(a, b, c);
  } else if constexpr (Op == FamilyOp::kGatedResidual && C == Contract::kEager) {
    const float fx = half_to_float<D>(a), fg = half_to_float<D>(b), fy = half_to_float<D>(c);
    const float prod = B == FamilyBug::kGateYSwapped ? kernel::mul_rn(fy, fg) : kernel::mul_rn(fg, fy);
    const float p = half_to_float<D>(float_to_half_rn<D>(prod));
    float sum = kernel::add_rn(fx, p);
    if constexpr (B == FamilyBug::kNegzeroLost) sum = kernel::add_rn(sum, 0.0f);  // -0 + +0 = +0 in round-to-nearest
    return float_to_half_rn<D>(sum);
  } else if constexpr (Op == FamilyOp::kModulate && C == Contract::kEager) {
    const float fx = half_to_float<D>(a), fs = half_to_float<D>(b), fh = half_to_float<D>(c);
    const float one_plus = kernel::add_rn(1.0f, fs);
    const float s = B == FamilyBug::kOnePlusScaleUnrounded ? one_plus : half_to_float<D>(float_to_half_rn<D>(one_plus));
    const float m = half_to_float<D>(float_to_half_rn<D>(kernel::mul_rn(fx, s)));
    return float_to_half_rn<D>(kernel::add_rn(m, fh));
  } else {
    return kernel::family_element<Op, D, C>(a, b, c);
  }
}

/// One element with the bug, from the op's inputs in declared order (`c` unused by the 2-input ops); C: the contract
/// the mutant's arithmetic follows (before the bug).
template <FamilyOp Op, Half D, FamilyBug B, Contract C>
FUSEPROOF_HD uint16_t mutant_element(uint16_t a, uint16_t b, uint16_t c = 0) {
  using kernel::float_to_half_rn;
  using kernel::half_to_float;
  if constexpr (kFamily<Op>.inputs == 3) {
    return mutant_element3<Op, D, B, C>(a, b, c);
  } else {
    if constexpr (B == FamilyBug::kGateUpSwapped) {
      const uint16_t t = a;
      a = b;
      b = t;
    }
    const float fa = half_to_float<D>(a), fb = half_to_float<D>(b);
    uint16_t y;
    if constexpr (!kFamily<Op>.packed) {
      const float sum = kernel::add_rn(fa, fb);
      const float s = B == FamilyBug::kSumUnrounded ? sum : half_to_float<D>(float_to_half_rn<D>(sum));
      y = float_to_half_rn<D>(mutant_act<Op, B>(s));
      if (B == FamilyBug::kZeroSignLost && (y & 0x7FFFu) == 0) y = 0;
    } else {
      const float up = B == FamilyBug::kZeroSignLost ? kernel::add_rn(fb, 0.0f) : fb;  // act * (up + 0)
      const float act = mutant_act<Op, B>(fa);
      const bool round_act = (C != Contract::kFp32 && B != FamilyBug::kActUnrounded) || B == FamilyBug::kFp32ActRounded;
      const float a_used = round_act ? half_to_float<D>(float_to_half_rn<D>(act)) : act;
      y = float_to_half_rn<D>(kernel::mul_rn(a_used, up));
    }
    return y;
  }
}

/// Element r of a call of `rows` rows: the row-count bug's tail-tile path (rows 129..255, rows from 128 on) keeps
/// act(gate) in binary32; every other bug is the same in every row.
template <FamilyOp Op, Half D, FamilyBug B, Contract C>
FUSEPROOF_HD uint16_t mutant_row_element(uint16_t a, uint16_t b, uint16_t c, int64_t r, int64_t rows) {
  if constexpr (B == FamilyBug::kRowCountPath)
    if (rows > 128 && rows < 256 && r >= 128) return mutant_element<Op, D, FamilyBug::kActUnrounded, C>(a, b, c);
  return mutant_element<Op, D, B, C>(a, b, c);
}

/// The dtype a valid call is computed in (host side of a plugin): its own, or for the first-dtype bug the first
/// valid call's, kept for the life of the process.
template <FamilyBug B>
inline int32_t mutant_dtype(int32_t dtype) {
  if constexpr (B == FamilyBug::kFirstDtypeTable) {
    static const int32_t first = dtype;
    return first;
  }
  return dtype;
}

/// The vector step of a call of width `w`: for the first-call bug, the step picked on the first valid call (the widest
/// power of two up to 64 dividing a first width of 2,048 or more, else 8) and kept; for every other bug 0 (every
/// element written). Elements past the last whole step of a row are left unwritten.
template <FamilyBug B>
inline int64_t mutant_step(int64_t w) {
  if constexpr (B == FamilyBug::kFirstCallVector) {
    static const int64_t step = [w] {
      int64_t s = 8;
      if (w >= 2048)
        while (s < 64 && w % (2 * s) == 0) s *= 2;
      return s;
    }();
    return step;
  }
  (void)w;
  return 0;
}

/// Where element (r, c)'s input `input` sits for the bug, in a call of `rows` rows and `group_rows` rows per group: the
/// tail past the last whole vector of a packed row reads up at the padded width instead of `w`; the wrong-group bug
/// reads a group-broadcast input's row r % groups instead of r / group_rows.
template <FamilyOp Op, FamilyBug B>
FUSEPROOF_HD int64_t mutant_in(int input, int64_t r, int64_t c, int64_t w, int64_t group_rows, int64_t rows) {
  if constexpr (B == FamilyBug::kWrongHalfTail && kFamily<Op>.packed) {
    const int64_t padded = (w + 7) / 8 * 8;
    if (input == 1 && c >= w / 8 * 8) return r * 2 * w + (padded - w) + c;  // relative to up's pointer (x + w)
  }
  if constexpr (B == FamilyBug::kWrongGroupRow) {
    if ((kFamily<Op>.group_mask >> input) & 1u) return (r % (rows / group_rows)) * w + c;
  }
  (void)rows;
  return kernel::family_in<Op>(input, r, c, w, group_rows);
}

}  // namespace fuseproof::mutants
