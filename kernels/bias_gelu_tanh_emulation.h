// bias_gelu_tanh_emulation.h: the kernel body run on the host over a simulated grid, in the kernel's grid-stride order.
#pragma once

#include <cstdint>
#include <vector>

#include "bias_gelu_tanh_launcher.h"

namespace fuseproof {

/// Which per-element body the emulation runs; anything but kProduction exists only as a negative control (and runs the
/// direct math whatever options.math says).
enum class EmulatedBody : int {
  kProduction,    ///< gelu_tanh(round_T(x + bias)), as the CUDA kernel
  kUnroundedSum,  ///< gelu_tanh(x + bias) on the binary32 sum: must be caught by the exactness tests
};

/// The emulation's range table of dtype: gelu_tanh_half<D>(range_table_pattern<D>(i)) at i (host body).
const std::vector<uint16_t>& bias_gelu_tanh_host_range_table(ScalarType dtype);

/// The emulation's GELU table of dtype (bf16 or fp16): gelu_tanh_half<D>(p) at p, computed once by the host body.
const std::vector<uint16_t>& bias_gelu_tanh_host_table(ScalarType dtype);

/// Validates like bias_gelu_tanh (views must be on the CPU), then runs the emulation with `body`.
LaunchStatus bias_gelu_tanh_emulate(const TensorView& out, const TensorView& x, const TensorView& bias,
                                    const BiasGeluOptions& options = {},
                                    EmulatedBody body = EmulatedBody::kProduction);

namespace detail {
/// Runs views that bias_gelu_tanh_can_implement accepted on the CPU (the launcher's dispatch; no checks here).
void run_emulation(const TensorView& out, const TensorView& x, const TensorView& bias, int vector_bytes,
                   int emulated_sms, EmulatedBody body, GeluMath math = GeluMath::kDirect);
}  // namespace detail

}  // namespace fuseproof
