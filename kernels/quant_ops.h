// quant_ops.h: the built-in quantization kernels' arithmetic for device and host (the CUDA kernel and its CPU
// emulation run this code): per op its block, element format, inputs and activation; per contract its scale and
// element steps; the E4M3, E2M1 and power-of-two element functions; the scale layouts.
#pragma once

#include <cstdint>
#include <cstring>

#include "activation_math.h"
#include "bias_gelu_tanh_body.h"
#include "family_ops.h"
#include "half_convert.h"

namespace fuseproof::kernel {

/// The quantization ops of `fuseproof ops` (section "quantization ops"), in its order.
enum class QuantOp : int {
  kFp8GroupQuant,
  kNvfp4Quant,
  kSiluAndMulFp8GroupQuant,
  kSiluAndMulNvfp4Quant,
  kBiasGeluTanhNvfp4Quant,
};

/// The contracts, named as `fuseproof ops` names them (docs/OPS.md, Quantization ops and contracts).
enum class QuantContract : int { kVllmRef, kRcpApprox, kTe, kFlashinferExact, kFp8Group, kFp8GroupUe8m0 };
inline constexpr int kQuantContracts = int(QuantContract::kFp8GroupUe8m0) + 1;

constexpr const char* quant_contract_name(QuantContract c) {
  switch (c) {
    case QuantContract::kVllmRef: return "vllm-ref";
    case QuantContract::kRcpApprox: return "rcp-approx";
    case QuantContract::kTe: return "te";
    case QuantContract::kFlashinferExact: return "flashinfer-exact";
    case QuantContract::kFp8Group: return "fp8-group";
    case QuantContract::kFp8GroupUe8m0: return "fp8-group-ue8m0";
  }
  return "?";
}

/// The NVFP4 contracts take one binary32 scalar (global_scale), the FP8 group contracts none.
constexpr bool quant_contract_is_nvfp4(QuantContract c) {
  return c != QuantContract::kFp8Group && c != QuantContract::kFp8GroupUe8m0;
}
constexpr int quant_contract_scalars(QuantContract c) { return quant_contract_is_nvfp4(c) ? 1 : 0; }

/// Where an op's inputs sit: x [rows, width]; gate and up the halves of one [rows, 2 * width] tensor (vLLM's layout);
/// x and a bias row [width] (stride {0, 1}).
enum class QuantInputs : int { kX, kPackedGateUp, kXBias };

/// Deliberate faults, for the mutant plugins only (kernels/mutants/quant_bugs.h names each and the class that must
/// kill it); every built-in kernel is kNone. Each changes one step of the code below and nothing else.
enum class QuantFault : int {
  kNone,
  kInexactRcp,         ///< the exact contracts' reciprocals replaced (device: rcp.approx.ftz; host: rcp_inexact)
  kScaleUnsaturated,   ///< vllm-ref's +-448 clamp left out: a scale above 464 casts to E4M3 NaN (0x7F)
  kAmaxShort,          ///< the block's amax over all members but the last
  kAmaxSigned,         ///< amax = max(x), not max(|x|)
  kNegZeroLost,        ///< the E4M3 code of a -0 result written as +0 (0x80 -> 0x00)
  kSwizzleTileOff,     ///< swizzled scales of k-tile t written to k-tile (t + 1) mod k_tiles
  kZeroBlockInfScale,  ///< vllm-ref's where(p == 0, 0, 1 / p) left out: a zero block scales by +Inf, its codes NaN
};

/// What a quantization op reads and writes: its block (elements per scale), whether its codes are E2M1 (else E4M3),
/// where its inputs sit. These facts restate the quantization registry (reference/quant_registry.cpp) for the device:
/// `Kernels_FamilyFacts.QuantFactsEqualTheQuantSpec` holds them to it.
struct QuantFacts {
  const char* name;
  int block;
  bool e2m1;
  QuantInputs inputs;
};

/// One row per QuantOp, in its order: the quantizers alone, silu_and_mul (eager, the family's element function) then
/// fp8_group or nvfp4, bias_gelu_tanh (eager: gelu_tanh(round_T(x + bias))) then nvfp4.
inline constexpr QuantFacts kQuantFacts[] = {
    {"fp8_group_quant", 128, false, QuantInputs::kX},
    {"nvfp4_quant", 16, true, QuantInputs::kX},
    {"silu_and_mul_fp8_group_quant", 128, false, QuantInputs::kPackedGateUp},
    {"silu_and_mul_nvfp4_quant", 16, true, QuantInputs::kPackedGateUp},
    {"bias_gelu_tanh_nvfp4_quant", 16, true, QuantInputs::kXBias},
};
inline constexpr int kQuantOps = int(sizeof kQuantFacts / sizeof kQuantFacts[0]);
static_assert(kQuantOps == int(QuantOp::kBiasGeluTanhNvfp4Quant) + 1, "kQuantFacts has one row per QuantOp");

/// kQuantFacts[Op] as a compile-time constant.
template <QuantOp Op>
inline constexpr QuantFacts kQuant = kQuantFacts[int(Op)];

/// Whether op Op ships contract c: the NVFP4 ops vllm-ref (first), rcp-approx, te, flashinfer-exact; the FP8 group
/// ops fp8-group (first), fp8-group-ue8m0.
template <QuantOp Op>
constexpr bool quant_has_contract(QuantContract c) {
  return quant_contract_is_nvfp4(c) == kQuant<Op>.e2m1;
}

/// Elements per 16-byte vector: inputs and codes are aligned to it and every width is a multiple of it.
inline constexpr int kQuantVectorBytes = 16;

/// The scale layouts of kernels/fuseproof_kernel_abi.h (FUSEPROOF_SCALE_*): swizzled for the NVFP4 ops only.
enum class QuantLayout : int { kLinear = 0, kSwizzled128x4 = 1 };

// ------------------------------------------------------------------------------------------------------------------
// binary32 steps: one rounding each, every NaN result the GPU's positive canonical 0x7FFFFFFF (x86 would give
// 0xFFC00000 or keep an operand's sign), so that host and device agree on every bit a later step can see.
// f32_bits and f32_of: kernels/half_convert.h.

FUSEPROOF_HD bool is_nan(float f) { return (f32_bits(f) & 0x7FFFFFFFu) > 0x7F800000u; }
FUSEPROOF_HD float canon(float f) { return is_nan(f) ? f32_of(0x7FFFFFFFu) : f; }

FUSEPROOF_HD float qmul(float a, float b) { return canon(mul_rn(a, b)); }
/// IEEE division, correctly rounded (torch's tensor / tensor): __fdiv_rn on the device.
FUSEPROOF_HD float qdiv(float a, float b) {
#if defined(__CUDA_ARCH__)
  return canon(__fdiv_rn(a, b));
#else
  return canon(a / b);
#endif
}
/// 1 / a correctly rounded (torch.reciprocal): __frcp_rn on the device.
FUSEPROOF_HD float rcp_exact(float a) {
#if defined(__CUDA_ARCH__)
  return canon(__frcp_rn(a));
#else
  return canon(1.0f / a);
#endif
}

/// A reciprocal that is not correctly rounded, the host's stand-in for an approximate one (the inexact-reciprocal
/// mutant only): the estimate 1/a truncated to 12 significant bits, then one Newton step r + r * (1 - a * r) as two
/// binary32 fmas. It is one ulp off (either way, never more) on about 12% of significands: 1 / 0x3FC780EB gives
/// 0x3F243F67 where the correctly rounded reciprocal is 0x3F243F68. Zeros, infinities and NaN as 1 / a.
inline float rcp_inexact(float a) {
  if (a == 0.0f || is_nan(a) || (f32_bits(a) & 0x7FFFFFFFu) == 0x7F800000u) return canon(1.0f / a);
  const float est = f32_of(f32_bits(float(1.0 / double(a))) & 0xFFFFF800u);
  const float e = std::fma(-a, est, 1.0f);
  return canon(std::fma(est, e, est));
}

/// PTX rcp.approx.ftz.f32 on the device (the rcp-approx contract, and the inexact-reciprocal mutant); the host has
/// no such instruction (the emulation does not claim rcp-approx) and compiles rcp_inexact in its place.
FUSEPROOF_HD float rcp_approx_ftz(float a) {
#if defined(__CUDA_ARCH__)
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(a));
  return canon(r);
#else
  return rcp_inexact(a);
#endif
}

