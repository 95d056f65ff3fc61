// tanh_models.h: selectable models of the binary32 tanh that eager GELU calls.
#pragma once

#include <optional>
#include <string_view>

#include "mufu_model.h"

namespace fuseproof::ref {

enum class TanhModel : int {
  kCuda,   ///< CUDA 13.0 tanhf for sm_90, instruction by instruction (tanhf_cuda_model)
  kExact,  ///< tanh in double, rounded once to binary32
  kLibm,   ///< the host's tanhf
};

inline constexpr TanhModel kAllTanhModels[] = {TanhModel::kCuda, TanhModel::kExact, TanhModel::kLibm};

const char* tanh_model_name(TanhModel m);  ///< "cuda", "exact", "libm"
std::optional<TanhModel> parse_tanh_model(std::string_view s);

/// CUDA's tanhf as nvcc 13.0 emits it for sm_90 (read from `nvcc -arch=sm_90 -ptx` and the SASS, docs/REFERENCE.md):
///   t = |a|;  e = ex2.approx.ftz(t * 0x4038AA3B);  r = rcp.approx.ftz(e + 1);  s = fma(r, -2, 1)
///   big   = copysign(t >= 0x41102CB4 (9.0109) ? 1 : s, a)
///   small = fma(fma(fma(fma(fma(0x3C80F082, a*a, 0xBD563CAE), a*a, 0x3E085941), a*a, 0xBEAAA9ED), a*a, 0), a, a)
///   result = t >= 0x3F19999A (0.6) ? big : small
/// Every FMA is a single rounding (std::fma); MUFU results come from `mufu`. NaN in gives NaN out (small branch).
float tanhf_cuda_model(float a, const MufuModel& mufu);

/// tanh computed in double and rounded once to binary32.
float tanhf_exact(float a);

/// The host C library's tanhf.
float tanhf_libm(float a);

}  // namespace fuseproof::ref
