// format_cast.cpp: one row of a narrow-format cast over the binary32 patterns.
#include "format_cast.h"

#include "dtype.h"
#include "e2m1.h"
#include "f32_to_e4m3.h"

namespace fuseproof::ref {

std::optional<FormatCast> parse_format_cast(std::string_view s) {
  for (FormatCast c : kAllFormatCasts)
    if (s == format_cast_name(c)) return c;
  return std::nullopt;
}

namespace {
template <typename Cast>
void row_of(uint16_t r, uint8_t* out, Cast cast) {
  const uint32_t hi = uint32_t(r) << 16;
  for (uint32_t lo = 0; lo < 65536; ++lo) out[lo] = cast(f32_from_bits(hi | lo));
}
}  // namespace

void format_cast_row(FormatCast cast, uint16_t r, uint8_t* out) {
  switch (cast) {
    case FormatCast::kE4m3Saturate:
      return row_of(r, out, [](float f) { return f32_to_e4m3(f, E4m3Overflow::kSaturate); });
    case FormatCast::kE4m3Nan:
      return row_of(r, out, [](float f) { return f32_to_e4m3(f, E4m3Overflow::kNan); });
    case FormatCast::kE2m1:
      return row_of(r, out, [](float f) { return f32_to_e2m1(f); });
  }
}

}  // namespace fuseproof::ref
