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

/// Blocks per simulated SM (what an sm_90 runs of a 256-thread block with few registers: 2048 threads / 256).
inline constexpr int kEmulatedBlocksPerSm = 8;

/// Blocks of the table kernel the emulation simulates: min(emulated_sms, ceil(vectors / 1024)) (one 1,024-thread block
/// per SM, as on the device).
int64_t bias_gelu_tanh_emulated_table_grid(int emulated_sms, int64_t n_vectors);

/// Blocks of a compact-table kernel the emulation simulates: min(emulated_sms x blocks_per_sm, ceil(vectors / block))
/// with the device's block (768 threads for 2 per SM, 1,024 for 1).
int64_t bias_gelu_tanh_emulated_compact_grid(int emulated_sms, int blocks_per_sm, int64_t n_vectors);

/// The emulation's compact GELU table of dtype: gelu_tanh_half<D>(compact_table_pattern<D>(i)) at i (host body).
const std::vector<uint16_t>& bias_gelu_tanh_host_compact_table(ScalarType dtype);

/// The emulation's GELU table of dtype (bf16 or fp16): gelu_tanh_half<D>(p) at p, computed once by the host body.
const std::vector<uint16_t>& bias_gelu_tanh_host_table(ScalarType dtype);

/// Blocks the emulation simulates: min(emulated_sms x kEmulatedBlocksPerSm, ceil(vectors / 256)).
int64_t bias_gelu_tanh_emulated_grid(int emulated_sms, int64_t n_vectors);

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
