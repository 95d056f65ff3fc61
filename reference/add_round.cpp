// add_round.cpp: binary32 add then round to bf16/fp16.
#include "add_round.h"

#include "half_codec.h"

namespace fuseproof::ref {

float add_f32(Dtype d, uint16_t x, uint16_t bias) { return half_to_f32(d, x) + half_to_f32(d, bias); }

uint16_t add_round(Dtype d, uint16_t x, uint16_t bias, NanPolicy policy) {
  return f32_to_half(d, add_f32(d, x, bias), policy);
}

}  // namespace fuseproof::ref
