// bias_gelu_tanh.cu: the fused bias + GELU(tanh) CUDA kernels (direct math, GELU table): vectorized, grid-stride,
// 64-bit indices, PDL on sm_90+; the per-device GELU tables and their fill kernel.
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

/// Entry p = gelu_tanh_half<D>(p): the direct kernel's own GELU, evaluated once per pattern.
template <Half D>
__global__ void __launch_bounds__(kBlockThreads) gelu_table_fill_kernel(uint16_t* table) {
  const int p = int(blockIdx.x) * blockDim.x + threadIdx.x;
  if (p < kGeluTableEntries) table[p] = gelu_tanh_half<D>(uint16_t(p));
}

/// The table kernel: each block copies the 128 KiB GELU table into shared memory, then runs the grid-stride body with
/// one shared-memory lookup per element. The copy reads only the table, which a synchronous fill wrote before any
/// launch could use it, so it runs BEFORE griddepcontrol.wait: under PDL it overlaps the previous kernel's tail.
template <Half D, int kBytes>
__global__ void __launch_bounds__(kTableBlockThreads, 1)
    bias_gelu_tanh_table_kernel(BodyArgs args, const uint16_t* __restrict__ table, int flags) {
  extern __shared__ uint4 smem_table[];
  const uint4* src = reinterpret_cast<const uint4*>(table);
#pragma unroll
  for (int i = 0; i < kGeluTableBytes / 16 / kTableBlockThreads; ++i)
    smem_table[i * kTableBlockThreads + threadIdx.x] = __ldg(src + i * kTableBlockThreads + threadIdx.x);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (flags & kFlagWait) asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __syncthreads();
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  bias_gelu_tanh_table_thread<D, kBytes>(args, reinterpret_cast<const uint16_t*>(smem_table), first, stride);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (flags & kFlagTrigger) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

using KernelFn = void (*)(BodyArgs, int);
using TableKernelFn = void (*)(BodyArgs, const uint16_t*, int);

TableKernelFn table_kernel_for(Half dtype, int vector_bytes) {
  if (dtype == Half::kBf16) {
    return vector_bytes == 32 ? bias_gelu_tanh_table_kernel<Half::kBf16, 32> : bias_gelu_tanh_table_kernel<Half::kBf16, 16>;
  }
  return vector_bytes == 32 ? bias_gelu_tanh_table_kernel<Half::kFp16, 32> : bias_gelu_tanh_table_kernel<Half::kFp16, 16>;
}

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

/// One block of kTableBlockThreads with the 128 KiB table per SM, unless the occupancy query says otherwise.
int table_blocks_per_sm(int device, Half dtype, int vector_bytes) {
  static std::mutex mu;
  static int cache[kMaxDevices][2][2] = {};
  if (device < 0 || device >= kMaxDevices) return 0;
  const int di = dtype == Half::kBf16 ? 0 : 1, vi = vector_bytes == 32 ? 1 : 0;
  std::lock_guard<std::mutex> lock(mu);
  int& slot = cache[device][di][vi];
  if (slot == 0) {
    DeviceGuard guard(device);
    int n = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, table_kernel_for(dtype, vector_bytes), kTableBlockThreads,
                                                      kGeluTableBytes) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    slot = n;
  }
  return slot;
}

}  // namespace

std::string bias_gelu_tanh_cuda_table_check(int device) {
  int optin = 0;
  if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess) {
    cudaGetLastError();
    optin = 0;
  }
  if (optin < kGeluTableBytes)
    return "bias_gelu_tanh: options.math table needs " + std::to_string(kGeluTableBytes) +
           " bytes of shared memory per block on cuda:" + std::to_string(device) + ", got " + std::to_string(optin);
  return {};
}