/// torch.min / maximum / clamp against constants: a NaN operand propagates.
FUSEPROOF_HD float nan_min(float a, float v) { return is_nan(a) ? a : (a < v ? a : v); }
FUSEPROOF_HD float nan_max(float a, float v) { return is_nan(a) ? a : (a > v ? a : v); }
FUSEPROOF_HD float nan_clamp(float a, float lo, float hi) { return is_nan(a) ? a : a < lo ? lo : a > hi ? hi : a; }

/// Round a binary32 value 0 <= x < 2^22 to the nearest integer, ties to even: adding 2^23 leaves no fraction bits.
FUSEPROOF_HD uint32_t rne_small_int(float x) {
  const float big = 8388608.0f;  // 2^23
  return uint32_t(add_rn(add_rn(x, big), -big));
}

// ------------------------------------------------------------------------------------------------------------------
// E4M3 (fn), the FP8 element and NVFP4 scale format:
//   | S |EEEE|MMM|   bias 7; E = 1..15: (8 + M) * 2^(E - 10); E = 0: M * 2^-9; 0x7F / 0xFF NaN; 0x7E = 448 the largest
// finite (ulp 32 at the top, so 464 is the overflow tie and rounds to even 0x7E). Two overflow conventions:
//   saturate  __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3): |x| > 464 and Inf give +-448; every NaN 0x7F.
//   nan       torch `to(float8_e4m3fn)`: |x| > 464, Inf and NaN give 0x7F | sign (464 itself ties to 0x7E).

