// family_ops.h: the built-in kernels of the op family besides bias_gelu_tanh: each op's element function and where
// its inputs sit, for device and host (the CUDA kernel and its CPU emulation run the same code).
#pragma once

#include <cstdint>

#include "activation_math.h"
#include "half_convert.h"

namespace fuseproof::kernel {

/// The built-in family kernels (bias_gelu_tanh has its own, tuned kernel: bias_gelu_tanh.cu).
enum class FamilyOp : int { kBiasGeluErf, kSiluAndMul, kGeluTanhAndMul, kGeluAndMul, kGatedResidual, kModulate };

/// The arithmetic a kernel claims (the descriptor's contract string, kernels/fuseproof_kernel_abi.h): eager's
/// composition with every intermediate rounded to T; fp32 (the *_and_mul ops) act(gate) * up in binary32; fma
/// (gated_residual, modulate) one binary32 fmaf rounded once.
enum class Contract : int { kEager, kFp32, kFma };

/// "eager", "fp32" or "fma": the descriptor's contract string.
constexpr const char* contract_name(Contract c) {
  return c == Contract::kFp32 ? "fp32" : c == Contract::kFma ? "fma" : "eager";
}

/// What an op computes and reads. Packed ops read x[r, c] (gate) and x[r, width + c] (up) of one [rows, 2 * width]
/// tensor, vLLM's layout; bias ops read x[r, c] and bias[c]; the 3-input ops read x[r, c] and, for every input whose
/// bit is set in group_mask, row r / group_rows of a [rows / group_rows, width] tensor (a DiT's [batch, 1, d]).
/// These facts restate the op spec (reference/op_registry.cpp) for the device, where the spec cannot go:
/// `Kernels_FamilyFacts.EqualTheOpSpec` holds them to it.
struct FamilyFacts {
  const char* name;
  bool packed;
  int inputs;
  unsigned group_mask;
  Contract other;  ///< the contract besides eager it ships (kEager: none)
  Act act;         ///< the activation of the 2-input ops (unused by the 3-input ops)
  const char* input_names[3];  ///< in declared order (nullptr past `inputs`), as the spec names them
};

/// One row per FamilyOp, in its order. gated_residual: out = x + gate * y, inputs (x, gate, y), gate group-broadcast;
/// modulate: out = x * (1 + scale) + shift, inputs (x, scale, shift), scale and shift group-broadcast.
inline constexpr FamilyFacts kFamilyFacts[] = {
    {"bias_gelu_erf", false, 2, 0b000, Contract::kEager, Act::kGeluErf, {"x", "bias", nullptr}},
    {"silu_and_mul", true, 2, 0b000, Contract::kFp32, Act::kSilu, {"gate", "up", nullptr}},
    {"gelu_tanh_and_mul", true, 2, 0b000, Contract::kFp32, Act::kGeluTanh, {"gate", "up", nullptr}},
    {"gelu_and_mul", true, 2, 0b000, Contract::kFp32, Act::kGeluErf, {"gate", "up", nullptr}},
    {"gated_residual", false, 3, 0b010, Contract::kFma, Act::kGeluErf, {"x", "gate", "y"}},
    {"modulate", false, 3, 0b110, Contract::kFma, Act::kGeluErf, {"x", "scale", "shift"}},
};
inline constexpr int kFamilyOps = int(sizeof kFamilyFacts / sizeof kFamilyFacts[0]);
static_assert(kFamilyOps == int(FamilyOp::kModulate) + 1, "kFamilyFacts has one row per FamilyOp");

/// kFamilyFacts[Op] as a compile-time constant (`if constexpr (kFamily<Op>.packed)`).
template <FamilyOp Op>
inline constexpr FamilyFacts kFamily = kFamilyFacts[int(Op)];

/// Whether op Op ships contract C (eager always; fp32 for the packed ops; fma for the 3-input ops).
template <FamilyOp Op>
constexpr bool family_has_contract(Contract c) {
  return c == Contract::kEager || c == kFamily<Op>.other;
}

/// gated_residual's element. eager: p = round_T(gate * y) (the binary32 product of two halves is exact, so p is
/// correctly rounded), then round_T(x + p) (binary32 add, then T: eager's two tensors). fma: round_T(fmaf(gate, y, x)).
/// mul_rn / add_rn are __fmul_rn / __fadd_rn on the device, so nvcc cannot contract the eager pair into an FMA.
template <Half D, Contract C>
FUSEPROOF_HD uint16_t gated_residual_element(uint16_t x, uint16_t gate, uint16_t y) {
  const float fx = half_to_float<D>(x), fg = half_to_float<D>(gate), fy = half_to_float<D>(y);
  if constexpr (C == Contract::kFma) {
    return float_to_half_rn<D>(fma_rn(fg, fy, fx));
  } else {
    const float p = half_to_float<D>(float_to_half_rn<D>(mul_rn(fg, fy)));
    return float_to_half_rn<D>(add_rn(fx, p));
  }
}

/// modulate's element. eager: s = round_T(1 + scale), m = round_T(x * s), round_T(m + shift) (three tensors, each
/// rounded). fma: round_T(fmaf(x, 1 + scale, shift)) with 1 + scale rounded to binary32 only.
template <Half D, Contract C>
FUSEPROOF_HD uint16_t modulate_element(uint16_t x, uint16_t scale, uint16_t shift) {
  const float fx = half_to_float<D>(x), fs = half_to_float<D>(scale), fh = half_to_float<D>(shift);
  if constexpr (C == Contract::kFma) {
    return float_to_half_rn<D>(fma_rn(fx, add_rn(1.0f, fs), fh));
  } else {
    const float s = half_to_float<D>(float_to_half_rn<D>(add_rn(1.0f, fs)));
    const float m = half_to_float<D>(float_to_half_rn<D>(mul_rn(fx, s)));
    return float_to_half_rn<D>(add_rn(m, fh));
  }
}

/// One element from the op's inputs in declared order (`c` unused by the 2-input ops). Bias ops: act(round_T(x +
/// bias)) (eager's add rounds its tensor). Packed ops under the eager contract: round_T(round_T(act(gate)) * up);
/// under fp32: round_T(act(gate) * up) with both in binary32. gated_residual, modulate: the functions above.
template <FamilyOp Op, Half D, Contract C>
FUSEPROOF_HD uint16_t family_element(uint16_t a, uint16_t b, uint16_t c = 0) {
  constexpr FamilyFacts T = kFamily<Op>;
  if constexpr (Op == FamilyOp::kGatedResidual) {
    return gated_residual_element<D, C>(a, b, c);
  } else if constexpr (Op == FamilyOp::kModulate) {
    return modulate_element<D, C>(a, b, c);
  } else {
    (void)c;
    const float fa = half_to_float<D>(a), fb = half_to_float<D>(b);
    if constexpr (!T.packed) {
      const float sum = half_to_float<D>(float_to_half_rn<D>(add_rn(fa, fb)));
      return float_to_half_rn<D>(activation<T.act>(sum));
    } else if constexpr (C == Contract::kFp32) {
      return float_to_half_rn<D>(mul_rn(activation<T.act>(fa), fb));
    } else {
      const float act = half_to_float<D>(float_to_half_rn<D>(activation<T.act>(fa)));
      return float_to_half_rn<D>(mul_rn(act, fb));
    }
  }
}

/// Elements per 16-byte vector: every width is a multiple of it.
inline constexpr int kFamilyVectorElems = 8;

/// The offset of element (r, c)'s input `input` from that input's own pointer, for an output of width `w` (up's
/// pointer is x + w in the packed layout; a group-broadcast input's row is r / group_rows).
template <FamilyOp Op>
FUSEPROOF_HD int64_t family_in(int input, int64_t r, int64_t c, int64_t w, int64_t group_rows) {
  constexpr FamilyFacts T = kFamily<Op>;
  if constexpr (T.packed) return r * 2 * w + c;
  if (T.inputs == 2 && input == 1) return c;  // the bias row
  if ((T.group_mask >> input) & 1u) return (r / group_rows) * w + c;
  return r * w + c;
}

}  // namespace fuseproof::kernel
