// family_mutant_cuda_plugin.cu: a CUDA-memory plugin of a family op carrying one bug: one thread per element.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>

#include "kernels/family_launcher.h"
#include "kernels/mutants/family_mutant_kernel.h"

namespace fuseproof::mutants {
namespace {

constexpr FamilyOp kOp = FamilyOp::FUSEPROOF_FAMILY_OP;
constexpr FamilyBug kBug = FamilyBug::FUSEPROOF_FAMILY_BUG;
constexpr bool kFp32 = FUSEPROOF_FAMILY_FP32 != 0;
constexpr int kVector = kBug == FamilyBug::kWrongHalfTail ? 1 : kernel::kFamilyVectorElems;

template <Half D>
__global__ void mutant_kernel(uint16_t* out, const uint16_t* a, const uint16_t* b, int64_t rows, int64_t w) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * w; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / w, col = i % w;
    out[i] = mutant_element<kOp, D, kBug, kFp32>(a[kernel::family_in0<kOp>(r, col, w)], b[mutant_in1<kOp, kBug>(r, col, w)]);
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
    if (c->dtype == FUSEPROOF_DTYPE_BF16) mutant_kernel<Half::kBf16><<<blocks, 256, 0, s>>>(out, a, b, c->shape[0], c->shape[1]);
    else mutant_kernel<Half::kFp16><<<blocks, 256, 0, s>>>(out, a, b, c->shape[0], c->shape[1]);
    const cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) return 0;
    why = std::string("launch failed: ") + cudaGetErrorString(e);
  }
  if (c->error && c->error_size) std::snprintf(c->error, c->error_size, "%s", why.c_str());
  return 1;
}

const fuseproof_kernel_descriptor_t kDescriptor = {
    FUSEPROOF_KERNEL_ABI_VERSION, sizeof(fuseproof_kernel_descriptor_t), "mutant cuda " FUSEPROOF_FAMILY_NAME,
    FamilyTraits<kOp>::kName, kFp32 ? "fp32" : "eager", FUSEPROOF_MEMORY_CUDA, 2 * kVector, &call,
};

}  // namespace
}  // namespace fuseproof::mutants

FUSEPROOF_DEFINE_PLUGIN(&fuseproof::mutants::kDescriptor)