inline constexpr uint8_t kE4m3Nan = 0x7F;
inline constexpr uint8_t kE4m3Max = 0x7E;

FUSEPROOF_HD uint8_t f32_to_e4m3(float f, bool saturate) {
  const uint32_t u = f32_bits(f), a = u & 0x7FFFFFFFu;
  const uint8_t sign = uint8_t((u >> 24) & 0x80u);
  if (a > 0x7F800000u) return saturate ? kE4m3Nan : uint8_t(sign | kE4m3Nan);
  if (a > 0x43E80000u) return uint8_t(sign | (saturate ? kE4m3Max : kE4m3Nan));  // above 464, Inf included
  if (a >= 0x3C800000u) {
    // 2^-6 <= |f| <= 464: the exponent rebiased (127 -> 7) keeps 3 mantissa bits; the 20 dropped bits round to
    // nearest even by adding 0x7FFFF plus the kept LSB (a carry moves into the exponent, as it should).
    const uint32_t r = a - (120u << 23);
    return uint8_t(sign | ((r + 0x7FFFFu + ((r >> 20) & 1u)) >> 20));
  }
  // Below 2^-6: multiples of 2^-9; |f| * 512 is exact (a power-of-two scale), then rounded to an integer 0..8 (8 is
  // the code 0x08 of 2^-6).
  return uint8_t(sign | rne_small_int(mul_rn(f32_of(a), 512.0f)));
}

/// The exact value of an E4M3 code (a NaN for 0x7F / 0xFF).
FUSEPROOF_HD float e4m3_to_f32(uint8_t c) {
  const uint32_t sign = uint32_t(c & 0x80u) << 24;
  const uint32_t e = (c >> 3) & 0xFu, m = c & 7u;
  if (e == 15 && m == 7) return f32_of(sign | 0x7FC00000u);
  if (e == 0) return f32_of(f32_bits(mul_rn(float(m), 1.0f / 512.0f)) | sign);
  return f32_of(sign | ((e + 120u) << 23) | (m << 20));
}

// ------------------------------------------------------------------------------------------------------------------
// E2M1, the NVFP4 element: | S |EE|M|, magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6 (codes 0..7), bit 3 the sign, no NaN.
// cvt.rn.satfinite.e2m1x2.f32 rounds to nearest even (the even neighbour has M = 0), saturates |x| > 6 and Inf to
// +-6, keeps the sign of a zero (-0.0 and -0.25 give 0x8), and gives +6 (0x7) for every NaN.

