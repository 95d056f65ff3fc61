// family_kernel.cu: the family's built-in CUDA kernels: 16-byte vectors of the output, a grid-stride loop over 64-bit
// indices, the element function of family_ops.h (no table, no PDL: these kernels are the audit's controls, not tuned).
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "family_dispatch.h"
#include "family_launcher.h"

namespace fuseproof {

namespace {

using kernel::Contract;

/// The op's input pointers in declared order (unused slots null).
struct FamilyInputs {
  const uint16_t* p[3];
};

/// One thread per 8-element vector of out, grid-stride: the vector's 8 elements lie in one row (width is a multiple
/// of 8), so each input's 8 elements are one aligned 16-byte load, a group-broadcast input's from row r / group_rows.
template <kernel::FamilyOp Op, kernel::Half D, Contract C>
__global__ void __launch_bounds__(256) family_kernel(uint16_t* __restrict__ out, const FamilyInputs in, int64_t rows,
                                                     int64_t w, int64_t group_rows) {
  constexpr int V = kernel::kFamilyVectorElems;
  constexpr int N = kernel::kFamily<Op>.inputs;
  const int64_t per_row = w / V, vectors = rows * per_row;
  for (int64_t v = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; v < vectors; v += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = v / per_row, c = (v % per_row) * V;
    uint16_t e[3][V] = {}, oe[V];
#pragma unroll
    for (int i = 0; i < N; ++i) {
      const uint4 iv = __ldg(reinterpret_cast<const uint4*>(in.p[i] + kernel::family_in<Op>(i, r, c, w, group_rows)));
      memcpy(e[i], &iv, 16);
    }
#pragma unroll
    for (int k = 0; k < V; ++k) oe[k] = kernel::family_element<Op, D, C>(e[0][k], e[1][k], e[2][k]);
    uint4 ov;
    memcpy(&ov, oe, 16);
    *reinterpret_cast<uint4*>(out + r * w + c) = ov;
  }
}

template <kernel::FamilyOp Op, kernel::Half D, Contract C>
std::string launch(const fuseproof_call_t& c) {
  const int64_t vectors = c.shape[0] * (c.shape[1] / kernel::kFamilyVectorElems);
  int sms = 132, dev = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>((vectors + 255) / 256, int64_t(sms) * 8));
  FamilyInputs in{};
  for (int i = 0; i < kernel::kFamily<Op>.inputs; ++i) in.p[i] = static_cast<const uint16_t*>(c.inputs[i].data);
  const int64_t group_rows = kernel::kFamily<Op>.group_mask ? c.group_rows : 1;
  family_kernel<Op, D, C><<<unsigned(blocks), 256, 0, static_cast<cudaStream_t>(c.stream)>>>(
      static_cast<uint16_t*>(c.out), in, c.shape[0], c.shape[1], group_rows);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? "" : std::string(kernel::kFamily<Op>.name) + ": launch failed: " + cudaGetErrorString(e);
}

struct CudaRun {
  template <kernel::FamilyOp Op, kernel::Half D, Contract C>
  static std::string run(const fuseproof_call_t& c) {
    return launch<Op, D, C>(c);
  }
};

}  // namespace

std::string detail::family_launch_cuda(const FamilyLaunch& l, const fuseproof_call_t& c) {
  return detail::family_dispatch<CudaRun>(l, c, std::string("family: unknown op"));
}

}  // namespace fuseproof
