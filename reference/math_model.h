// math_model.h: which binary32 maths the reference gives eager's transcendental calls (tanhf, expf, erff), and the
// settings every eager formula shares.
#pragma once

#include <optional>
#include <string_view>

#include "mufu_model.h"
#include "nan_policy.h"

namespace fuseproof::ref {

/// How tanhf, expf and erff are computed.
enum class MathModel : int {
  kCuda,   ///< CUDA 13.0's functions for sm_90, instruction by instruction, MUFU results from captured device data
  kExact,  ///< the function in binary64, rounded once to binary32
  kLibm,   ///< the host C library's tanhf, expf, erff (what the kernels' CPU emulation calls)
};

inline constexpr MathModel kAllMathModels[] = {MathModel::kCuda, MathModel::kExact, MathModel::kLibm};

/// "cuda", "exact", "libm".
const char* math_model_name(MathModel m);
std::optional<MathModel> parse_math_model(std::string_view s);

/// Whether GELU(tanh)'s `x + kKappa * x_cube` is one FMA (nvcc's default contraction, -fmad=true) or a multiply then
/// an add.
enum class Contraction : int { kFma, kSeparate };

/// What every eager formula of the reference needs.
struct MathConfig {
  MathModel math = MathModel::kCuda;
  Contraction contraction = Contraction::kFma;
  NanPolicy nan = NanPolicy::kCudaCvtRn;  ///< the pattern a float NaN becomes at every rounding to the dtype
  const MufuModel* mufu = nullptr;        ///< required for MathModel::kCuda
};

}  // namespace fuseproof::ref
