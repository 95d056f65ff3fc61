// fp16_to_f32.cpp: exact fp16 -> binary32 from the bits.
#include "fp16_to_f32.h"

#include "dtype.h"

namespace fuseproof::ref {

float fp16_to_f32(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  if (exp == 0x1F) return f32_from_bits(sign | 0x7F800000u | (mant << 13));  // Inf or NaN
  if (exp != 0) return f32_from_bits(sign | ((exp + 112u) << 23) | (mant << 13));  // 127 - 15 = 112
  if (mant == 0) return f32_from_bits(sign);                                       // +-0
  // Subnormal: mant * 2^-24. Normalise so the leading 1 sits at bit 10.
  int e = 113;  // exponent field of 2^-14
  while ((mant & 0x400u) == 0) {
    mant <<= 1;
    --e;
  }
  return f32_from_bits(sign | (uint32_t(e) << 23) | ((mant & 0x3FFu) << 13));
}

}  // namespace fuseproof::ref
