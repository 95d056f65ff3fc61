// bias_gelu_tanh.cu: the fused bias + GELU(tanh) CUDA kernel: vectorized, grid-stride, 64-bit indices, PDL on sm_90+.
#include <cuda_runtime.h>

#include <mutex>
#include <string>

#include "bias_gelu_tanh_cuda.h"

namespace fuseproof::kernel {

namespace {

enum KernelFlags : int {
  kFlagWait = 1,     ///< griddepcontrol.wait before the first global read
  kFlagTrigger = 2,  ///< griddepcontrol.launch_dependents after the last store
};

template <Half D, int kBytes>
__global__ void __launch_bounds__(kBlockThreads) bias_gelu_tanh_kernel(BodyArgs args, int flags) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // A dependent launch may start while the previous kernel on the stream is still writing x or bias.
  if (flags & kFlagWait) asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  bias_gelu_tanh_thread<D, kBytes>(args, first, stride);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (flags & kFlagTrigger) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

using KernelFn = void (*)(BodyArgs, int);

KernelFn kernel_for(Half dtype, int vector_bytes) {
  if (dtype == Half::kBf16) {
    return vector_bytes == 32 ? bias_gelu_tanh_kernel<Half::kBf16, 32> : bias_gelu_tanh_kernel<Half::kBf16, 16>;
  }
  return vector_bytes == 32 ? bias_gelu_tanh_kernel<Half::kFp16, 32> : bias_gelu_tanh_kernel<Half::kFp16, 16>;
}

std::string cuda_error(const char* what, cudaError_t e) {
  return std::string("bias_gelu_tanh: ") + what + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) +
         ")";
}

/// Sets the current device for a scope and restores the caller's afterwards.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    if (cudaGetDevice(&previous_) != cudaSuccess) {
      cudaGetLastError();
      previous_ = -1;
    }
    if (previous_ != device) cudaSetDevice(device);
  }
  ~DeviceGuard() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

constexpr int kMaxDevices = 64;

/// Resident blocks per SM of each instantiation, per device, asked once.
int blocks_per_sm(int device, Half dtype, int vector_bytes) {
  static std::mutex mu;
  static int cache[kMaxDevices][2][2] = {};
  if (device < 0 || device >= kMaxDevices) return 0;
  const int di = dtype == Half::kBf16 ? 0 : 1, vi = vector_bytes == 32 ? 1 : 0;
  std::lock_guard<std::mutex> lock(mu);
  int& slot = cache[device][di][vi];
  if (slot == 0) {
    DeviceGuard guard(device);
    int n = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel_for(dtype, vector_bytes), kBlockThreads, 0) !=
        cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    slot = n;
  }
  return slot;
}

}  // namespace

std::string bias_gelu_tanh_cuda_check(int device, Half dtype, int vector_bytes) {
  DeviceGuard guard(device);
  cudaFuncAttributes attr{};
  const cudaError_t e = cudaFuncGetAttributes(&attr, kernel_for(dtype, vector_bytes));
  if (e != cudaSuccess) {
    cudaGetLastError();  // cudaErrorNoKernelImageForDevice and friends are not sticky
    int major = 0, minor = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
    cudaGetLastError();
    return "bias_gelu_tanh: x device cuda:" + std::to_string(device) + " (sm_" + std::to_string(major * 10 + minor) +
           ") must have a kernel image (built for sm " + FUSEPROOF_CUDA_ARCH_LIST + "), got " + cudaGetErrorName(e);
  }
  return {};
}

int64_t bias_gelu_tanh_cuda_grid(int device, Half dtype, int vector_bytes, int64_t n_vectors) {
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  const int per_sm = blocks_per_sm(device, dtype, vector_bytes);
  if (per_sm <= 0) return 0;
  const int64_t resident = int64_t(sms) * per_sm;
  const int64_t needed = (n_vectors + kBlockThreads - 1) / kBlockThreads;
  return needed < resident ? needed : resident;
}

std::string bias_gelu_tanh_cuda_launch(const CudaLaunch& launch) {
  const int64_t grid = bias_gelu_tanh_cuda_grid(launch.device, launch.dtype, launch.vector_bytes,
                                                launch.args.n_vectors);
  if (grid <= 0) return "bias_gelu_tanh: grid size must be positive (occupancy query failed), got " +
                        std::to_string(grid);
  DeviceGuard guard(launch.device);
  int major = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, launch.device);
  const bool pdl = launch.pdl && major >= 9;  // programmatic dependent launch exists from sm_90

  cudaLaunchConfig_t config{};
  config.gridDim = dim3(unsigned(grid));
  config.blockDim = dim3(kBlockThreads);
  config.dynamicSmemBytes = 0;
  config.stream = static_cast<cudaStream_t>(launch.stream);
  cudaLaunchAttribute attrs[1];
  attrs[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attrs[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attrs;
  config.numAttrs = pdl ? 1 : 0;
  const int flags = pdl ? ((launch.skip_wait ? 0 : kFlagWait) | kFlagTrigger) : 0;

  const cudaError_t e = cudaLaunchKernelEx(&config, kernel_for(launch.dtype, launch.vector_bytes), launch.args, flags);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return cuda_error("cudaLaunchKernelEx", e);
  }
  return {};
}

}  // namespace fuseproof::kernel
