// mutant_bugs.h: the catalogue of deliberate bugs the mutant plugins carry, one plausible fused-kernel bug each.
#pragma once

namespace fuseproof::mutants {

/// X(enum, name, host, cuda, what): `host`/`cuda` say which variants are built (1) or do not apply (0).
#define FUSEPROOF_MUTANT_BUGS(X)                                                                                      \
  X(kControl, "control", 1, 1, "no bug: the unmutated base kernel, which must pass")                                 \
  X(kUnroundedSum, "gelu_unrounded_sum", 1, 1, "GELU applied to the unrounded binary32 sum (one final rounding)")    \
  X(kTruncatedAdd, "add_truncates", 1, 1, "x + bias rounded toward zero instead of to nearest even")                 \
  X(kFastTanh, "fast_tanh", 1, 1, "tanh.approx.f32 on CUDA; 1 - 2 / (exp(2x) + 1) on the host")                     \
  X(kErfGelu, "gelu_erf", 1, 1, "erf GELU instead of the tanh approximation")                                        \
  X(kBiasOffByOne, "bias_off_by_one", 1, 1, "bias indexed with c + 1 (wrapping)")                                    \
  X(kBiasByRow, "bias_by_row", 1, 1, "bias indexed by the row instead of the column")                                \
  X(kSkipLastVector, "skip_last_vector", 1, 1, "the last vector of each row is never processed")                     \
  X(kTailOverread, "tail_overread", 1, 1, "width not a multiple of the vector accepted; ceil(width / V) vectors a row") \
  X(kNanPattern, "nan_pattern", 1, 1, "NaN written as 0x7FC0 (bf16) / 0x7E00 (fp16) instead of 0x7FFF")             \
  X(kZeroSignLost, "zero_sign_lost", 1, 1, "-0 written as +0")                                                      \
  X(kFp16SubnormalFtz, "fp16_subnormal_ftz", 1, 1, "fp16 subnormal inputs and outputs flushed to zero")             \
  X(kNoWidthRejection, "no_width_rejection", 1, 1, "the width-multiple rejection removed: any width is computed")   \
  X(kNoAlignmentCheck, "no_alignment_check", 1, 1, "misaligned pointers accepted")                                   \
  X(kPdlWaitRemoved, "pdl_wait_removed", 0, 1, "launched with PDL but without cudaGridDependencySynchronize()")

enum class Bug : int {
#define FUSEPROOF_MUTANT_ENUM(e, name, host, cuda, what) e,
  FUSEPROOF_MUTANT_BUGS(FUSEPROOF_MUTANT_ENUM)
#undef FUSEPROOF_MUTANT_ENUM
};

}  // namespace fuseproof::mutants
