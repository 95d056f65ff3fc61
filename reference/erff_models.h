// erff_models.h: the binary32 erf that eager exact GELU calls, under each math model.
#pragma once

#include "math_model.h"
#include "mufu_model.h"

namespace fuseproof::ref {

/// CUDA's erff as nvcc 13.0 emits it for sm_90 (`nvcc -arch=sm_90 -ptx`, docs/REFERENCE.md):
///   t = |a|;  big = t >= 0x3F8060FE (1.00295)
///   u = big ? t : a * a;  p = one degree-6 polynomial in u by 6 FMAs (two coefficient sets, chosen by `big`)
///   v = big ? -t : a;     r = fma(p, v, v)
///   small (or NaN): r;    big: copysign(1 - ex2.approx.ftz(r), a)   (r <= -2.68 there)
float erff_cuda_model(float a, const MufuModel& mufu);

/// The argument r that erff_cuda_model hands to ex2.approx.ftz on its big branch, and the polynomial's r on the small
/// one (the device computes it for every lane).
float erff_cuda_ex2_argument(float a);

/// True when erff_cuda_model takes the ex2 branch for a.
bool erff_cuda_uses_ex2(float a);

/// erf in double, rounded once to binary32.
float erff_exact(float a);

/// The host C library's erff.
float erff_libm(float a);

/// erff under cfg.math (kCuda needs cfg.mufu).
float erff_model(float a, const MathConfig& cfg);

}  // namespace fuseproof::ref
