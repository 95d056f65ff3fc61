// ue8m0.cpp: UE8M0 decode, round-up encode and sgl-kernel's group scale step, from the binary32 bits.
#include "ue8m0.h"

#include "dtype.h"

namespace fuseproof::ref {

namespace {
/// DeepEP's fast_pow2: (x + 127) << 23 reinterpreted, no range check (wraps like the kernel's uint32 arithmetic).
float fast_pow2(int x) { return f32_from_bits(uint32_t(x + 127) << 23); }

/// DeepEP's fast_log2_ceil: E - 127 + (M != 0).
int fast_log2_ceil(float s) {
  const uint32_t u = f32_bits(s);
  return int((u >> 23) & 0xFFu) - 127 + ((u & 0x7FFFFFu) != 0 ? 1 : 0);
}
}  // namespace

float ue8m0_to_f32(uint8_t code) {
  if (code == kUe8m0Nan) return f32_from_bits(0x7FC00000u);
  if (code == 0) return f32_from_bits(0x00400000u);  // 2^-127: | 0 |00000000|1000...0|
  return f32_from_bits(uint32_t(code) << 23);
}

uint8_t f32_to_ue8m0_ceil(float s) {
  // bits(fast_pow2(k)) >> 23 = (k + 127) & 0x1FF, and the uint8 store keeps the low 8 bits.
  return uint8_t(fast_log2_ceil(s) + 127);
}

Ue8m0GroupScale ue8m0_group_scale_sgl(float amax) {
  constexpr float kInv448 = 1.0f / 448.0f;  // MAX_8BIT_INV: binary32(1/448), rounded once at compile time
  Ue8m0GroupScale r{};
  r.s = amax * kInv448;
  const int k = fast_log2_ceil(r.s);
  r.scale = fast_pow2(-k);
  r.scale_inv = fast_pow2(k);
  r.code = uint8_t(f32_bits(r.scale_inv) >> 23);
  return r;
}

}  // namespace fuseproof::ref
