// quant_kernel.cuh: the quantization kernels' CUDA grid: one thread per scale cell (a block of 16 or 128 elements of
// one row, or a padding cell of the swizzled layout, which gets its own thread and writes 0x00), over quant_ops.h.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "quant_ops.h"

namespace fuseproof::detail {

/// Grid-stride over the scale tensor's cells, row-major (row r, block k); each thread its block's activation, amax,
/// scale and codes (no cross-thread reduction: a block is one thread's).
template <kernel::QuantOp Op, kernel::Half D, kernel::QuantContract C, kernel::QuantFault F>
__global__ void __launch_bounds__(128) quant_kernel(const kernel::QuantArgs a, int64_t cols, int64_t cells) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < cells; i += int64_t(gridDim.x) * blockDim.x)
    kernel::quant_cell<Op, D, C, F>(a, i / cols, i % cols);
}

template <kernel::QuantOp Op, kernel::QuantContract C, kernel::QuantFault F = kernel::QuantFault::kNone>
std::string quant_launch_op(const kernel::QuantArgs& a, int32_t dtype, cudaStream_t stream) {
  const int64_t cols = kernel::quant_scale_cols(a.layout, a.blocks);
  const int64_t cells = kernel::quant_scale_rows(a.layout, a.rows) * cols;
  int sms = 132, dev = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>((cells + 127) / 128, int64_t(sms) * 16));
  if (dtype == FUSEPROOF_DTYPE_BF16)
    quant_kernel<Op, kernel::Half::kBf16, C, F><<<unsigned(blocks), 128, 0, stream>>>(a, cols, cells);
  else
    quant_kernel<Op, kernel::Half::kFp16, C, F><<<unsigned(blocks), 128, 0, stream>>>(a, cols, cells);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? "" : std::string(kernel::kQuant<Op>.name) + ": launch failed: " + cudaGetErrorString(e);
}

}  // namespace fuseproof::detail
