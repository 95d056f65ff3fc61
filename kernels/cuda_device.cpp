// cuda_device.cpp: CUDA runtime queries (device count, SMs, compute capability, pointer kind), or their absence.
#include "cuda_device.h"

#if FUSEPROOF_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace fuseproof {

#if FUSEPROOF_HAVE_CUDA

int cuda_device_count() {
  // Asked once: the answer cannot change within a process, and a failed query (no driver) must not be repeated.
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // clear cudaErrorNoDevice / cudaErrorInsufficientDriver; they are not sticky
      n = 0;
    }
    return n;
  }();
  return count;
}

int cuda_device_sm_count(int device) {
  if (device < 0 || device >= cuda_device_count()) return 0;
  int n = 0;
  if (cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

int cuda_device_compute_capability(int device) {
  if (device < 0 || device >= cuda_device_count()) return 0;
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return major * 10 + minor;
}

PointerInfo cuda_pointer_info(const void* p) {
  PointerInfo info;
  if (cuda_device_count() == 0) return info;
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();
    return info;
  }
  switch (attr.type) {
    case cudaMemoryTypeUnregistered:
    case cudaMemoryTypeHost: info.kind = PointerKind::kHost; break;
    case cudaMemoryTypeDevice: info.kind = PointerKind::kDevice; break;
    case cudaMemoryTypeManaged: info.kind = PointerKind::kManaged; break;
    default: break;
  }
  info.device = attr.device;
  return info;
}

const char* cuda_built_architectures() { return FUSEPROOF_CUDA_ARCH_LIST; }

#else  // no CUDA in this build

int cuda_device_count() { return 0; }
int cuda_device_sm_count(int) { return 0; }
int cuda_device_compute_capability(int) { return 0; }
PointerInfo cuda_pointer_info(const void*) { return {}; }
const char* cuda_built_architectures() { return ""; }

#endif

bool cuda_device_available() { return cuda_device_count() > 0; }

}  // namespace fuseproof
