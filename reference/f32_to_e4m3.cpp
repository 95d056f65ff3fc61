// f32_to_e4m3.cpp: the E4M3 rounding from the binary32 bits, shared by both overflow conventions.
#include "f32_to_e4m3.h"

#include <cmath>

#include "dtype.h"

namespace fuseproof::ref {

std::optional<E4m3Overflow> parse_e4m3_overflow(std::string_view s) {
  for (E4m3Overflow o : kAllE4m3Overflows)
    if (s == e4m3_overflow_name(o)) return o;
  return std::nullopt;
}

float e4m3_to_f32(uint8_t code) {
  const uint32_t sign = uint32_t(code & 0x80u) << 24;
  if ((code & 0x7Fu) == kE4m3Nan) return f32_from_bits(sign | 0x7FF00000u);
  const int e = (code >> 3) & 0xF;
  const int m = code & 0x7;
  // Exact: at most 4 significant bits and exponents inside binary32's normal range.
  const float mag = e == 0 ? std::ldexp(float(m), -9) : std::ldexp(float(8 + m), e - 10);
  return f32_from_bits(sign | f32_bits(mag));
}

}  // namespace fuseproof::ref