/// cvt.rn.satfinite.e2m1 of one value, in software (sm_90 and the host).
FUSEPROOF_HD uint8_t f32_to_e2m1(float f) {
  const uint32_t u = f32_bits(f), a = u & 0x7FFFFFFFu;
  const uint8_t sign = uint8_t((u >> 28) & 0x8u);
  if (a > 0x7F800000u) return 0x7;
  if (a > 0x40C00000u) return uint8_t(sign | 0x7);  // above 6
  const float m = f32_of(a);
  // Each binade's grid as integers: [0, 2) in steps of 0.5 (codes 0..4), [2, 4) in steps of 1 (codes 4..6), [4, 6]
  // in steps of 2 (codes 6..7). The integer's parity is the code's, so ties to even integers are ties to even codes.
  uint32_t code;
  if (a < 0x40000000u) code = rne_small_int(mul_rn(m, 2.0f));
  else if (a < 0x40800000u) code = rne_small_int(m) + 2u;
  else code = rne_small_int(mul_rn(m, 0.5f)) + 4u;
  return uint8_t(sign | code);
}

// The hardware conversion: sm_100a and later arch- or family-specific targets (cvt .e2m1x2 is not in sm_100's
// portable PTX).
#if defined(__CUDA_ARCH__) &&                                                                            \
    (defined(__CUDA_ARCH_FEAT_SM100_ALL) || defined(__CUDA_ARCH_FEAT_SM103_ALL) ||                       \
     (defined(__CUDA_ARCH_SPECIFIC__) && __CUDA_ARCH_SPECIFIC__ >= 1000) ||                             \
     (defined(__CUDA_ARCH_FAMILY_SPECIFIC__) && __CUDA_ARCH_FAMILY_SPECIFIC__ >= 1000))
#define FUSEPROOF_HAVE_CVT_E2M1 1
#else
#define FUSEPROOF_HAVE_CVT_E2M1 0
#endif

/// Two elements' codes in one byte, lo in bits 3..0 and hi in bits 7..4 (cvt's first source goes to the upper nibble).
FUSEPROOF_HD uint8_t f32x2_to_e2m1x2(float lo, float hi) {
#if FUSEPROOF_HAVE_CVT_E2M1
  uint32_t r;
  asm("{\n .reg .b8 b;\n cvt.rn.satfinite.e2m1x2.f32 b, %2, %1;\n mov.b32 %0, {b, b, b, b};\n}"
      : "=r"(r)
      : "f"(lo), "f"(hi));
  return uint8_t(r & 0xFFu);
#else
  return uint8_t(f32_to_e2m1(lo) | (f32_to_e2m1(hi) << 4));
#endif
}

// ------------------------------------------------------------------------------------------------------------------
// The power-of-two ceiling of fp8-group-ue8m0: torch.exp2(torch.ceil(torch.log2(s))). From the bits: a power of two
// is itself, anything else the next one up. This is what the binary32 log2 gives on every s the op can produce (s is
// amax * f32(1/448) of a bf16/fp16 amax, a power of two or at least 2^-11 away from one: docs/OPS.md), not where log2's
// last bit rounds down onto an integer. NaN and s < 0 give NaN, 0 gives 0, +Inf stays, 2^128 overflows to +Inf.
FUSEPROOF_HD float pow2_ceil(float s) {
  const uint32_t u = f32_bits(s);
  if (is_nan(s) || (u >> 31)) return (u & 0x7FFFFFFFu) == 0 ? s : f32_of(0x7FFFFFFFu);
  if (u == 0 || u == 0x7F800000u) return s;
  const uint32_t e = u >> 23, m = u & 0x7FFFFFu;
  if (e == 0) {  // subnormal: the smallest power of two >= m units of 2^-149 (2^-126 at most, the bits 0x00800000)
    uint32_t p = 1;
    while (p < m) p <<= 1;
    return f32_of(p);
  }
  if (m == 0) return s;
  return e + 1 >= 255 ? f32_of(0x7F800000u) : f32_of((e + 1) << 23);
}

// ------------------------------------------------------------------------------------------------------------------
// Block amax over the block's T patterns. |x| patterns of one format order like their magnitudes (NaN patterns above
// Inf's), so the maximum is an integer maximum of the patterns with the sign cleared.
//   torch.max (every contract but rcp-approx): a NaN member makes the amax NaN (which NaN does not matter: every
//     step after it is arithmetic, whose NaN is canonical).
//   __hmax2 (rcp-approx): NaN members are dropped; all NaN gives 0x7FFF.

template <Half D>
FUSEPROOF_HD bool half_is_nan(uint16_t abs_bits) {
  return abs_bits > (D == Half::kBf16 ? 0x7F80u : 0x7C00u);
}

