// activation.cpp: activation names and the dispatch to each eager formula.
#include "activation.h"

#include <cmath>
#include <cstdint>
#include <stdexcept>

#include "dtype.h"
#include "erff_models.h"
#include "expf_models.h"
#include "gelu_erf_eager.h"
#include "gelu_tanh_eager.h"
#include "silu_eager.h"

namespace fuseproof::ref {

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::kGeluTanh: return "gelu_tanh";
    case Activation::kGeluErf: return "gelu_erf";
    case Activation::kSilu: return "silu";
  }
  return "?";
}

std::optional<Activation> parse_activation(std::string_view s) {
  for (Activation a : kAllActivations)
    if (s == activation_name(a)) return a;
  return std::nullopt;
}

const char* activation_torch(Activation a) {
  switch (a) {
    case Activation::kGeluTanh: return "F.gelu(x, approximate=\"tanh\")";
    case Activation::kGeluErf: return "F.gelu(x)";
    case Activation::kSilu: return "F.silu(x)";
  }
  return "?";
}

namespace {
float activation_f32_raw(Activation a, float x, const MathConfig& cfg) {
  switch (a) {
    case Activation::kGeluTanh: return gelu_tanh_eager_f32(x, cfg);
    case Activation::kGeluErf: return gelu_erf_eager_f32(x, cfg);
    case Activation::kSilu: return silu_eager_f32(x, cfg);
  }
  throw std::invalid_argument("activation_f32: unknown activation");
}
}  // namespace

float activation_f32(Activation a, float x, const MathConfig& cfg) {
  const float y = activation_f32_raw(a, x, cfg);
  // The device's binary32 arithmetic returns the canonical NaN 0x7FFFFFFF whatever the operands' payloads (all six
  // captured *_f32_* tables of golden/sm_90 hold no other NaN); the host propagates payloads and makes 0xFFC00000.
  // The bits matter past the rounding only under a NaN policy that keeps the sign, but the tables compare them all.
  if (cfg.math == MathModel::kCuda && std::isnan(y)) return f32_from_bits(0x7FFFFFFFu);
  return y;
}

bool activation_needs_ex2_points(Activation a) { return a == Activation::kGeluErf || a == Activation::kSilu; }

float activation_ex2_argument(Activation a, float x) {
  switch (a) {
    case Activation::kGeluErf: return erff_cuda_ex2_argument(gelu_erf_argument(x));
    case Activation::kSilu: return expf_cuda_ex2_argument(-x);
    default: throw std::invalid_argument("activation_ex2_argument: gelu_tanh's ex2 arguments lie in [1, 32)");
  }
}

}  // namespace fuseproof::ref
