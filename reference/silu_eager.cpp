// silu_eager.cpp: the eager SiLU formula in binary32.
#include "silu_eager.h"

#include <cmath>
#include <stdexcept>

#include "expf_models.h"

namespace fuseproof::ref {

float silu_eager_f32(float x, const MathConfig& cfg) {
  if (cfg.math == MathModel::kCuda) {
    if (cfg.mufu == nullptr) throw std::invalid_argument("silu: math model cuda needs the MUFU data");
    const ExpfParts p = expf_cuda_parts(-x, *cfg.mufu);
    return x / std::fma(p.e, p.scale, 1.0f);
  }
  return x / (1.0f + expf_model(-x, cfg));
}

}  // namespace fuseproof::ref
