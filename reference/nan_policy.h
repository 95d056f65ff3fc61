// nan_policy.h: which 16-bit pattern a float NaN becomes when eager PyTorch narrows it, per code path.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "dtype.h"

namespace fuseproof::ref {

/// Observed patterns (golden/sm_90/nan_observed.json; c10/util/BFloat16.h, c10/util/Half.h, cpu/vec/vec256_bfloat16.h):
enum class NanPolicy : int {
  /// sm_80+ GPU: `cvt.rn.bf16.f32` / `cvt.rn.f16.f32` give the canonical 0x7FFF for every NaN, both dtypes.
  kCudaCvtRn,
  /// c10 scalar CPU path: bf16 round_to_nearest_even() returns 0x7FC0; fp16 fp16_ieee_from_fp32_value()
  /// returns sign | 0x7E00.
  kC10Scalar,
  /// c10 vectorized CPU path: bf16 cvtfp32_bf16() blends in 0xFFFF; fp16 uses VCVTPS2PH, which keeps the sign and the
  /// top 10 payload bits and sets the quiet bit: sign | 0x7E00 | (mantissa >> 13).
  kC10Vectorized,
};

inline constexpr NanPolicy kAllNanPolicies[] = {NanPolicy::kCudaCvtRn, NanPolicy::kC10Scalar, NanPolicy::kC10Vectorized};

inline constexpr uint16_t kCudaCanonicalNan = 0x7FFF;  ///< cvt.rn.{bf16,f16}.f32 on sm_80+
inline constexpr uint16_t kC10ScalarBf16Nan = 0x7FC0;  ///< c10::detail::round_to_nearest_even
inline constexpr uint16_t kC10VectorBf16Nan = 0xFFFF;  ///< at::vec::cvtfp32_bf16: _mm256_set1_epi32(0xffff)
inline constexpr uint16_t kFp16QuietNan = 0x7E00;      ///< | 0 |11111|1000000000|

/// "cuda-cvt-rn", "c10-scalar", "c10-vectorized".
constexpr const char* nan_policy_name(NanPolicy p) {
  return p == NanPolicy::kCudaCvtRn ? "cuda-cvt-rn" : p == NanPolicy::kC10Scalar ? "c10-scalar" : "c10-vectorized";
}

inline std::optional<NanPolicy> parse_nan_policy(std::string_view s) {
  for (NanPolicy p : kAllNanPolicies)
    if (s == nan_policy_name(p)) return p;
  return std::nullopt;
}

/// The bf16 pattern policy p gives for a float NaN (no bf16 path keeps the payload).
constexpr uint16_t nan_to_bf16(NanPolicy p, uint32_t /*f32_nan_bits*/) {
  return p == NanPolicy::kCudaCvtRn ? kCudaCanonicalNan : p == NanPolicy::kC10Scalar ? kC10ScalarBf16Nan : kC10VectorBf16Nan;
}

/// The fp16 pattern policy p gives for the float NaN with bits `f32_nan_bits`.
constexpr uint16_t nan_to_fp16(NanPolicy p, uint32_t f32_nan_bits) {
  const uint16_t sign = uint16_t((f32_nan_bits >> 16) & 0x8000u);
  if (p == NanPolicy::kCudaCvtRn) return kCudaCanonicalNan;
  if (p == NanPolicy::kC10Scalar) return uint16_t(sign | kFp16QuietNan);
  // VCVTPS2PH: | S |11111|1 PPPPPPPPP|: quiet bit forced, payload = float mantissa bits 21..13.
  return uint16_t(sign | kFp16QuietNan | ((f32_nan_bits & 0x007FFFFFu) >> 13));
}

}  // namespace fuseproof::ref
