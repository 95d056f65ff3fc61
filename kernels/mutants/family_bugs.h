// family_bugs.h: the catalogue of deliberate bugs of the family's mutant plugins (bias_gelu_erf, the *_and_mul ops,
// gated_residual and modulate), one plausible fused-kernel bug each, and which ops each applies to.
#pragma once

namespace fuseproof::mutants {

/// Ops, as bits of a mask: bias_gelu_erf 1, silu_and_mul 2, gelu_tanh_and_mul 4, gelu_and_mul 8, gated_residual 32,
/// modulate 64; bit 16: a CUDA mutant only (the bug needs a device: a host plugin has no graph to capture); bit 128: a
/// false-alarm check, still exact, which the audit must pass (built beside the controls, into lib/plugins/ as
/// libcontrol_<memory>_<op>_<bug>.so, not into lib/mutants/).
/// The 3-input ops' bugs and the class that must kill each (property_tests/mutation/CMakeLists.txt,
/// scripts/check_cuda_mutants.py): fma_in_eager extreme (the extreme triples; stages too), one_plus_scale_unrounded
/// stages (step 2, x * round(1 + scale); extreme's ties may see it first), wrong_group_row property (calls of more
/// than one group of more than one row), negzero_lost extreme (x = -0, gate * y = -0), gate_y_swapped none.
/// X(enum, name, ops mask, contract the mutant claims, what)
#define FUSEPROOF_FAMILY_BUGS(X)                                                                                       \
  X(kControl, "control", 111, "eager", "no bug: the unmutated base, which must pass")                                  \
  X(kSumUnrounded, "sum_unrounded", 1, "eager", "the activation of the unrounded binary32 x + bias")                  \
  X(kActUnrounded, "act_unrounded", 14, "eager", "act(gate) kept in binary32 before the product (claims eager)")       \
  X(kFp32ActRounded, "fp32_act_rounded", 14, "fp32", "act(gate) rounded to the dtype before the product (claims fp32)") \
  X(kFastExpf, "fast_expf", 2, "eager", "__expf (ex2.approx without ftz, fast math) in SiLU")                          \
  X(kFastTanh, "fast_tanh", 4, "eager", "tanh.approx.f32 (fast math) in GELU(tanh)")                                  \
  X(kZeroSignLost, "zero_sign_lost", 15, "eager", "-0 lost: act * (up + 0) (vLLM's form), or -0 written as +0")       \
  X(kGateUpSwapped, "gate_up_swapped", 14, "eager", "act(up) * gate: the halves of the packed input swapped")        \
  X(kWrongHalfTail, "wrong_half_tail", 14, "eager", "declares vector 1 (any width); the tail past the last 8-element vector reads up at the padded width") \
  X(kFirstDtypeTable, "first_dtype_table", 2, "eager", "computes every call in the first valid call's dtype (an activation table built once, on the first call, and kept): one dtype per process passes; history's mixed calls do not") \
  X(kRowCountPath, "row_count_path", 2, "eager", "calls of 129..255 rows take a tail-tile path that keeps act(gate) in binary32 from row 128 on; no older class calls that many rows (extreme 38, 64 and 512, property 1..4, widths 3, pdl and the decode shape 256, domain 65,536, shapes 8,192+ on CUDA and 65,537+ on the host), batch's 129 does") \
  X(kStaticWorkspace, "static_workspace", 2, "eager", "stages every call's output in one workspace per process (a static buffer, grown when a call needs more) and copies it to out in a second pass (a second kernel on the call's stream): right one call at a time, wrong when two calls overlap") \
  X(kPerCallMalloc, "per_call_malloc", 18, "eager", "cudaMalloc a workspace, stage the output in it, copy it to out, cudaFree, in every call: right, and serialising, on streams; a stream capture refuses it") \
  X(kFirstCallVector, "first_call_vector", 2, "eager", "picks its vector step on the first valid call and keeps it for the process: the widest power of two up to 64 dividing the first width when that call is at least 2,048 wide (a prefill-sized first call), else 8; a later width not a multiple of the step leaves the rest of each row past the last whole step unwritten") \
  X(kFmaInEager, "fma_in_eager", 96, "eager", "one binary32 fmaf rounded once, fmaf(gate, y, x) or fmaf(x, 1 + scale, shift) (sglang's Blackwell scale/shift candidate), in a kernel that claims eager") \
  X(kOnePlusScaleUnrounded, "one_plus_scale_unrounded", 64, "eager", "1 + scale kept in binary32 before the product; x * that and the sum still rounded to T") \
  X(kWrongGroupRow, "wrong_group_row", 96, "eager", "reads the group-broadcast row r % groups instead of r / group_rows (the rows taken as [tokens, batch]): right with one group and with one row per group") \
  X(kNegzeroLost, "negzero_lost", 32, "eager", "(x + p) + 0 in binary32: -0 + -0 written as +0, every other sum unchanged") \
  X(kGateYSwapped, "gate_y_swapped", 160, "eager", "y * gate: still exact (IEEE multiplication commutes), a false-alarm check the audit must pass")

enum class FamilyBug : int {
#define FUSEPROOF_FAMILY_BUG_ENUM(e, name, ops, contract, what) e,
  FUSEPROOF_FAMILY_BUGS(FUSEPROOF_FAMILY_BUG_ENUM)
#undef FUSEPROOF_FAMILY_BUG_ENUM
};

}  // namespace fuseproof::mutants
