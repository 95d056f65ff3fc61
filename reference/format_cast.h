// format_cast.h: the casts of every binary32 pattern to the narrow formats, named, one 65,536-byte row at a time.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace fuseproof::ref {

/// The casts whose tree digest over all 2^32 binary32 inputs the formats command prints and the device capture
/// (scripts/capture_formats.py) reproduces.
enum class FormatCast : int {
  kE4m3Saturate,  ///< f32_to_e4m3(x, kSaturate): CUDA __NV_SATFINITE
  kE4m3Nan,       ///< f32_to_e4m3(x, kNan): eager torch to(torch.float8_e4m3fn)
  kE2m1,          ///< f32_to_e2m1(x): cvt.rn.satfinite.e2m1x2.f32, the code in the low nibble
};

inline constexpr FormatCast kAllFormatCasts[] = {FormatCast::kE4m3Saturate, FormatCast::kE4m3Nan, FormatCast::kE2m1};

/// "e4m3-saturate", "e4m3-nan", "e2m1": the keys of the digests in text and JSON.
constexpr const char* format_cast_name(FormatCast c) {
  return c == FormatCast::kE4m3Saturate ? "e4m3-saturate" : c == FormatCast::kE4m3Nan ? "e4m3-nan" : "e2m1";
}

std::optional<FormatCast> parse_format_cast(std::string_view s);

/// Row r of the cast's domain: out[lo] = cast(binary32 pattern (r << 16) | lo) for lo = 0x0000..0xFFFF, one byte each.
void format_cast_row(FormatCast cast, uint16_t r, uint8_t* out);

}  // namespace fuseproof::ref