const uint16_t* bias_gelu_tanh_cuda_table(int device, Half dtype, bool build, std::string* error) {
  static std::mutex mu;
  static uint16_t* tables[kMaxDevices][2] = {};
  if (device < 0 || device >= kMaxDevices) {
    if (error) *error = "bias_gelu_tanh: device ordinal must be below " + std::to_string(kMaxDevices) + ", got " +
                        std::to_string(device);
    return nullptr;
  }
  const int di = dtype == Half::kBf16 ? 0 : 1;
  std::lock_guard<std::mutex> lock(mu);
  uint16_t*& slot = tables[device][di];
  if (slot || !build) return slot;
  DeviceGuard guard(device);
  // The opt-in above 48 KiB, for both vector instantiations of this dtype, before their first launch.
  for (int vb : {16, 32}) {
    const cudaError_t e = cudaFuncSetAttribute(table_kernel_for(dtype, vb), cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               kGeluTableBytes);
    if (e != cudaSuccess) {
      cudaGetLastError();
      if (error) *error = cuda_error("cudaFuncSetAttribute(MaxDynamicSharedMemorySize)", e);
      return nullptr;
    }
  }
  uint16_t* table = nullptr;
  cudaStream_t stream = nullptr;
  cudaError_t e = cudaMalloc(reinterpret_cast<void**>(&table), kGeluTableBytes);
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (e == cudaSuccess) {
    if (dtype == Half::kBf16) gelu_table_fill_kernel<Half::kBf16><<<kGeluTableEntries / kBlockThreads, kBlockThreads, 0, stream>>>(table);
    else gelu_table_fill_kernel<Half::kFp16><<<kGeluTableEntries / kBlockThreads, kBlockThreads, 0, stream>>>(table);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (stream) cudaStreamDestroy(stream);
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (table) cudaFree(table);
    if (error) *error = cuda_error("GELU table fill", e);
    return nullptr;
  }
  slot = table;  // kept for the life of the process
  return slot;
}

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

int64_t bias_gelu_tanh_cuda_table_grid(int device, Half dtype, int vector_bytes, int64_t n_vectors) {
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  const int per_sm = table_blocks_per_sm(device, dtype, vector_bytes);
  if (per_sm <= 0) return 0;
  const int64_t resident = int64_t(sms) * per_sm;
  const int64_t needed = (n_vectors + kTableBlockThreads - 1) / kTableBlockThreads;
  return needed < resident ? needed : resident;
}

std::string bias_gelu_tanh_cuda_launch(const CudaLaunch& launch) {
  const uint16_t* table = nullptr;
  bool use_table = launch.table;
  if (use_table) {
    table = bias_gelu_tanh_cuda_table(launch.device, launch.dtype, false, nullptr);
    if (!table) {
      // The first use builds the table synchronously, which a stream being captured into a graph cannot allow.
      cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
      if (cudaStreamIsCapturing(static_cast<cudaStream_t>(launch.stream), &capture) != cudaSuccess) cudaGetLastError();
      if (capture != cudaStreamCaptureStatusNone) {
        if (!launch.table_auto)
          return "bias_gelu_tanh: options.math table must be built before graph capture (one launch outside the "
                 "capture), got its first use on cuda:" + std::to_string(launch.device) + " while capturing";
        use_table = false;
      } else {
        std::string err;
        table = bias_gelu_tanh_cuda_table(launch.device, launch.dtype, true, &err);
        if (!table) return err;
      }
    }
  }
  const int64_t grid = use_table ? bias_gelu_tanh_cuda_table_grid(launch.device, launch.dtype, launch.vector_bytes,
                                                                     launch.args.n_vectors)
                                    : bias_gelu_tanh_cuda_grid(launch.device, launch.dtype, launch.vector_bytes,
                                                               launch.args.n_vectors);
  if (grid <= 0) return "bias_gelu_tanh: grid size must be positive (occupancy query failed), got " +
                        std::to_string(grid);
  DeviceGuard guard(launch.device);
  int major = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, launch.device);
  const bool pdl = launch.pdl && major >= 9;  // programmatic dependent launch exists from sm_90

  cudaLaunchConfig_t config{};
  config.gridDim = dim3(unsigned(grid));
  config.blockDim = dim3(use_table ? kTableBlockThreads : kBlockThreads);
  config.dynamicSmemBytes = use_table ? kGeluTableBytes : 0;
  config.stream = static_cast<cudaStream_t>(launch.stream);
  cudaLaunchAttribute attrs[1];
  attrs[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attrs[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attrs;
  config.numAttrs = pdl ? 1 : 0;
  const int flags = pdl ? ((launch.skip_wait ? 0 : kFlagWait) | kFlagTrigger) : 0;

  const cudaError_t e =
      use_table
          ? cudaLaunchKernelEx(&config, table_kernel_for(launch.dtype, launch.vector_bytes), launch.args, table, flags)
          : cudaLaunchKernelEx(&config, kernel_for(launch.dtype, launch.vector_bytes), launch.args, flags);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return cuda_error("cudaLaunchKernelEx", e);
  }
  return {};
}

}  // namespace fuseproof::kernel
