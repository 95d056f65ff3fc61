// family_kernel.cu: the family's built-in CUDA kernels: 16-byte vectors of the output, a grid-stride loop, the
// element function of family_ops.h (no table, no PDL: these kernels are the audit's controls, not tuned).
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "family_launcher.h"

namespace fuseproof {

namespace {

template <kernel::FamilyOp Op, kernel::Half D, bool kFp32>
__global__ void __launch_bounds__(256) family_kernel(uint16_t* __restrict__ out, const uint16_t* __restrict__ a,
                                                     const uint16_t* __restrict__ b, int64_t rows, int64_t w) {
  constexpr int V = kernel::kFamilyVectorElems;
  const int64_t vectors = rows * (w / V);
  for (int64_t v = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; v < vectors; v += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = v / (w / V), c = (v % (w / V)) * V;
    const uint4 av = *reinterpret_cast<const uint4*>(a + kernel::family_in0<Op>(r, c, w));
    const uint4 bv = *reinterpret_cast<const uint4*>(b + kernel::family_in1<Op>(r, c, w));
    uint16_t ae[V], be[V], oe[V];
    memcpy(ae, &av, 16);
    memcpy(be, &bv, 16);
#pragma unroll
    for (int i = 0; i < V; ++i) oe[i] = kernel::family_element<Op, D, kFp32>(ae[i], be[i]);
    uint4 ov;
    memcpy(&ov, oe, 16);
    *reinterpret_cast<uint4*>(out + r * w + c) = ov;
  }
}

template <kernel::FamilyOp Op, kernel::Half D, bool kFp32>
std::string launch(const fuseproof_call_t& c) {
  const int64_t vectors = c.shape[0] * (c.shape[1] / kernel::kFamilyVectorElems);
  int sms = 132, dev = 0;
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  const int64_t blocks = std::max<int64_t>(1, std::min<int64_t>((vectors + 255) / 256, int64_t(sms) * 8));
  family_kernel<Op, D, kFp32><<<unsigned(blocks), 256, 0, static_cast<cudaStream_t>(c.stream)>>>(
      static_cast<uint16_t*>(c.out), static_cast<const uint16_t*>(c.inputs[0].data),
      static_cast<const uint16_t*>(c.inputs[1].data), c.shape[0], c.shape[1]);
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? "" : std::string(kernel::FamilyTraits<Op>::kName) + ": launch failed: " + cudaGetErrorString(e);
}

template <kernel::FamilyOp Op>
std::string dispatch(const FamilyLaunch& l, const fuseproof_call_t& c) {
  const bool bf16 = c.dtype == FUSEPROOF_DTYPE_BF16;
  if constexpr (kernel::FamilyTraits<Op>::kPacked) {
    if (l.fp32) return bf16 ? launch<Op, kernel::Half::kBf16, true>(c) : launch<Op, kernel::Half::kFp16, true>(c);
  }
  return bf16 ? launch<Op, kernel::Half::kBf16, false>(c) : launch<Op, kernel::Half::kFp16, false>(c);
}

}  // namespace

std::string detail::family_launch_cuda(const FamilyLaunch& l, const fuseproof_call_t& c) {
  switch (l.op) {
    case kernel::FamilyOp::kBiasGeluErf: return dispatch<kernel::FamilyOp::kBiasGeluErf>(l, c);
    case kernel::FamilyOp::kSiluAndMul: return dispatch<kernel::FamilyOp::kSiluAndMul>(l, c);
    case kernel::FamilyOp::kGeluTanhAndMul: return dispatch<kernel::FamilyOp::kGeluTanhAndMul>(l, c);
    case kernel::FamilyOp::kGeluAndMul: return dispatch<kernel::FamilyOp::kGeluAndMul>(l, c);
  }
  return "family: unknown op";
}

}  // namespace fuseproof
