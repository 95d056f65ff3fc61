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

/// Which kernel a launch runs: direct math, the full 65,536-entry table (1 block per SM), or the compact |x| < 8 table
/// with 2 or 1 resident 1,024-thread blocks per SM.
enum class TableKind : int { kNone = 0, kFull = 1, kCompact2 = 2, kCompact1 = 3 };

/// A launch that has passed bias_gelu_tanh_can_implement.
struct CudaLaunch {
  Half dtype = Half::kBf16;
  int vector_bytes = 16;
  BodyArgs args{};
  int device = 0;
  void* stream = nullptr;
  bool pdl = true;
  bool skip_wait = false;  ///< test only: launch with PDL but without griddepcontrol.wait
  TableKind table = TableKind::kNone;  ///< a GELU-table kernel instead of the direct-math one
  bool table_auto = false; ///< table came from GeluMath::kAuto: fall back to direct math if it cannot be built now
};

/// Empty when `device` can run the kernel for (dtype, vector_bytes), else why not (no image for its architecture).
std::string bias_gelu_tanh_cuda_check(int device, Half dtype, int vector_bytes);

/// min(SMs x resident blocks per SM, ceil(vectors / block)) for the instantiation on `device`; 0 when unknown.
int64_t bias_gelu_tanh_cuda_grid(int device, Half dtype, int vector_bytes, int64_t n_vectors);

/// Threads per block of a table kernel of `kind` (kTableBlockThreads, or kCompactBlockThreads<2> for kCompact2).
int table_kernel_block_threads(TableKind kind);

/// Shared memory per block of a table kernel of `kind` (kFull: 128 KiB; compact: kCompactBytes of the larger dtype).
int table_kernel_smem_bytes(TableKind kind, Half dtype);

/// Empty when `device` can run the table kernel of `kind` (its table in opt-in shared memory per block), else why not.
std::string bias_gelu_tanh_cuda_table_check(int device, TableKind kind = TableKind::kFull);

/// The device's GELU table of `dtype` and `kind` (kFull: 65,536 x uint16, gelu_tanh_half<D>(p) at p; compact:
/// gelu_tanh_half<D>(compact_table_pattern<D>(i)) at i), built at first use by a kernel running the body's own
/// gelu_tanh_half, synchronously (so not during graph capture); nullptr and `error` set when that fails. `build` =
/// false only asks whether it exists.
const uint16_t* bias_gelu_tanh_cuda_table(int device, Half dtype, bool build, std::string* error,
                                          TableKind kind = TableKind::kFull);

/// Like bias_gelu_tanh_cuda_grid for a table kernel (1,024-thread blocks, each with its table in shared memory).
/// Valid once the table of `dtype` and `kind` exists on `device` (its build sets the shared-memory opt-in).
int64_t bias_gelu_tanh_cuda_table_grid(int device, Half dtype, int vector_bytes, int64_t n_vectors,
                                       TableKind kind = TableKind::kFull);

/// Bytes per access a compact kernel uses for `vector_bytes` on a device of compute capability `cc` (x10): 32 only
/// on sm_100+; before it a 32-byte vector is two warp-contiguous 16-byte accesses (a 32-byte stride per thread makes
/// every 128-byte line be fetched twice, which the small L1 beside the table cannot absorb).
int compact_access_bytes(int vector_bytes, int cc);

/// Launches on `launch.device` (restoring the caller's current device); empty on success, else the CUDA error.
std::string bias_gelu_tanh_cuda_launch(const CudaLaunch& launch);

}  // namespace fuseproof::kernel
