// tanh_models.h: the binary32 tanh that eager GELU(tanh) calls, under each math model.
#pragma once

#include "math_model.h"
#include "mufu_model.h"

namespace fuseproof::ref {

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

/// tanhf under cfg.math (kCuda needs cfg.mufu: std::invalid_argument without it).
float tanhf_model(float a, const MathConfig& cfg);

}  // namespace fuseproof::ref
