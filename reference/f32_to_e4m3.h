// f32_to_e4m3.h: binary32 -> FP8 E4M3 (fn), round to nearest even, under either overflow convention; and back.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "dtype.h"
#include "f32_to_fp16.h"

namespace fuseproof::ref {

// E4M3 "fn" (finite, NaN only), the torch.float8_e4m3fn and __NV_E4M3 format:
//
//   | S |EEEE|MMM|   bias 7; E = 1..15: (8 + M) * 2^(E - 10); E = 0: M * 2^-9 (subnormals, smallest 2^-9)
//   | S |1111|111|   NaN (0x7F, 0xFF): the only non-finite codes; no infinities
//   | 0 |1111|110|   0x7E = 448, the largest finite; ulp 32 in the top binade, so 464 = 448 + 16 is the overflow tie
//
// Rounding is to nearest, ties to even, onto the grid above (subnormals included: 2^-10, half the smallest subnormal,
// is a tie and goes to +-0). Where the two conventions part is above 448:
//   kSaturate  CUDA's __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3) (cuda_fp8.hpp: cvt.rn.satfinite.e4m3x2.f32 on
//              sm_89+, __nv_cvt_double_to_fp8 elsewhere): |x| > 464 and +-Inf give +-448 (0x7E | S); |x| = 464 is the
//              tie and rounds to even 0x7E anyway. Every NaN gives 0x7F: the software path replaces a NaN by the
//              canonical 0x7FFFFFFF before converting, so the sign is dropped (the instruction's NaN is taken to be
//              the same; scripts/capture_formats.py --special records what the device gives).
//   kNan       eager torch `to(torch.float8_e4m3fn)` (c10/util/Float8_e4m3fn.h, fp8e4m3fn_from_fp32_value, a
//              C10_HOST_DEVICE function behind the Float8_e4m3fn(float) constructor on CPU and CUDA): |x| >= 480
//              (the binary32 pattern 0x43F00000), +-Inf and NaN give 0x7F | S; 464 < |x| < 480 rounds up into
//              0x7F | S through the mantissa carry. So: NaN above 464, the tie at 464 to 448. The sign is kept:
//              -Inf and negative NaNs give 0xFF.
// -0.0 gives 0x80 in both. No step here fuses or contracts: the function is bit arithmetic only.
enum class E4m3Overflow : int { kSaturate, kNan };

inline constexpr E4m3Overflow kAllE4m3Overflows[] = {E4m3Overflow::kSaturate, E4m3Overflow::kNan};

inline constexpr uint8_t kE4m3MaxFinite = 0x7E;        ///< | 0 |1111|110| = 448
inline constexpr uint8_t kE4m3Nan = 0x7F;              ///< | 0 |1111|111|
inline constexpr uint32_t kE4m3OverflowTieBits = 0x43E80000u;  ///< 464.0f = 448 + half an ulp: still rounds to 448
inline constexpr uint32_t kE4m3MinNormalBits = 0x3C800000u;    ///< 2^-6.0f, code 0x08

/// "saturate" or "nan".
constexpr const char* e4m3_overflow_name(E4m3Overflow o) { return o == E4m3Overflow::kSaturate ? "saturate" : "nan"; }

/// Parses "saturate"/"nan"; nullopt for anything else.
std::optional<E4m3Overflow> parse_e4m3_overflow(std::string_view s);

/// The E4M3 code of f under `overflow` (see above).
inline uint8_t f32_to_e4m3(float f, E4m3Overflow overflow) {
  const uint32_t u = f32_bits(f);
  const uint8_t sign = uint8_t((u >> 24) & 0x80u);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return overflow == E4m3Overflow::kSaturate ? kE4m3Nan : uint8_t(sign | kE4m3Nan);
  if (a > kE4m3OverflowTieBits) {  // beyond the tie at 464, +-Inf included
    return uint8_t(sign | (overflow == E4m3Overflow::kSaturate ? kE4m3MaxFinite : kE4m3Nan));
  }
  if (a >= kE4m3MinNormalBits) {
    // Normal E4M3 (2^-6 <= |f| <= 464): rebias the exponent (127 -> 7), then round away the low 20 bits:
    // | 0 |EEEEEEEE|MMM|RRRRRRRRRRRRRRRRRRRR| + 0x7FFFF + the kept LSB, so exact halves go to the even mantissa.
    // A carry out of MMM bumps the exponent: 2^-6 <= |f| keeps E >= 1, and 464 (the largest |f| here) carries
    // nowhere because its kept mantissa 110 is even.
    const uint32_t rebased = a - (120u << 23);
    return uint8_t(sign | ((rebased + 0x7FFFFu + ((rebased >> 20) & 1u)) >> 20));
  }
  // Below 2^-6, onto the subnormal grid 2^-9: |f| = m * 2^(max(e, 1) - 150) with the implicit bit in m when e > 0,
  // which is m >> (141 - max(e, 1)) units of 2^-9. The carry of 0.111 up to 1.000 gives 0x08 = 2^-6, as it should.
  const uint32_t exp = a >> 23;
  const uint32_t m = exp == 0 ? a : ((a & 0x7FFFFFu) | 0x800000u);
  const unsigned s = 141u - (exp == 0 ? 1u : exp);
  if (s > 24) return sign;  // |f| < 2^-10: m < 2^24 <= half of 2^s, zero (2^-10 itself ties to 0 just below)
  return uint8_t(sign | detail::shift_round_even(m, s));
}

/// The exact binary32 value of an E4M3 code. NaN codes give sign | 0x7FF00000, the pattern c10's
/// fp8e4m3fn_to_fp32_value computes for them (its Inf/NaN mask over the widened exponent, with the mantissa 111).
float e4m3_to_f32(uint8_t code);

}  // namespace fuseproof::ref
