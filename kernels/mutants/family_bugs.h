// family_bugs.h: the catalogue of deliberate bugs of the family's mutant plugins (bias_gelu_erf and the *_and_mul
// ops), one plausible fused-kernel bug each, and which ops each applies to.
#pragma once

namespace fuseproof::mutants {

/// Ops, as bits of a mask: bias_gelu_erf 1, silu_and_mul 2, gelu_tanh_and_mul 4, gelu_and_mul 8.
/// X(enum, name, ops mask, contract the mutant claims, what)
#define FUSEPROOF_FAMILY_BUGS(X)                                                                                       \
  X(kControl, "control", 15, "eager", "no bug: the unmutated base, which must pass")                                  \
  X(kSumUnrounded, "sum_unrounded", 1, "eager", "the activation of the unrounded binary32 x + bias")                  \
  X(kActUnrounded, "act_unrounded", 14, "eager", "act(gate) kept in binary32 before the product (claims eager)")       \
  X(kFp32ActRounded, "fp32_act_rounded", 14, "fp32", "act(gate) rounded to the dtype before the product (claims fp32)") \
  X(kFastExpf, "fast_expf", 2, "eager", "__expf (ex2.approx without ftz, fast math) in SiLU")                          \
  X(kFastTanh, "fast_tanh", 4, "eager", "tanh.approx.f32 (fast math) in GELU(tanh)")                                  \
  X(kZeroSignLost, "zero_sign_lost", 15, "eager", "-0 lost: act * (up + 0) (vLLM's form), or -0 written as +0")       \
  X(kGateUpSwapped, "gate_up_swapped", 14, "eager", "act(up) * gate: the halves of the packed input swapped")        \
  X(kWrongHalfTail, "wrong_half_tail", 14, "eager", "declares vector 1 (any width); the tail past the last 8-element vector reads up at the padded width")

enum class FamilyBug : int {
#define FUSEPROOF_FAMILY_BUG_ENUM(e, name, ops, contract, what) e,
  FUSEPROOF_FAMILY_BUGS(FUSEPROOF_FAMILY_BUG_ENUM)
#undef FUSEPROOF_FAMILY_BUG_ENUM
};

}  // namespace fuseproof::mutants
