// bias_gelu_tanh_cuda.h: the launcher's private entry into bias_gelu_tanh.cu (geometry and launch of validated views).
#pragma once

#include <cstdint>
#include <string>

#include "bias_gelu_tanh_body.h"

namespace fuseproof::kernel {

/// Threads per block of the CUDA kernel and of the emulation's simulated grid.
inline constexpr int kBlockThreads = 256;
/// Threads per block of the table kernel: one block per SM (its 128 KiB table leaves no room for a second).
inline constexpr int kTableBlockThreads = 1024;

/// A launch that has passed bias_gelu_tanh_can_implement.
struct CudaLaunch {
  Half dtype = Half::kBf16;
  int vector_bytes = 16;
  BodyArgs args{};
  int device = 0;
  void* stream = nullptr;
  bool pdl = true;
  bool skip_wait = false;  ///< test only: launch with PDL but without griddepcontrol.wait
  bool table = false;      ///< the GELU-table kernel instead of the direct-math one
  bool table_auto = false; ///< table came from GeluMath::kAuto: fall back to direct math if it cannot be built now
};

/// Empty when `device` can run the kernel for (dtype, vector_bytes), else why not (no image for its architecture).
std::string bias_gelu_tanh_cuda_check(int device, Half dtype, int vector_bytes);

/// min(SMs x resident blocks per SM, ceil(vectors / block)) for the instantiation on `device`; 0 when unknown.
int64_t bias_gelu_tanh_cuda_grid(int device, Half dtype, int vector_bytes, int64_t n_vectors);

/// Empty when `device` can run the table kernel (128 KiB of opt-in shared memory per block), else why not.
std::string bias_gelu_tanh_cuda_table_check(int device);

/// The device's GELU table of `dtype` (65,536 x uint16, gelu_tanh_half<D>(p) at p), built at first use by a kernel
/// running the body's own gelu_tanh_half, synchronously (so not during graph capture); nullptr and `error` set when
/// that fails. `build` = false only asks whether it exists.
const uint16_t* bias_gelu_tanh_cuda_table(int device, Half dtype, bool build, std::string* error);

/// Like bias_gelu_tanh_cuda_grid for the table kernel (1,024-thread blocks with 128 KiB of shared memory each).
/// Valid once the table of `dtype` exists on `device` (its build sets the shared-memory opt-in).
int64_t bias_gelu_tanh_cuda_table_grid(int device, Half dtype, int vector_bytes, int64_t n_vectors);

/// Launches on `launch.device` (restoring the caller's current device); empty on success, else the CUDA error.
std::string bias_gelu_tanh_cuda_launch(const CudaLaunch& launch);

}  // namespace fuseproof::kernel
