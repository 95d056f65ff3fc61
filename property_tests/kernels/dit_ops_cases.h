// dit_ops_cases.h: hand-derived bit patterns of gated_residual and modulate at each rounding that decides a case,
// under the eager and fma contracts (the emulation and the CUDA kernel tests share them).
#pragma once

#include <cstdint>

#include "kernels/family_ops.h"
#include "kernels/fuseproof_kernel_abi.h"

namespace fuseproof::test {

inline constexpr kernel::FamilyOp kGated = kernel::FamilyOp::kGatedResidual, kModulate = kernel::FamilyOp::kModulate;
inline constexpr int32_t kBf = FUSEPROOF_DTYPE_BF16, kFp = FUSEPROOF_DTYPE_FP16;

inline const char* op_name(kernel::FamilyOp op) { return op == kGated ? "gated_residual" : "modulate"; }
inline const char* dtype_name(int32_t d) { return d == kBf ? "bf16" : "fp16"; }

/// One triple (x, input 1, input 2 in declared order) and what each contract gives, in bits.
struct Case {
  kernel::FamilyOp op;
  int32_t dtype;
  uint16_t x, a, b;
  uint16_t eager, fma;
  const char* why;
};

// Patterns: bf16 | S |EEEEEEEE|MMMMMMM| (1.0 = 0x3F80, ulp at 1 = 2^-7); fp16 | S |EEEEE|MMMMMMMMMM| (1.0 = 0x3C00,
// ulp at 1 = 2^-10). Products of two halves are exact in binary32 (8 + 8, 11 + 11 significant bits).
inline const Case kCases[] = {
    // -0: eager's add gives -0 only for -0 + -0; p = gate * y is -0 when the product of signed zeros is negative.
    {kGated, kBf, 0x8000, 0x0000, 0x8000, 0x8000, 0x8000, "x = -0, p = +0 * -0 = -0: -0 + -0 = -0"},
    {kGated, kBf, 0x8000, 0x3F80, 0x8000, 0x8000, 0x8000, "x = -0, p = 1 * -0 = -0"},
    {kGated, kBf, 0x0000, 0x0000, 0x8000, 0x0000, 0x0000, "x = +0, p = -0: +0 + -0 = +0"},
    {kGated, kFp, 0x8000, 0x0000, 0x8000, 0x8000, 0x8000, "x = -0, p = -0"},
    // fma against eager where round_T(gate * y) drops bits the add needs. bf16: gate = 1 + 2^-7, y = 1 + 3 * 2^-7,
    // gate * y = 1 + 2^-5 + 3 * 2^-14; eager p = 1 + 2^-5 (3 * 2^-14 < half an ulp, 2^-8), x + p = -1 + p = 2^-5
    // (0x3D00). fma: 2^-5 + 3 * 2^-14 = 2^-5 (1 + 0.75 ulp) rounds up to 2^-5 (1 + 2^-7) (0x3D01).
    {kGated, kBf, 0xBF80, 0x3F81, 0x3F83, 0x3D00, 0x3D01, "x + round(gate * y) against fmaf: 2^-5 against 2^-5 + 1 ulp"},
    // fp16, the same with 2^-10: gate * y = 1 + 2^-8 + 3 * 2^-20, p = 1 + 2^-8, -1 + p = 2^-8 (0x1C00); fma
    // 2^-8 (1 + 0.75 ulp) -> 2^-8 (1 + 2^-10) (0x1C01).
    {kGated, kFp, 0xBC00, 0x3C01, 0x3C03, 0x1C00, 0x1C01, "x + round(gate * y) against fmaf: 2^-8 against 2^-8 + 1 ulp"},
    // The sign of an underflowed product. bf16: gate * y = 2^-133 * -2^-133 = -2^-266 rounds to -0 in binary32, p =
    // -0, +0 + -0 = +0; fmaf(2^-133, -2^-133, +0) is the exact -2^-266 rounded once: -0.
    {kGated, kBf, 0x0000, 0x0001, 0x8001, 0x0000, 0x8000, "underflow: eager +0 + -0, fma keeps the product's sign"},
    // fp16: gate * y = -2^-48 is a binary32 normal; round_fp16 gives -0, +0 + -0 = +0; fmaf gives -2^-48 -> -0.
    {kGated, kFp, 0x0000, 0x0001, 0x8001, 0x0000, 0x8000, "underflow: eager +0 + -0, fma keeps the product's sign"},
    // fp16 overflow of the intermediate: gate * y = 2 * 65504 = 131008 >= 65520 -> p = +Inf, -65504 + Inf = Inf;
    // fmaf(2, 65504, -65504) = 65504 (0x7BFF).
    {kGated, kFp, 0xFBFF, 0x4000, 0x7BFF, 0x7C00, 0x7BFF, "p overflows to Inf in eager, not in fma"},
    // NaN in any input, and Inf - Inf, give the ABI's 0x7FFF.
    {kGated, kBf, 0x3F80, 0x7FC1, 0x3F80, 0x7FFF, 0x7FFF, "gate NaN"},
    {kGated, kBf, 0x7F80, 0xFF80, 0x3F80, 0x7FFF, 0x7FFF, "Inf + -Inf"},
    {kGated, kFp, 0x3C00, 0x3C00, 0xFE01, 0x7FFF, 0x7FFF, "y a negative NaN"},
    // modulate, bf16: scale = 2^-8 (0x3B80): 1 + 2^-8 is a tie (half of 2^-7) and rounds to even, s = 1, m = 1.5,
    // out = 1.5 (0x3FC0). 1 + scale kept in binary32: 1.5 (1 + 2^-8) = 1.5 + 0.75 ulp -> 1.5 + 2^-7 (0x3FC1), which
    // is also fmaf(1.5, 1 + 2^-8, 0).
    {kModulate, kBf, 0x3FC0, 0x3B80, 0x0000, 0x3FC0, 0x3FC1, "1 + scale a tie to 1; unrounded gives 1.5 + 1 ulp"},
    // scale = 3 * 2^-9 (0x3BC0): 1 + 3 * 2^-9 = 1 + 0.75 ulp -> s = 1 + 2^-7; m = 1.5 s = 1.5 + 2^-7 + 2^-8, a tie
    // between 0x3FC1 and 0x3FC2, to even: 0x3FC2. Unrounded: 1.5 (1 + 3 * 2^-9) = 1.5 + 2^-7 + 2^-10 -> 0x3FC1.
    {kModulate, kBf, 0x3FC0, 0x3BC0, 0x0000, 0x3FC2, 0x3FC1, "s rounds up, then m ties to even above the unrounded"},
    // fp16: scale = 2^-11 (0x1000): 1 + 2^-11 ties to 1, out = 1.5 (0x3E00); unrounded 1.5 + 0.75 ulp -> 0x3E01.
    {kModulate, kFp, 0x3E00, 0x1000, 0x0000, 0x3E00, 0x3E01, "1 + scale a tie to 1; unrounded gives 1.5 + 1 ulp"},
    // fp16: s = 2, m = 131008 -> Inf, Inf - 65504 = Inf; fmaf(65504, 2, -65504) = 65504.
    {kModulate, kFp, 0x7BFF, 0x3C00, 0xFBFF, 0x7C00, 0x7BFF, "m overflows to Inf in eager, not in fma"},
    // -0: s = 1, m = -0 * 1 = -0, -0 + -0 = -0; with shift = +0 the sum is +0.
    {kModulate, kBf, 0x8000, 0x0000, 0x8000, 0x8000, 0x8000, "x = -0, shift = -0"},
    {kModulate, kBf, 0x8000, 0x0000, 0x0000, 0x0000, 0x0000, "x = -0, shift = +0"},
    {kModulate, kFp, 0x8000, 0x0000, 0x8000, 0x8000, 0x8000, "x = -0, shift = -0"},
    // scale = -1: s = +0, m = x * +0 (+0 for x > 0), m + -0 = +0.
    {kModulate, kBf, 0x3F80, 0xBF80, 0x8000, 0x0000, 0x0000, "scale = -1: s = +0"},
    {kModulate, kBf, 0x3F80, 0x7FC0, 0x0000, 0x7FFF, 0x7FFF, "scale NaN"},
    {kModulate, kFp, 0x7C00, 0xBC00, 0x0000, 0x7FFF, 0x7FFF, "Inf * (1 + -1) = Inf * 0"},
};

/// How many of kCases the two contracts give different bits for.
inline constexpr int kCasesWhereContractsDiffer = 9;

}  // namespace fuseproof::test
