// bias_gelu_tanh_cuda.h: the launcher's private entry into bias_gelu_tanh.cu (geometry and launch of validated views).
#pragma once

#include <cstdint>
#include <string>

#include "bias_gelu_tanh_body.h"

namespace fuseproof::kernel {

/// Threads per block of the CUDA kernel and of the emulation's simulated grid.
inline constexpr int kBlockThreads = 256;

/// A launch that has passed bias_gelu_tanh_can_implement.
struct CudaLaunch {
  Half dtype = Half::kBf16;
  int vector_bytes = 16;
  BodyArgs args{};
  int device = 0;
  void* stream = nullptr;
  bool pdl = true;
  bool skip_wait = false;  ///< test only: launch with PDL but without griddepcontrol.wait
};

/// Empty when `device` can run the kernel for (dtype, vector_bytes), else why not (no image for its architecture).
std::string bias_gelu_tanh_cuda_check(int device, Half dtype, int vector_bytes);

/// min(SMs x resident blocks per SM, ceil(vectors / block)) for the instantiation on `device`; 0 when unknown.
int64_t bias_gelu_tanh_cuda_grid(int device, Half dtype, int vector_bytes, int64_t n_vectors);

/// Launches on `launch.device` (restoring the caller's current device); empty on success, else the CUDA error.
std::string bias_gelu_tanh_cuda_launch(const CudaLaunch& launch);

}  // namespace fuseproof::kernel
