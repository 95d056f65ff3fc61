// half_convert.h: bf16/fp16 <-> binary32 for the kernel body: CUDA intrinsics on the device, bit code on the host.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define FUSEPROOF_HD __host__ __device__ __forceinline__
#else
#define FUSEPROOF_HD inline
#endif

namespace fuseproof::kernel {

/// The two 16-bit formats the fused kernel accepts, as a compile-time tag.
enum class Half : int { kBf16, kFp16 };

/// The pattern `cvt.rn.{bf16,f16}.f32` gives for every NaN on sm_80+ (the host emulation copies it).
constexpr uint16_t kCvtRnNan = 0x7FFF;

/// The binary32 encoding | S |EEEEEEEE|MMMMMMMMMMMMMMMMMMMMMMM| of f, and the float of an encoding (memcpy: no
/// aliasing, no conversion), on host and device.
FUSEPROOF_HD uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
FUSEPROOF_HD float f32_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

#if !defined(__CUDA_ARCH__)
namespace host {

/// bf16 | S |EEEEEEEE|MMMMMMM| is the top half of binary32: widening is a shift.
inline float bf16_to_float(uint16_t h) { return f32_of(uint32_t(h) << 16); }

/// fp16 | S |EEEEE|MMMMMMMMMM| (bias 15) -> binary32 (bias 127), exact; subnormals scale by 2^-24.
inline float fp16_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  const uint32_t mant = h & 0x3FFu;
  if (exp == 0) {
    // mant * 2^-24 is exact in binary32 (at most 10 significant bits).
    const float mag = float(mant) * f32_of(0x33800000u);  // 2^-24
    return f32_of(f32_bits(mag) | sign);
  }
  if (exp == 0x1F) return f32_of(sign | 0x7F800000u | (mant << 13));
  return f32_of(sign | ((exp + 112u) << 23) | (mant << 13));
}

/// Round to nearest even from the bits; NaN -> 0x7FFF as cvt.rn.bf16.f32 does.
inline uint16_t float_to_bf16_rn(float f) {
  const uint32_t u = f32_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return kCvtRnNan;
  // Add just under half an ulp of the kept part, plus its LSB so that exact halves round to even.
  return uint16_t((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

/// Round to nearest even; overflow to +-Inf from 65520 up; subnormals exact; NaN -> 0x7FFF as cvt.rn.f16.f32 does.
inline uint16_t float_to_fp16_rn(float f) {
  const uint32_t u = f32_bits(f);
  const uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return kCvtRnNan;
  if (a >= 0x477FF000u) return uint16_t(sign | 0x7C00u);  // >= 65520 = 65504 + ulp/2, a tie that rounds up to Inf
  if (a >= 0x38800000u) {                                   // >= 2^-14: a normal fp16
    // Rebias the exponent (127 -> 15) and round the 13 dropped mantissa bits; a carry bumps the exponent.
    const uint32_t lsb = (a >> 13) & 1u;
    return uint16_t(sign | ((a - (112u << 23) + 0xFFFu + lsb) >> 13));
  }
  // Below 2^-14: adding 0.5 (ulp 2^-24) rounds |f| to a multiple of 2^-24 with the FPU's ties-to-even.
  const float rounded = f32_of(a) + 0.5f;
  return uint16_t(sign | (f32_bits(rounded) - 0x3F000000u));
}
}  // namespace host
#endif

/// Exact widening of a 16-bit pattern of format D.
template <Half D>
FUSEPROOF_HD float half_to_float(uint16_t h) {
#if defined(__CUDA_ARCH__)
  if constexpr (D == Half::kBf16) return __bfloat162float(__ushort_as_bfloat16(h));
  else return __half2float(__ushort_as_half(h));
#else
  if constexpr (D == Half::kBf16) return host::bf16_to_float(h);
  else return host::fp16_to_float(h);
#endif
}

/// Round-to-nearest-even narrowing to format D (`__float2bfloat16_rn` / `__float2half_rn` on the device).
template <Half D>
FUSEPROOF_HD uint16_t float_to_half_rn(float f) {
#if defined(__CUDA_ARCH__)
  if constexpr (D == Half::kBf16) return __bfloat16_as_ushort(__float2bfloat16_rn(f));
  else return __half_as_ushort(__float2half_rn(f));
#else
  if constexpr (D == Half::kBf16) return host::float_to_bf16_rn(f);
  else return host::float_to_fp16_rn(f);
#endif
}

/// Widens the two patterns of one 32-bit word (element 0 in bits 15..0, as in memory) exactly.
/// bf16: | hi: S EEEEEEEE MMMMMMM | lo: S EEEEEEEE MMMMMMM | -> each half moved to the top of a binary32 (a shift or
/// a mask); fp16: one conversion per half (`__half22float2`).
template <Half D>
FUSEPROOF_HD void half2_to_float2(uint32_t w, float& lo, float& hi) {
#if defined(__CUDA_ARCH__)
  if constexpr (D == Half::kBf16) {
    lo = __uint_as_float(w << 16);
    hi = __uint_as_float(w & 0xFFFF0000u);
  } else {
    const float2 f = __half22float2(*reinterpret_cast<const __half2*>(&w));
    lo = f.x;
    hi = f.y;
  }
#else
  lo = half_to_float<D>(uint16_t(w & 0xFFFFu));
  hi = half_to_float<D>(uint16_t(w >> 16));
#endif
}

/// round_T(lo) in bits 15..0 and round_T(hi) in bits 31..16: one `cvt.rn.{bf16x2,f16x2}.f32` on sm_80+, the same
/// IEEE round-to-nearest-even as two scalar conversions. NaN payloads may differ from the scalar cvt's 0x7FFF; the
/// table path only uses the result as a GELU-table index, and every NaN entry of that table is 0x7FFF.
template <Half D>
FUSEPROOF_HD uint32_t float2_to_half2_rn(float lo, float hi) {
#if defined(__CUDA_ARCH__)
  uint32_t w;
  if constexpr (D == Half::kBf16) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    std::memcpy(&w, &h, sizeof w);
  } else {
    const __half2 h = __floats2half2_rn(lo, hi);
    std::memcpy(&w, &h, sizeof w);
  }
  return w;
#else
  return uint32_t(float_to_half_rn<D>(lo)) | (uint32_t(float_to_half_rn<D>(hi)) << 16);
#endif
}

}  // namespace fuseproof::kernel
