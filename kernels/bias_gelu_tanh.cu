// bias_gelu_tanh.cu: the fused bias + GELU(tanh) CUDA kernels (direct math, GELU table): vectorized, grid-stride,
// 64-bit indices, PDL on sm_90+; the per-device GELU tables and their fill kernel.
#include <cuda_runtime.h>

#include <mutex>
#include <string>
#include <vector>

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

/// Compact entry i = gelu_tanh_half<D>(compact_table_pattern<D>(i)): the same function on the |x| < 8 patterns.
template <Half D>
__global__ void __launch_bounds__(kBlockThreads) gelu_compact_fill_kernel(uint16_t* table) {
  const int i = int(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < kCompactEntries<D>) table[i] = gelu_tanh_half<D>(compact_table_pattern<D>(uint32_t(i)));
}

/// The compact-table kernel: like the table kernel, with the 65-72 KiB |x| < 8 table (so 2 blocks fit per SM, or 1
/// with a larger L1) and the compact thread (packed index, per-element rule for |x| >= 8).
template <Half D, int kBytes, int kBlocksPerSm>
__global__ void __launch_bounds__(kCompactBlockThreads<kBlocksPerSm>, kBlocksPerSm)
    bias_gelu_tanh_compact_kernel(BodyArgs args, const uint16_t* __restrict__ table, int flags) {
  extern __shared__ uint4 smem_table[];
  constexpr int kVecs = kCompactBytes<D> / 16;
  constexpr int kThreads = kCompactBlockThreads<kBlocksPerSm>;
  const uint4* src = reinterpret_cast<const uint4*>(table);
#pragma unroll
  for (int i = 0; i < (kVecs + kThreads - 1) / kThreads; ++i) {
    const int k = i * kThreads + int(threadIdx.x);
    if (k < kVecs) smem_table[k] = __ldg(src + k);
  }
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (flags & kFlagWait) asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
  __syncthreads();
  const int64_t first = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  bias_gelu_tanh_compact_thread<D, kBytes, kCompactUnroll<kBytes, kBlocksPerSm>>(
      args, reinterpret_cast<const uint16_t*>(smem_table), first, stride);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (flags & kFlagTrigger) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

using KernelFn = void (*)(BodyArgs, int);
using TableKernelFn = void (*)(BodyArgs, const uint16_t*, int);

template <int kBlocksPerSm>
TableKernelFn compact_kernel_for(Half dtype, int vector_bytes) {
  if (dtype == Half::kBf16) {
    return vector_bytes == 32 ? bias_gelu_tanh_compact_kernel<Half::kBf16, 32, kBlocksPerSm>
                              : bias_gelu_tanh_compact_kernel<Half::kBf16, 16, kBlocksPerSm>;
  }
  return vector_bytes == 32 ? bias_gelu_tanh_compact_kernel<Half::kFp16, 32, kBlocksPerSm>
                            : bias_gelu_tanh_compact_kernel<Half::kFp16, 16, kBlocksPerSm>;
}

TableKernelFn table_kernel_for(Half dtype, int vector_bytes, TableKind kind = TableKind::kFull) {
  if (kind == TableKind::kCompact2) return compact_kernel_for<2>(dtype, vector_bytes);
  if (kind == TableKind::kCompact1) return compact_kernel_for<1>(dtype, vector_bytes);
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

/// Resident 1,024-thread blocks per SM of a table kernel (1 for the 128 KiB table, up to 2 for the compact one), as the
/// occupancy query says.
int table_blocks_per_sm(int device, Half dtype, int vector_bytes, TableKind kind) {
  static std::mutex mu;
  static int cache[kMaxDevices][2][2][4] = {};
  if (device < 0 || device >= kMaxDevices) return 0;
  const int di = dtype == Half::kBf16 ? 0 : 1, vi = vector_bytes == 32 ? 1 : 0;
  std::lock_guard<std::mutex> lock(mu);
  int& slot = cache[device][di][vi][int(kind) & 3];
  if (slot == 0) {
    DeviceGuard guard(device);
    int n = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, table_kernel_for(dtype, vector_bytes, kind),
                                                      table_kernel_block_threads(kind),
                                                      table_kernel_smem_bytes(kind, dtype)) !=
        cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    slot = n;
  }
  return slot;
}

}  // namespace

