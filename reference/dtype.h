// dtype.h: the two 16-bit float formats the reference models, and their names.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>

namespace fuseproof::ref {

/// bf16: | S |EEEEEEEE|MMMMMMM| (8-bit exponent, bias 127); fp16: | S |EEEEE|MMMMMMMMMM| (5-bit exponent, bias 15).
enum class Dtype : int { kBf16, kFp16 };

inline constexpr Dtype kAllDtypes[] = {Dtype::kBf16, Dtype::kFp16};

/// "bf16" or "fp16".
constexpr const char* dtype_name(Dtype d) { return d == Dtype::kBf16 ? "bf16" : "fp16"; }

/// Parses "bf16"/"fp16"; nullopt for anything else.
std::optional<Dtype> parse_dtype(std::string_view s);

/// Bit-cast helpers (memcpy, no aliasing UB).
inline uint32_t f32_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float f32_from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// True when the 16-bit pattern encodes a NaN in dtype d.
constexpr bool is_nan_bits(Dtype d, uint16_t h) {
  return d == Dtype::kBf16 ? (h & 0x7FFFu) > 0x7F80u : (h & 0x7FFFu) > 0x7C00u;
}

/// Distance in units in the last place between two non-NaN patterns of one dtype (sign-magnitude order).
uint32_t ulp_distance(uint16_t a, uint16_t b);

}  // namespace fuseproof::ref
