// bias_gelu_tanh_cuda.h: the launcher's private entry into the CUDA side: the kernel instantiations of
// bias_gelu_tanh.cu, and the geometry, GELU-table cache and launch of bias_gelu_tanh_cuda_launch.cpp.
#pragma once

#include <cstdint>
#include <string>

#include "bias_gelu_tanh_policies.h"

namespace fuseproof::kernel {

/// Kernel flags: PDL's two halves, each only when the launch uses PDL.
enum KernelFlags : int {
  kFlagWait = 1,     ///< griddepcontrol.wait before the first global read of x or bias
  kFlagTrigger = 2,  ///< griddepcontrol.launch_dependents after the last store
};

/// Threads per block of the GELU-table fill kernel.
inline constexpr int kFillBlockThreads = 256;

// --- bias_gelu_tanh.cu (device code)

/// bias_gelu_tanh_kernel<P> for the policy P of (dtype, access bytes, kind): a __global__ taking
/// (BodyArgs, const uint16_t* table, int flags).
const void* bias_gelu_tanh_kernel_for(Half dtype, int vector_bytes, TableKind kind);
/// The fill kernel (uint16_t* table) of the GELU table that kind's kernels read, for dtype.
const void* gelu_table_fill_kernel_for(Half dtype, TableKind kind);

// --- bias_gelu_tanh_cuda_launch.cpp (host code)

/// A launch that has passed bias_gelu_tanh_can_implement.
struct CudaLaunch {
  Half dtype = Half::kBf16;
  int vector_bytes = 16;
  BodyArgs args{};
  int device = 0;
  void* stream = nullptr;
  bool pdl = true;
  bool skip_wait = false;  ///< test only: launch with PDL but without griddepcontrol.wait
  int max_grid = 0;        ///< test only: at most this many blocks (0: no limit)
  TableKind table = TableKind::kNone;  ///< a GELU-table kernel instead of the direct-math one
  bool table_auto = false; ///< table came from GeluMath::kAuto: fall back to direct math if it cannot be built now
};

/// Empty when `device` can run the kernel for (dtype, vector_bytes), else why not (no image for its architecture).
std::string bias_gelu_tanh_cuda_check(int device, Half dtype, int vector_bytes);

/// Empty when `device` can run the table kernel of `kind` (its table in opt-in shared memory per block), else why not.
std::string bias_gelu_tanh_cuda_table_check(int device, TableKind kind = TableKind::kFull);

/// The device's GELU table of `dtype` and `kind` (kFull: 65,536 x uint16, gelu_tanh_half<D>(p) at p; kRange:
/// gelu_tanh_half<D>(range_table_pattern<D>(i)) at i), built at first use by a kernel running the body's own
/// gelu_tanh_half, synchronously (so not during graph capture); nullptr and `error` set when that fails. `build` =
/// false only asks whether it exists.
const uint16_t* bias_gelu_tanh_cuda_table(int device, Half dtype, bool build, std::string* error,
                                          TableKind kind = TableKind::kFull);

/// min(SMs x resident blocks per SM, ceil(vectors / block)) for the policy of (dtype, access bytes, kind) on `device`
/// (residency from the occupancy API, asked once); 0 when unknown. For a table kind, valid once its table exists
/// (the build sets the shared-memory opt-in).
int64_t bias_gelu_tanh_cuda_grid(int device, Half dtype, int vector_bytes, int64_t n_vectors,
                                 TableKind kind = TableKind::kNone);

/// Bytes per access a table kernel (kWideOnlyFromSm100) uses for `vector_bytes` on a device of compute capability
/// `cc` (x10): 32 only on sm_100+; before it a 32-byte vector is two warp-contiguous 16-byte accesses (a 32-byte
/// stride per thread makes every 128-byte line be fetched twice, which the small L1 beside the table cannot absorb).
int table_access_bytes(int vector_bytes, int cc);

/// Launches on `launch.device` (restoring the caller's current device); empty on success, else the CUDA error.
std::string bias_gelu_tanh_cuda_launch(const CudaLaunch& launch);

}  // namespace fuseproof::kernel