int table_kernel_block_threads(TableKind kind) {
  return kind == TableKind::kCompact2 ? kCompactBlockThreads<2> : kTableBlockThreads;
}

int table_kernel_smem_bytes(TableKind kind, Half dtype) {
  if (kind == TableKind::kFull) return kGeluTableBytes;
  return dtype == Half::kBf16 ? kCompactBytes<Half::kBf16> : kCompactBytes<Half::kFp16>;
}

int compact_access_bytes(int vector_bytes, int cc) { return vector_bytes == 32 && cc >= 100 ? 32 : 16; }

std::string bias_gelu_tanh_cuda_table_check(int device, TableKind kind) {
  const int need = kind == TableKind::kFull ? kGeluTableBytes : kCompactBytes<Half::kFp16>;
  int optin = 0;
  if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess) {
    cudaGetLastError();
    optin = 0;
  }
  if (optin < need)
    return std::string("bias_gelu_tanh: options.math ") + (kind == TableKind::kFull ? "table" : "table-compact") +
           " needs " + std::to_string(need) +
           " bytes of shared memory per block on cuda:" + std::to_string(device) + ", got " + std::to_string(optin);
  return {};
}

const uint16_t* bias_gelu_tanh_cuda_table(int device, Half dtype, bool build, std::string* error, TableKind kind) {
  static std::mutex mu;
  static uint16_t* tables[kMaxDevices][2][2] = {};  // [device][dtype][full, compact]
  if (device < 0 || device >= kMaxDevices) {
    if (error) *error = "bias_gelu_tanh: device ordinal must be below " + std::to_string(kMaxDevices) + ", got " +
                        std::to_string(device);
    return nullptr;
  }
  const int di = dtype == Half::kBf16 ? 0 : 1;
  const bool compact = kind != TableKind::kFull;
  std::lock_guard<std::mutex> lock(mu);
  uint16_t*& slot = tables[device][di][compact ? 1 : 0];
  if (slot || !build) return slot;
  DeviceGuard guard(device);
  // The opt-in above 48 KiB, for every kernel instantiation that reads this table, before their first launch.
  const int bytes = table_kernel_smem_bytes(kind, dtype);
  const TableKind kinds_full[] = {TableKind::kFull};
  const TableKind kinds_compact[] = {TableKind::kCompact2, TableKind::kCompact1};
  for (TableKind k : compact ? std::vector<TableKind>(kinds_compact, kinds_compact + 2)
                             : std::vector<TableKind>(kinds_full, kinds_full + 1))
    for (int vb : {16, 32}) {
      const cudaError_t e =
          cudaFuncSetAttribute(table_kernel_for(dtype, vb, k), cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
      if (e != cudaSuccess) {
        cudaGetLastError();
        if (error) *error = cuda_error("cudaFuncSetAttribute(MaxDynamicSharedMemorySize)", e);
        return nullptr;
      }
    }
  const int entries = compact ? bytes / 2 : kGeluTableEntries;
  const int blocks = (entries + kBlockThreads - 1) / kBlockThreads;
  uint16_t* table = nullptr;
  cudaStream_t stream = nullptr;
  cudaError_t e = cudaMalloc(reinterpret_cast<void**>(&table), size_t(bytes));
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (e == cudaSuccess) {
    if (dtype == Half::kBf16) {
      if (compact) gelu_compact_fill_kernel<Half::kBf16><<<blocks, kBlockThreads, 0, stream>>>(table);
      else gelu_table_fill_kernel<Half::kBf16><<<blocks, kBlockThreads, 0, stream>>>(table);
    } else {
      if (compact) gelu_compact_fill_kernel<Half::kFp16><<<blocks, kBlockThreads, 0, stream>>>(table);
      else gelu_table_fill_kernel<Half::kFp16><<<blocks, kBlockThreads, 0, stream>>>(table);
    }
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

int64_t bias_gelu_tanh_cuda_table_grid(int device, Half dtype, int vector_bytes, int64_t n_vectors, TableKind kind) {
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  const int per_sm = table_blocks_per_sm(device, dtype, vector_bytes, kind);
  if (per_sm <= 0) return 0;
  const int64_t resident = int64_t(sms) * per_sm;
  const int64_t needed = (n_vectors + table_kernel_block_threads(kind) - 1) / table_kernel_block_threads(kind);
  return needed < resident ? needed : resident;
}

std::string bias_gelu_tanh_cuda_launch(const CudaLaunch& launch) {
  const uint16_t* table = nullptr;
  TableKind kind = launch.table;
  if (kind != TableKind::kNone) {
    table = bias_gelu_tanh_cuda_table(launch.device, launch.dtype, false, nullptr, kind);
    if (!table) {
      // The first use builds the table synchronously, which a stream being captured into a graph cannot allow.
      cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
      if (cudaStreamIsCapturing(static_cast<cudaStream_t>(launch.stream), &capture) != cudaSuccess) cudaGetLastError();
      if (capture != cudaStreamCaptureStatusNone) {
        if (!launch.table_auto)
          return "bias_gelu_tanh: options.math table must be built before graph capture (one launch outside the "
                 "capture), got its first use on cuda:" + std::to_string(launch.device) + " while capturing";
        kind = TableKind::kNone;
      } else {
        std::string err;
        table = bias_gelu_tanh_cuda_table(launch.device, launch.dtype, true, &err, kind);
        if (!table) return err;
      }
    }
  }
  DeviceGuard guard(launch.device);
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, launch.device);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, launch.device);
  const bool pdl = launch.pdl && major >= 9;  // programmatic dependent launch exists from sm_90
  const bool compact = kind == TableKind::kCompact2 || kind == TableKind::kCompact1;
  // The compact kernels move a 32-byte vector as two 16-byte ones before sm_100: same elements, twice the count.
  BodyArgs args = launch.args;
  int access_bytes = launch.vector_bytes;
  if (compact && compact_access_bytes(launch.vector_bytes, major * 10 + minor) != launch.vector_bytes) {
    access_bytes = 16;
    args.n_vectors *= 2;
    args.width_vectors *= 2;
  }
  const int64_t grid = kind != TableKind::kNone
                           ? bias_gelu_tanh_cuda_table_grid(launch.device, launch.dtype, access_bytes, args.n_vectors,
                                                            kind)
                           : bias_gelu_tanh_cuda_grid(launch.device, launch.dtype, access_bytes, args.n_vectors);
  if (grid <= 0) return "bias_gelu_tanh: grid size must be positive (occupancy query failed), got " +
                        std::to_string(grid);

  cudaLaunchConfig_t config{};
  config.gridDim = dim3(unsigned(grid));
  config.blockDim = dim3(kind != TableKind::kNone ? table_kernel_block_threads(kind) : kBlockThreads);
  config.dynamicSmemBytes = kind != TableKind::kNone ? size_t(table_kernel_smem_bytes(kind, launch.dtype)) : 0;
  config.stream = static_cast<cudaStream_t>(launch.stream);
  cudaLaunchAttribute attrs[1];
  attrs[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attrs[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attrs;
  config.numAttrs = pdl ? 1 : 0;
  const int flags = pdl ? ((launch.skip_wait ? 0 : kFlagWait) | kFlagTrigger) : 0;

  const cudaError_t e =
      kind != TableKind::kNone
          ? cudaLaunchKernelEx(&config, table_kernel_for(launch.dtype, access_bytes, kind), args, table, flags)
          : cudaLaunchKernelEx(&config, kernel_for(launch.dtype, access_bytes), args, flags);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return cuda_error("cudaLaunchKernelEx", e);
  }
  return {};
}

}  // namespace fuseproof::kernel
