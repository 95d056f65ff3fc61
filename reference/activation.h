// activation.h: the unary activations of the op family and their eager binary32 formulas.
#pragma once

#include <optional>
#include <string_view>

#include "math_model.h"

namespace fuseproof::ref {

enum class Activation : int {
  kGeluTanh,  ///< F.gelu(x, approximate="tanh")   gelu_tanh_eager.h
  kGeluErf,   ///< F.gelu(x)                       gelu_erf_eager.h
  kSilu,      ///< F.silu(x)                       silu_eager.h
};

inline constexpr Activation kAllActivations[] = {Activation::kGeluTanh, Activation::kGeluErf, Activation::kSilu};

/// "gelu_tanh", "gelu_erf", "silu" (also the stem of the golden table files).
const char* activation_name(Activation a);
std::optional<Activation> parse_activation(std::string_view s);
/// The PyTorch call on a tensor named x: "F.gelu(x, approximate=\"tanh\")", "F.gelu(x)", "F.silu(x)".
const char* activation_torch(Activation a);

/// The activation's eager binary32 formula on x (opmath float).
float activation_f32(Activation a, float x, const MathConfig& cfg);

/// Whether the cuda model of `a` calls ex2.approx.ftz at arguments below 1, which only captured points cover
/// (mufu_model.h): silu (expf) and gelu_erf (erff); gelu_tanh's ex2 arguments lie in [1, 32).
bool activation_needs_ex2_points(Activation a);

/// The argument the cuda model of `a` hands to ex2.approx.ftz for input x, before the unit's .ftz flushes a subnormal
/// one (activation_needs_ex2_points only).
float activation_ex2_argument(Activation a, float x);

}  // namespace fuseproof::ref