template <Half D, QuantContract C, QuantFault F = QuantFault::kNone>
FUSEPROOF_HD float block_amax(const uint16_t* v, int n) {
  if constexpr (F == QuantFault::kAmaxShort) n -= 1;
  if constexpr (F == QuantFault::kAmaxSigned) {
    // max(x): the signed maximum, NaN propagating as torch.max does.
    float best = half_to_float<D>(v[0]);
    for (int i = 0; i < n; ++i) {
      const float x = half_to_float<D>(v[i]);
      if (is_nan(x)) return x;
      if (x > best) best = x;
    }
    return best;
  }
  uint16_t best = 0;
  bool any = false;
  for (int i = 0; i < n; ++i) {
    const uint16_t a = uint16_t(v[i] & 0x7FFFu);
    if (C == QuantContract::kRcpApprox && half_is_nan<D>(a)) continue;
    if (a > best) best = a;
    any = true;
  }
  return half_to_float<D>(any ? best : uint16_t(0x7FFF));
}

// ------------------------------------------------------------------------------------------------------------------
// The contracts' scale and element steps (reference source of each: `fuseproof ops`, docs/OPS.md).

/// Python floats torch narrows to binary32 once.
inline constexpr float kOneSixth = float(1.0 / 6.0);                // 0x3E2AAAAB
inline constexpr float kOne448th = float(1.0 / 448.0);              // 0x3B124925
inline constexpr float kUe8m0Floor = float(1.0 / (448.0 * 512.0));  // vLLM's _FP8_MIN_SCALING_FACTOR, 0x36924925
inline constexpr float kFltMax = 3.40282346638528859812e+38f;

/// A block's scale stage: what the elements are scaled by (`mult`: x * mult for NVFP4, x / mult for FP8 groups), and
/// what is stored (the E4M3 byte, or the binary32 value).
struct QuantBlockScale {
  float mult = 0.0f;
  uint8_t byte = 0;
  float value = 0.0f;
};

/// round_T(1e-10) widened: fp8-group's clamp(min=1e-10) on the T tensor (0 in fp16).
template <Half D>
FUSEPROOF_HD float fp8_group_eps() {
  return half_to_float<D>(float_to_half_rn<D>(1e-10f));
}

/// The exact contracts' reciprocal, or the fault's inexact one.
template <QuantFault F>
FUSEPROOF_HD float contract_rcp(float a) {
  if constexpr (F == QuantFault::kInexactRcp) return rcp_approx_ftz(a);
  else return rcp_exact(a);
}

/// The scale stage of contract C from the block amax (binary32, widened from T), the global scale g (NVFP4) and the
/// fp8-group eps.
template <QuantContract C, QuantFault F = QuantFault::kNone>
FUSEPROOF_HD QuantBlockScale quant_scale(float amax, float g, float eps) {
  QuantBlockScale s;
  if constexpr (C == QuantContract::kVllmRef || C == QuantContract::kFlashinferExact) {
    // vLLM ref_nvfp4_quant: e4m3(clamp(g * (amax * f32(1/6)), +-448)); flashinfer-exact: no clamp.
    const float sf = qmul(g, qmul(amax, kOneSixth));
    const bool clamp = C == QuantContract::kVllmRef && F != QuantFault::kScaleUnsaturated;
    s.byte = f32_to_e4m3(clamp ? nan_clamp(sf, -448.0f, 448.0f) : sf, false);
    const float q = e4m3_to_f32(s.byte);
    const float inv_g = g == 0.0f ? 0.0f : contract_rcp<F>(g);
    const float p = qmul(q, inv_g);
    s.mult = (p == 0.0f && F != QuantFault::kZeroBlockInfScale) ? 0.0f : contract_rcp<F>(p);
  } else if constexpr (C == QuantContract::kRcpApprox) {
    // cvt_warp_fp16_to_fp4: SFValue = g * (amax * rcp(6)), satfinite E4M3; out = q != 0 ? rcp(q * rcp(g)) : 0.
    const float sf = qmul(g, qmul(amax, rcp_approx_ftz(6.0f)));
    s.byte = f32_to_e4m3(sf, true);
    const float q = e4m3_to_f32(s.byte);
    const float rp = rcp_approx_ftz(qmul(q, rcp_approx_ftz(g)));
    s.mult = q == 0.0f ? 0.0f : rp;
  } else if constexpr (C == QuantContract::kTe) {
    // TransformerEngine: ges = min(g, FLT_MAX), 1 where 0; gds = 1 / ges; scale = e4m3(clamp(min(amax * (ges *
    // reciprocal(6)), FLT_MAX), +-448)); enc = min(1 / (scale * gds), FLT_MAX).
    const float ges1 = nan_min(g, kFltMax);
    const float ges = ges1 == 0.0f ? 1.0f : ges1;
    const float gds = qdiv(1.0f, ges);
    const float d = nan_min(qmul(amax, qmul(ges, contract_rcp<F>(6.0f))), kFltMax);
    s.byte = f32_to_e4m3(nan_clamp(d, -448.0f, 448.0f), false);
    const float q = e4m3_to_f32(s.byte);
    s.mult = nan_min(qdiv(1.0f, qmul(q, gds)), kFltMax);
  } else if constexpr (C == QuantContract::kFp8Group) {
    // native_per_token_group_quant_fp8: max(amax, round_T(1e-10)) * f32(1/448).
    const float a = is_nan(amax) ? amax : (amax < eps ? eps : amax);
    s.mult = qmul(a, kOne448th);
    s.value = s.mult;
  } else {
    // QuantFP8 use_ue8m0: max(exp2(ceil(log2(amax * f32(1/448)))), f32(1/229376)).
    s.mult = nan_max(pow2_ceil(qmul(amax, kOne448th)), kUe8m0Floor);
    s.value = s.mult;
  }
  return s;
}

