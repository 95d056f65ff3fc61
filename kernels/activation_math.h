// activation_math.h: the activations' eager binary32 formulas as the fused kernels compute them, for device and host:
// GELU(tanh) with every rounding spelled out, SiLU and exact GELU as PyTorch writes them (nvcc contracts SiLU's
// `1 + expf(-x)` into one FMA on the device, as in PyTorch's build; the host, built with -ffp-contract=off, does not).
#pragma once

#include <cmath>

#include "half_convert.h"

namespace fuseproof::kernel {

// --- binary32 steps, one rounding each. The device spells them as intrinsics so that nvcc cannot contract them; the
// --- host relies on -ffp-contract=off -fno-fast-math (kernels/CMakeLists.txt) and std::fma.
FUSEPROOF_HD float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}
FUSEPROOF_HD float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}
FUSEPROOF_HD float fma_rn(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
/// Precise tanhf: CUDA's on the device, the host C library's in the emulation.
FUSEPROOF_HD float tanh_f32(float a) {
#if defined(__CUDA_ARCH__)
  return tanhf(a);
#else
  return ::tanhf(a);
#endif
}

/// GELU(tanh) in binary32 with eager's op order (aten/src/ATen/native/cuda/ActivationGeluKernel.cu, opmath float,
/// nvcc contracting `x + kKappa * x_cube` into one FMA):
///   x_cube = (x * x) * x;  inner = kBeta * fma(kKappa, x_cube, x);  y = (0.5 * x) * (1 + tanh(inner))
FUSEPROOF_HD float gelu_tanh_f32(float x) {
  constexpr float kBeta = float(1.41421356237309504880 * 1.12837916709551257390 * 0.5);  // M_SQRT2 * M_2_SQRTPI * 0.5
  constexpr float kKappa = 0.044715f;
  const float x_cube = mul_rn(mul_rn(x, x), x);
  const float inner = mul_rn(kBeta, fma_rn(kKappa, x_cube, x));
  return mul_rn(mul_rn(0.5f, x), add_rn(1.0f, tanh_f32(inner)));
}

/// SiLU as aten/src/ATen/native/cuda/ActivationSiluKernel.cu computes it in opmath float: x / (1 + exp(-x)). Written
/// as PyTorch writes it, so that nvcc (-fmad=true) gives the same contraction of expf's last multiply with the add.
FUSEPROOF_HD float silu_f32(float x) {
#if defined(__CUDA_ARCH__)
  return x / (1.0f + expf(-x));
#else
  return x / (1.0f + ::expf(-x));
#endif
}

/// Exact GELU as ActivationGeluKernel.cu computes it: (x * 0.5) * (1 + erf(x * M_SQRT1_2)).
FUSEPROOF_HD float gelu_erf_f32(float x) {
  constexpr float kAlpha = float(0.70710678118654752440);  // M_SQRT1_2
#if defined(__CUDA_ARCH__)
  return (x * 0.5f) * (1.0f + erff(x * kAlpha));
#else
  return (x * 0.5f) * (1.0f + ::erff(x * kAlpha));
#endif
}

/// The activations of the family's built-in kernels, as a compile-time tag.
enum class Act : int { kGeluTanh, kGeluErf, kSilu };

template <Act A>
FUSEPROOF_HD float activation(float x) {
  if constexpr (A == Act::kGeluTanh) return gelu_tanh_f32(x);
  else if constexpr (A == Act::kGeluErf) return gelu_erf_f32(x);
  else return silu_f32(x);
}

}  // namespace fuseproof::kernel
