// gelu_erf_eager.cpp: the eager exact-GELU formula in binary32.
#include "gelu_erf_eager.h"

#include "dtype.h"
#include "erff_models.h"

namespace fuseproof::ref {

float gelu_erf_argument(float x) { return x * f32_from_bits(0x3F3504F3u); }  // M_SQRT1_2 narrowed to binary32

float gelu_erf_eager_f32(float x, const MathConfig& cfg) {
  return (x * 0.5f) * (1.0f + erff_model(gelu_erf_argument(x), cfg));
}

}  // namespace fuseproof::ref
