// device_info.h: what both CUDA runners say of the device they run on (one line naming it, its architecture, its
// free memory) and the check both factories make before a runner is built.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "audit/kernel_runner.h"
#include "audit/plugin_loader.h"

namespace fuseproof::audit {

/// The current device in one line ("NAME, sm_XY, N SMs, driver CUDA A.B, runtime C.D; host CPU"); its architecture
/// ("sm_XY") in *arch.
inline std::string describe_cuda_device(std::string* arch) {
  cudaDeviceProp prop{};
  int dev = 0, driver = 0, runtime = 0;
  cudaGetDevice(&dev);
  cudaGetDeviceProperties(&prop, dev);
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  *arch = "sm_" + std::to_string(prop.major) + std::to_string(prop.minor);
  return std::string(prop.name) + ", " + *arch + ", " + std::to_string(prop.multiProcessorCount) +
         " SMs, driver CUDA " + std::to_string(driver / 1000) + "." + std::to_string(driver % 1000 / 10) +
         ", runtime " + std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10) + "; host " +
         host_cpu_description();
}

/// Free device memory in bytes; 0 when CUDA cannot tell.
inline uint64_t cuda_memory_free() {
  size_t free_b = 0, total_b = 0;
  return cudaMemGetInfo(&free_b, &total_b) == cudaSuccess ? uint64_t(free_b) : 0;
}

/// Throws PluginError (one line) when no CUDA device is usable for `plugin`, which takes CUDA device memory.
inline void require_cuda_device(const Plugin& plugin) {
  std::string why;
  if (!cuda_runner_available(&why))
    throw PluginError("audit: plugin " + plugin.info().path + " takes CUDA device memory but no CUDA device is usable: " +
                      why);
}

}  // namespace fuseproof::audit
