// fp16_to_f32.h: exact widening of an fp16 pattern to binary32 (models c10::detail::fp16_ieee_to_fp32_value).
#pragma once

#include <cstdint>

namespace fuseproof::ref {

/// | S |EEEEE|MMMMMMMMMM| -> binary32, exact: subnormals normalised, Inf kept, NaN payload shifted into bits 22..13.
float fp16_to_f32(uint16_t h);

}  // namespace fuseproof::ref
