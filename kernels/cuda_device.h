// cuda_device.h: the few CUDA runtime queries the launcher needs; every one answers "none" in a build without CUDA.
#pragma once

#include <string>

namespace fuseproof {

/// Number of usable CUDA devices; 0 when CUDA was not built or there is no device or driver.
int cuda_device_count();
/// True when a CUDA device is usable in this process (false when CUDA was not built or no device/driver).
bool cuda_device_available();
/// Streaming multiprocessors of `device`; 0 when unknown.
int cuda_device_sm_count(int device);
/// Compute capability as major * 10 + minor (90 for sm_90, 100 for sm_100); 0 when unknown.
int cuda_device_compute_capability(int device);

/// What a pointer refers to, as cudaPointerGetAttributes sees it.
enum class PointerKind : int { kUnknown, kHost, kDevice, kManaged };
struct PointerInfo {
  PointerKind kind = PointerKind::kUnknown;
  int device = -1;  ///< owning ordinal for kDevice/kManaged
};
/// Asks the CUDA runtime; kUnknown without CUDA. Leaves no CUDA error pending.
PointerInfo cuda_pointer_info(const void* p);

/// The CUDA architectures this build carries kernels for, e.g. "90;100;103" (empty without CUDA).
const char* cuda_built_architectures();

}  // namespace fuseproof
