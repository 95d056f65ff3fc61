// family_mutant_cuda_plugin.cu: a CUDA-memory plugin of a family op carrying one bug: one thread per element.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>

#include "kernels/mutants/mutant_export.h"
#include "kernels/mutants/family_mutant_kernel.h"

namespace fuseproof::mutants {
namespace {

template <Half D>
__global__ void mutant_kernel(uint16_t* out, const uint16_t* a, const uint16_t* b, int64_t rows, int64_t w) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * w; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / w, col = i % w;
    out[i] = mutant_row_element<kOp, D, kBug, kFp32>(a[kernel::family_in0<kOp>(r, col, w)],
                                                     b[mutant_in1<kOp, kBug>(r, col, w)], r, rows);
  }
}

int call(const fuseproof_call_t* c) {
  const FamilyLaunch l{kOp, kFp32, true, kVector};
  std::string why = family_can_implement(l, *c);
  if (why.empty()) {
    const int64_t n = c->shape[0] * c->shape[1];
    const unsigned blocks = unsigned(std::min<int64_t>((n + 255) / 256, 132 * 16));
    auto* out = static_cast<uint16_t*>(c->out);
    const auto* a = static_cast<const uint16_t*>(c->inputs[0].data);
    const auto* b = static_cast<const uint16_t*>(c->inputs[1].data);
    auto s = static_cast<cudaStream_t>(c->stream);
    if (mutant_dtype<kBug>(c->dtype) == FUSEPROOF_DTYPE_BF16)
      mutant_kernel<Half::kBf16><<<blocks, 256, 0, s>>>(out, a, b, c->shape[0], c->shape[1]);
    else
      mutant_kernel<Half::kFp16><<<blocks, 256, 0, s>>>(out, a, b, c->shape[0], c->shape[1]);
    if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess)
      why = std::string("launch failed: ") + cudaGetErrorString(e);
  }
  return family_call_status(*c, why);
}

}  // namespace
}  // namespace fuseproof::mutants

FUSEPROOF_FAMILY_MUTANT_EXPORT("cuda", true, &fuseproof::mutants::call)
