// expf_models.h: the binary32 exp that eager SiLU calls, under each math model.
#pragma once

#include "math_model.h"
#include "mufu_model.h"

namespace fuseproof::ref {

/// CUDA's expf as nvcc 13.0 emits it for sm_90 (`nvcc -arch=sm_90 -ptx`, docs/REFERENCE.md), before its last multiply:
///   t = fma(a, 0x3BBB989D, 0.5);  s = cvt.sat(t)              (log2(e) / 252; NaN -> 0)
///   j = fma.rm(s, 252, 0x4B400001);  k = j - 0x4B40007F      (k = floor(a * log2(e)), clamped to [-126, 126])
///   r = fma(a, 0x32A57060, fma(a, 0x3FB8AA3B, -k))           (a * log2(e) - k in two parts: about [-3.7e-6, 1))
///   scale = bits(j) << 23 = 2^k;  e = ex2.approx.ftz(r)
/// and expf(a) = e * scale (mul.f32). The parts are kept apart because SiLU's `1 + expf(-x)` contracts the last
/// multiply into fma(e, scale, 1).
struct ExpfParts {
  float e;      ///< ex2.approx.ftz(r)
  float scale;  ///< 2^k
};
ExpfParts expf_cuda_parts(float a, const MufuModel& mufu);

/// The argument r that expf_cuda_parts hands to ex2.approx.ftz (no MUFU data needed).
float expf_cuda_ex2_argument(float a);

/// expf_cuda_parts(a): e * scale.
float expf_cuda_model(float a, const MufuModel& mufu);

/// exp in double, rounded once to binary32.
float expf_exact(float a);

/// The host C library's expf.
float expf_libm(float a);

/// expf under cfg.math (kCuda needs cfg.mufu).
float expf_model(float a, const MathConfig& cfg);

}  // namespace fuseproof::ref
