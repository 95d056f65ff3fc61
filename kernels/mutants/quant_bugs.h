// quant_bugs.h: the catalogue of deliberate bugs of the quantization mutant plugins (kernels/quant_ops.h, one
// QuantFault each), which ops each applies to, the contract it claims, and the audit class expected to kill it.
#pragma once

namespace fuseproof::mutants {

/// Ops, as bits of a mask: fp8_group_quant 1, nvfp4_quant 2, silu_and_mul_fp8_group_quant 4, silu_and_mul_nvfp4_quant
/// 8, bias_gelu_tanh_nvfp4_quant 16. The contract is the one the mutant claims ("first": each op's first, vllm-ref or
/// fp8-group). The class is the audit class expected to kill it (rejection, widths, stages, blocks, layout; "none"
/// for the control, which must pass); tests and scripts/check_cuda_mutants.py read it from this table.
/// Why those classes: the value bugs change whole blocks' scales or codes at block kinds any seeded block set holds
/// (NaN/Inf/zero members, scales past 464, negative maxima, -0.0), so blocks kills them; the swizzle bug moves only
/// the swizzled layout's cells, and only with more than 4 blocks a row (layout); the inexact reciprocal changes a code
/// only where x * (1 / p) lies within an ulp of an E2M1 rounding end, which seeded blocks almost never hit (none of
/// 562,560 on an H100, property_tests/kernels/quant_cuda_test.cpp), while the stage-exhaustive proof over every
/// (value, scale code) pair does (stages).
/// Built by kernels/mutants/CMakeLists.txt as lib/mutants/<memory>/lib<memory>_<op>_<bug>.so (host: the emulation's
/// loop, CUDA: the kernel), the control as lib/plugins/libcontrol_<memory>_<op>.so.
/// X(fault, name, ops mask, contract, class, what)
#define FUSEPROOF_QUANT_BUGS(X)                                                                                        \
  X(kNone, "control", 31, "first", "none", "no bug: the unmutated kernel, which must pass")                            \
  X(kInexactRcp, "inexact_rcp", 2, "vllm-ref", "stages",                                                               \
    "vllm-ref's reciprocals (1 / g, 1 / p) not correctly rounded: rcp.approx.ftz.f32 on the device; on the host a "   \
    "Newton step from a 12-bit estimate (kernel::rcp_inexact), one ulp off on about 12% of significands")              \
  X(kScaleUnsaturated, "scale_unsaturated", 2, "vllm-ref", "blocks",                                                   \
    "the block scale cast to E4M3 without the +-448 clamp: above 464 it is NaN 0x7F and every code NaN (no code)") \
  X(kAmaxShort, "amax_short", 3, "first", "blocks", "the block amax over all members but the last (15 of 16, 127 of 128)") \
  X(kAmaxSigned, "amax_signed", 3, "first", "blocks", "amax = max(x), not max(|x|): the maximum's sign lost")          \
  X(kNegZeroLost, "negzero_lost", 1, "fp8-group", "blocks", "the E4M3 code of a -0 result (0x80) written as +0 (0x00)") \
  X(kSwizzleTileOff, "swizzle_tile_off", 2, "vllm-ref", "layout",                                                      \
    "swizzled scales of k-tile t written to k-tile (t + 1) mod k_tiles (blocks > 4): the linear layout is right")     \
  X(kZeroBlockInfScale, "zero_block_inf_scale", 2, "vllm-ref", "blocks",                                               \
    "where(p == 0, 0, 1 / p) left out: a zero block (scale 0x00) scales by +Inf and its codes are NaN (no code)")

/// One row of the catalogue, for C++ readers (tests); CMake reads the X lines above.
struct QuantBug {
  const char* name;
  unsigned ops;          ///< the mask above
  const char* contract;  ///< "first" or a contract of `fuseproof ops`
  const char* klass;     ///< the audit class expected to kill it ("none": the control)
  const char* what;
};

inline constexpr QuantBug kQuantBugs[] = {
#define FUSEPROOF_QUANT_BUG_ROW(fault, name, ops, contract, klass, what) {name, ops, contract, klass, what},
    FUSEPROOF_QUANT_BUGS(FUSEPROOF_QUANT_BUG_ROW)
#undef FUSEPROOF_QUANT_BUG_ROW
};

}  // namespace fuseproof::mutants
