// family_ops.h: the built-in kernels of the op family besides bias_gelu_tanh: each op's element function and where
// its two inputs sit, for device and host (the CUDA kernel and its CPU emulation run the same code).
#pragma once

#include <cstdint>

#include "activation_math.h"
#include "half_convert.h"

namespace fuseproof::kernel {

/// The built-in family kernels (bias_gelu_tanh has its own, tuned kernel: bias_gelu_tanh.cu).
enum class FamilyOp : int { kBiasGeluErf, kSiluAndMul, kGeluTanhAndMul, kGeluAndMul };

/// What an op computes and reads. Packed ops read x[r, c] (gate) and x[r, width + c] (up) of one [rows, 2 * width]
/// tensor, vLLM's layout; bias ops read x[r, c] and bias[c].
template <FamilyOp Op>
struct FamilyTraits;

template <>
struct FamilyTraits<FamilyOp::kBiasGeluErf> {
  static constexpr const char* kName = "bias_gelu_erf";
  static constexpr bool kPacked = false;
  static constexpr Act kAct = Act::kGeluErf;
};
template <>
struct FamilyTraits<FamilyOp::kSiluAndMul> {
  static constexpr const char* kName = "silu_and_mul";
  static constexpr bool kPacked = true;
  static constexpr Act kAct = Act::kSilu;
};
template <>
struct FamilyTraits<FamilyOp::kGeluTanhAndMul> {
  static constexpr const char* kName = "gelu_tanh_and_mul";
  static constexpr bool kPacked = true;
  static constexpr Act kAct = Act::kGeluTanh;
};
template <>
struct FamilyTraits<FamilyOp::kGeluAndMul> {
  static constexpr const char* kName = "gelu_and_mul";
  static constexpr bool kPacked = true;
  static constexpr Act kAct = Act::kGeluErf;
};

/// One element. Bias ops: act(round_T(x + bias)) (eager's add rounds its tensor). Packed ops under the eager
/// contract: round_T(round_T(act(gate)) * up); under fp32 (kFp32): round_T(act(gate) * up) with both in binary32.
template <FamilyOp Op, Half D, bool kFp32>
FUSEPROOF_HD uint16_t family_element(uint16_t a, uint16_t b) {
  using T = FamilyTraits<Op>;
  const float fa = half_to_float<D>(a), fb = half_to_float<D>(b);
  if constexpr (!T::kPacked) {
    const float sum = half_to_float<D>(float_to_half_rn<D>(add_rn(fa, fb)));
    return float_to_half_rn<D>(activation<T::kAct>(sum));
  } else if constexpr (kFp32) {
    return float_to_half_rn<D>(mul_rn(activation<T::kAct>(fa), fb));
  } else {
    const float act = half_to_float<D>(float_to_half_rn<D>(activation<T::kAct>(fa)));
    return float_to_half_rn<D>(mul_rn(act, fb));
  }
}

/// Elements per 16-byte vector: every width is a multiple of it.
inline constexpr int kFamilyVectorElems = 8;

/// The offsets of element (r, c)'s inputs from each input's own pointer, for an output of width `w` (up's pointer is
/// x + w in the packed layout).
template <FamilyOp Op>
FUSEPROOF_HD int64_t family_in0(int64_t r, int64_t c, int64_t w) {
  return FamilyTraits<Op>::kPacked ? r * 2 * w + c : r * w + c;
}
template <FamilyOp Op>
FUSEPROOF_HD int64_t family_in1(int64_t r, int64_t c, int64_t w) {
  return FamilyTraits<Op>::kPacked ? r * 2 * w + c : c;
}

}  // namespace fuseproof::kernel
