// bias_gelu_tanh_cuda_launch.cpp: the CUDA side's host code: DeviceGuard, the per-device caches (occupancy, GELU
// tables), the grid, and the PDL launch (cudaLaunchKernelExC) of the kernel that bias_gelu_tanh.cu instantiates.
#include <cuda_runtime_api.h>

#include <mutex>
#include <string>

#include "bias_gelu_tanh_cuda.h"

namespace fuseproof::kernel {

namespace {

constexpr int kMaxDevices = 64;

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

/// Threads per block, shared-memory and table bytes, vectors per block step, and whether a 32-byte vector runs only
/// from sm_100 (kWideOnlyFromSm100), of the policy of (dtype, vector bytes, kind).
struct Geometry {
  int threads, smem_bytes, table_bytes;
  int64_t step_vectors;
  bool wide_only_from_sm100;
};
Geometry geometry(Half dtype, int vector_bytes, TableKind kind) {
  return with_policy(dtype, vector_bytes, kind, [](auto tag) {
    using P = typename decltype(tag)::type;
    return Geometry{P::kThreads, policy_smem_bytes<P>(), policy_table_bytes<P>(), policy_block_step_vectors<P>(),
                    P::kWideOnlyFromSm100};
  });
}

/// Resident blocks per SM of each instantiation, per device, asked once (0 when the query fails).
int blocks_per_sm(int device, Half dtype, int vector_bytes, TableKind kind) {
  static std::mutex mu;
  static int cache[kMaxDevices][2][2][kTableKinds] = {};
  if (device < 0 || device >= kMaxDevices) return 0;
  const int di = dtype == Half::kBf16 ? 0 : 1, vi = vector_bytes == 32 ? 1 : 0;
  std::lock_guard<std::mutex> lock(mu);
  int& slot = cache[device][di][vi][int(kind) % kTableKinds];
  if (slot == 0) {
    DeviceGuard guard(device);
    const Geometry g = geometry(dtype, vector_bytes, kind);
    int n = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, bias_gelu_tanh_kernel_for(dtype, vector_bytes, kind),
                                                      g.threads, size_t(g.smem_bytes)) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    slot = n;
  }
  return slot;
}

/// Builds the GELU table of (dtype, kind) on the current device: the shared-memory opt-in for both vector widths of
/// the kernel that reads it, then the fill kernel, synchronously. nullptr and `error` set on failure.
uint16_t* build_table(Half dtype, TableKind kind, std::string* error) {
  for (int vb : {16, 32}) {
    const cudaError_t e = cudaFuncSetAttribute(bias_gelu_tanh_kernel_for(dtype, vb, kind),
                                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               geometry(dtype, vb, kind).smem_bytes);
    if (e != cudaSuccess) {
      cudaGetLastError();
      if (error) *error = cuda_error("cudaFuncSetAttribute(MaxDynamicSharedMemorySize)", e);
      return nullptr;
    }
  }
  const int bytes = geometry(dtype, 16, kind).table_bytes;
  const unsigned blocks = unsigned((bytes / 2 + kFillBlockThreads - 1) / kFillBlockThreads);
  uint16_t* table = nullptr;
  cudaStream_t stream = nullptr;
  cudaError_t e = cudaMalloc(reinterpret_cast<void**>(&table), size_t(bytes));
  if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  if (e == cudaSuccess) {
    void* args[] = {&table};
    e = cudaLaunchKernel(gelu_table_fill_kernel_for(dtype, kind), dim3(blocks), dim3(kFillBlockThreads), args, 0,
                         stream);
  }
  if (e == cudaSuccess) e = cudaStreamSynchronize(stream);
  if (stream) cudaStreamDestroy(stream);
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (table) cudaFree(table);
    if (error) *error = cuda_error("GELU table fill", e);
    return nullptr;
  }
  return table;
}

}  // namespace

int table_access_bytes(int vector_bytes, int cc) { return vector_bytes == 32 && cc >= 100 ? 32 : 16; }

