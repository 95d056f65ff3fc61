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
  X(kPdlWaitRemoved, "pdl_wait_removed", 0, 1, "launched with PDL but without cudaGridDependencySynchronize()")   \
  X(kBiasCache8192, "bias_cache_8192", 1, 1, "bias staged in an 8,192-entry cache: column c reads bias[c % 8192]") \
  X(kRowsOver65535, "rows_over_65535_skipped", 1, 1, "rows past 65,535 never processed (a gridDim.y-style limit)")  \
  X(kInt32Index, "int32_index", 0, 1, "element index computed in int32: wraps past 2^31 elements")                  \
  X(kSegvOnMisaligned, "segv_on_misaligned", 1, 0, "alignment check removed, aligned 16-byte loads: SIGSEGV")       \
  X(kAbortOnNan, "abort_on_nan", 1, 0, "a debug assert left in: abort() when an input is NaN")                      \
  X(kHangOnEmpty, "hang_on_empty", 1, 1, "rows == 0 not rejected: the loop never ends")                              \
  X(kOobRead, "oob_read", 1, 0, "the last element reads x 2^30 elements past its end")                               \
  X(kMisalignedLoad, "misaligned_vector_load", 0, 1, "a 16-byte vector load from x + 2 bytes: misaligned address") \
  X(kIllegalAddress, "illegal_address", 0, 1, "out written 2^34 bytes past its end for widths above 4096")

enum class Bug : int {
#define FUSEPROOF_MUTANT_ENUM(e, name, host, cuda, what) e,
  FUSEPROOF_MUTANT_BUGS(FUSEPROOF_MUTANT_ENUM)
#undef FUSEPROOF_MUTANT_ENUM
};

}  // namespace fuseproof::mutants