/// The element step of contract C on one value (binary32, widened from T): the E4M3 byte, or for NVFP4 the scaled
/// and clamped value the E2M1 rounding takes (see e2m1_fix for the table contracts' zeros and NaN).
template <QuantContract C, QuantFault F = QuantFault::kNone>
FUSEPROOF_HD float nvfp4_scaled(float x, const QuantBlockScale& s) {
  const float y = qmul(x, s.mult);
  if constexpr (C == QuantContract::kRcpApprox) return y;  // cvt saturates by itself
  else return nan_clamp(y, -6.0f, 6.0f);
}

/// The nibble of an NVFP4 element from cvt's code `rne` of its scaled value y: vLLM's table (vllm-ref,
/// flashinfer-exact) codes +-0.0 as 0x0 (torch.sign(-0.0) is 0) and has no code for NaN (its NaN value; the nibble
/// 0xF, the low half of the reference's no-code byte 0xFF); TransformerEngine's table codes +-0.0 and NaN as 0x0;
/// rcp-approx is cvt's code.
template <QuantContract C>
FUSEPROOF_HD uint8_t e2m1_fix(float y, uint8_t rne) {
  if constexpr (C == QuantContract::kRcpApprox) {
    return rne;
  } else if constexpr (C == QuantContract::kTe) {
    return (is_nan(y) || y == 0.0f) ? uint8_t(0) : rne;
  } else {
    return is_nan(y) ? uint8_t(0xF) : y == 0.0f ? uint8_t(0) : rne;
  }
}

/// The E4M3 code of an FP8 group element: e4m3(clamp(x / scale, +-448)), eager's NaN convention.
template <QuantContract C, QuantFault F = QuantFault::kNone>
FUSEPROOF_HD uint8_t fp8_code(float x, const QuantBlockScale& s) {
  const uint8_t code = f32_to_e4m3(nan_clamp(qdiv(x, s.mult), -448.0f, 448.0f), false);
  if constexpr (F == QuantFault::kNegZeroLost) return code == 0x80 ? uint8_t(0) : code;
  else return code;
}

// ------------------------------------------------------------------------------------------------------------------
// Scale layouts (kernels/fuseproof_kernel_abi.h): linear r * blocks + k; swizzled 128x4 tiles of 512 cells,
// ((r / 128) * k_tiles + k / 4) * 512 + (r % 32) * 16 + ((r / 32) % 4) * 4 + k % 4, padded to 128 rows and 4 blocks.

FUSEPROOF_HD int64_t quant_k_tiles(int64_t blocks) { return (blocks + 3) / 4; }

