// bf16_to_f32.h: exact widening of a bf16 pattern to binary32 (c10::detail::f32_from_bits).
#pragma once

#include <cstdint>

#include "dtype.h"

namespace fuseproof::ref {

/// bf16 is the top half of a binary32: | S |EEEEEEEE|MMMMMMM| -> | S |EEEEEEEE|MMMMMMM 0000000000000000|.
/// Exact for every pattern; NaN payloads are kept.
inline float bf16_to_f32(uint16_t h) { return f32_from_bits(uint32_t(h) << 16); }

}  // namespace fuseproof::ref
