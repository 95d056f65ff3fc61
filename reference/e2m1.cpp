// e2m1.cpp: the E2M1 rounding from the binary32 bits, the vLLM table, and the decode.
#include "e2m1.h"

#include "dtype.h"

namespace fuseproof::ref {

namespace {
constexpr float kMagnitudes[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
}  // namespace

float e2m1_to_f32(uint8_t code) {
  const float mag = kMagnitudes[code & 0x7u];
  return (code & 0x8u) ? -mag : mag;
}

}  // namespace fuseproof::ref