/// Rows and blocks per row of the scale tensor's cells (padding included).
FUSEPROOF_HD int64_t quant_scale_rows(QuantLayout l, int64_t rows) {
  return l == QuantLayout::kLinear ? rows : (rows + 127) / 128 * 128;
}
FUSEPROOF_HD int64_t quant_scale_cols(QuantLayout l, int64_t blocks) {
  return l == QuantLayout::kLinear ? blocks : quant_k_tiles(blocks) * 4;
}

template <QuantFault F = QuantFault::kNone>
FUSEPROOF_HD int64_t quant_scale_offset(QuantLayout l, int64_t r, int64_t k, int64_t blocks) {
  if (l == QuantLayout::kLinear) return r * blocks + k;
  const int64_t k_tiles = quant_k_tiles(blocks);
  int64_t kt = k >> 2;
  if constexpr (F == QuantFault::kSwizzleTileOff) kt = (kt + 1) % k_tiles;
  return ((r >> 7) * k_tiles + kt) * 512 + (r & 31) * 16 + ((r >> 5) & 3) * 4 + (k & 3);
}

// ------------------------------------------------------------------------------------------------------------------
// One scale cell of a call: the block's activation stage, amax, scale, codes and stored scale, or a padding cell's
// 0x00. The CUDA kernel runs it once per thread; the emulation once per loop step.

/// A validated call's pointers and shape.
struct QuantArgs {
  const uint16_t* in0;  ///< x, or gate (up is gate + width)
  const uint16_t* in1;  ///< bias, or null
  uint8_t* codes;
  uint8_t* scales;
  int64_t rows, width, blocks;
  QuantLayout layout;
  float global_scale;
};

/// The op's activation stage: element (r, c) in T.
template <QuantOp Op, Half D>
FUSEPROOF_HD uint16_t quant_activation(const QuantArgs& a, int64_t r, int64_t c) {
  constexpr QuantInputs kIn = kQuant<Op>.inputs;
  if constexpr (kIn == QuantInputs::kX) {
    return a.in0[r * a.width + c];
  } else if constexpr (kIn == QuantInputs::kPackedGateUp) {
    const int64_t i = r * 2 * a.width + c;
    return family_element<FamilyOp::kSiluAndMul, D, Contract::kEager>(a.in0[i], a.in0[i + a.width]);
  } else {
    return bias_gelu_tanh_element<D>(a.in0[r * a.width + c], a.in1[c]);
  }
}

template <QuantOp Op, Half D, QuantContract C, QuantFault F = QuantFault::kNone>
FUSEPROOF_HD void quant_cell(const QuantArgs& a, int64_t r, int64_t k) {
  constexpr QuantFacts T = kQuant<Op>;
  constexpr int B = T.block;
  const int64_t off = quant_scale_offset<F>(a.layout, r, k, a.blocks);
  if (r >= a.rows || k >= a.blocks) {  // a padding cell of the swizzled layout (E4M3 scales: one byte)
    a.scales[off] = 0;
    return;
  }
  uint16_t v[B];
  for (int e = 0; e < B; ++e) v[e] = quant_activation<Op, D>(a, r, k * B + e);
  const QuantBlockScale s = quant_scale<C, F>(block_amax<D, C, F>(v, B), a.global_scale, fp8_group_eps<D>());
  if constexpr (T.e2m1) {
    uint8_t packed[B / 2];
    for (int j = 0; j < B / 2; ++j) {
      const float y0 = nvfp4_scaled<C, F>(half_to_float<D>(v[2 * j]), s);
      const float y1 = nvfp4_scaled<C, F>(half_to_float<D>(v[2 * j + 1]), s);
      const uint8_t pair = f32x2_to_e2m1x2(y0, y1);
      packed[j] = uint8_t(e2m1_fix<C>(y0, pair & 0xFu) | (e2m1_fix<C>(y1, pair >> 4) << 4));
    }
    std::memcpy(a.codes + r * (a.width / 2) + k * (B / 2), packed, B / 2);
    a.scales[off] = s.byte;
  } else {
    uint8_t out[B];
    for (int e = 0; e < B; ++e) out[e] = fp8_code<C, F>(half_to_float<D>(v[e]), s);
    std::memcpy(a.codes + r * a.width + k * B, out, B);
    std::memcpy(a.scales + 4 * off, &s.value, 4);
  }
}

}  // namespace fuseproof::kernel