std::string bias_gelu_tanh_cuda_table_check(int device, TableKind kind) {
  // The larger of the two dtypes' tables: a device that holds it holds both.
  const int need = geometry(Half::kFp16, 16, kind).smem_bytes;
  int optin = 0;
  if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess) {
    cudaGetLastError();
    optin = 0;
  }
  if (optin < need)
    return std::string("bias_gelu_tanh: options.math ") + table_kind_name(kind) + " needs " + std::to_string(need) +
           " bytes of shared memory per block on cuda:" + std::to_string(device) + ", got " + std::to_string(optin);
  if (kind != TableKind::kNone) {  // every table kernel runs the bulk ring
    int major = 0;
    if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) {
      cudaGetLastError();
      major = 0;
    }
    if (major < 9)
      return std::string("bias_gelu_tanh: options.math ") + table_kind_name(kind) +
             " needs bulk copies and mbarriers (sm_90 or newer) on cuda:" + std::to_string(device) + ", got sm_" +
             std::to_string(major) + "x";
  }
  return {};
}

const uint16_t* bias_gelu_tanh_cuda_table(int device, Half dtype, bool build, std::string* error, TableKind kind) {
  static std::mutex mu;
  static uint16_t* tables[kMaxDevices][2][kTableKinds] = {};  // [device][dtype][kind]
  if (device < 0 || device >= kMaxDevices) {
    if (error) *error = "bias_gelu_tanh: device ordinal must be below " + std::to_string(kMaxDevices) + ", got " +
                        std::to_string(device);
    return nullptr;
  }
  const int layout = int(kind);
  if (kind == TableKind::kNone || layout >= kTableKinds) {
    if (error) *error = "bias_gelu_tanh: a GELU table needs a table kind, got direct math";
    return nullptr;
  }
  std::lock_guard<std::mutex> lock(mu);
  uint16_t*& slot = tables[device][dtype == Half::kBf16 ? 0 : 1][layout];
  if (slot || !build) return slot;
  DeviceGuard guard(device);
  slot = build_table(dtype, kind, error);  // kept for the life of the process
  return slot;
}

std::string bias_gelu_tanh_cuda_check(int device, Half dtype, int vector_bytes) {
  DeviceGuard guard(device);
  cudaFuncAttributes attr{};
  const cudaError_t e = cudaFuncGetAttributes(&attr, bias_gelu_tanh_kernel_for(dtype, vector_bytes, TableKind::kNone));
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

int64_t bias_gelu_tanh_cuda_grid(int device, Half dtype, int vector_bytes, int64_t n_vectors, TableKind kind) {
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  const int per_sm = blocks_per_sm(device, dtype, vector_bytes, kind);
  if (per_sm <= 0) return 0;
  const int64_t resident = int64_t(sms) * per_sm;
  const int64_t step = geometry(dtype, vector_bytes, kind).step_vectors;
  const int64_t needed = (n_vectors + step - 1) / step;
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
  // The range and bulk kernels move a 32-byte vector as two 16-byte ones before sm_100: same elements, twice the
  // count.
  BodyArgs args = launch.args;
  int access_bytes = launch.vector_bytes;
  if (geometry(launch.dtype, launch.vector_bytes, kind).wide_only_from_sm100 &&
      table_access_bytes(launch.vector_bytes, major * 10 + minor) != launch.vector_bytes) {
    access_bytes = 16;
    args.n_vectors *= 2;
    args.width_vectors *= 2;
  }
  int64_t grid = bias_gelu_tanh_cuda_grid(launch.device, launch.dtype, access_bytes, args.n_vectors, kind);
  if (launch.max_grid > 0 && grid > launch.max_grid) grid = launch.max_grid;
  if (grid <= 0)
    return "bias_gelu_tanh: grid size must be positive (occupancy query failed), got " + std::to_string(grid);

  const Geometry g = geometry(launch.dtype, access_bytes, kind);
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(unsigned(grid));
  config.blockDim = dim3(unsigned(g.threads));
  config.dynamicSmemBytes = size_t(g.smem_bytes);
  config.stream = static_cast<cudaStream_t>(launch.stream);
  cudaLaunchAttribute attrs[1];
  attrs[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attrs[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attrs;
  config.numAttrs = pdl ? 1 : 0;
  int flags = pdl ? ((launch.skip_wait ? 0 : kFlagWait) | kFlagTrigger) : 0;
  void* kernel_args[] = {&args, &table, &flags};
  const cudaError_t e =
      cudaLaunchKernelExC(&config, bias_gelu_tanh_kernel_for(launch.dtype, access_bytes, kind), kernel_args);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return cuda_error("cudaLaunchKernelEx", e);
  }
  return {};
}

}  // namespace fuseproof::kernel
