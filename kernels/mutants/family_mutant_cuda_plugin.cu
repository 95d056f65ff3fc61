// family_mutant_cuda_plugin.cu: a CUDA-memory plugin of a family op carrying one bug: one thread per element.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>

#include "kernels/mutants/mutant_export.h"
#include "kernels/mutants/family_mutant_kernel.h"

namespace fuseproof::mutants {
namespace {

/// The op's input pointers in declared order (unused slots null).
struct MutantInputs {
  const uint16_t* p[3];
};

template <Half D>
__global__ void mutant_kernel(uint16_t* out, const MutantInputs in, int64_t rows, int64_t w, int64_t group_rows,
                              int64_t done) {
  constexpr int N = kFamily<kOp>.inputs;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < rows * w; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / w, col = i % w;
    if (col >= done) continue;  // the first-call bug's unwritten tail
    uint16_t e[3] = {};
#pragma unroll
    for (int k = 0; k < N; ++k) e[k] = in.p[k][mutant_in<kOp, kBug>(k, r, col, w, group_rows, rows)];
    out[i] = mutant_row_element<kOp, D, kBug, kContract>(e[0], e[1], e[2], r, rows);
  }
}

/// The second pass of the workspace bugs: out[i] = ws[i].
__global__ void copy_out(uint16_t* out, const uint16_t* ws, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = ws[i];
}

std::string cuda_error(const char* what, cudaError_t e) {
  return std::string(what) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

/// The static-workspace bug's one device workspace per process, grown (cudaFree, then cudaMalloc) when a call needs
/// more.
std::string static_workspace(size_t bytes, uint16_t** ws) {
  static uint16_t* buffer = nullptr;
  static size_t capacity = 0;
  if (bytes > capacity) {
    if (buffer) cudaFree(buffer);
    buffer = nullptr;
    capacity = 0;
    if (const cudaError_t e = cudaMalloc(&buffer, bytes); e != cudaSuccess) return cuda_error("cudaMalloc", e);
    capacity = bytes;
  }
  *ws = buffer;
  return "";
}

int call(const fuseproof_call_t* c) {
  const FamilyLaunch l{kOp, kContract, true, kVector};
  std::string why = family_can_implement(l, *c);
  if (why.empty()) {
    const int64_t n = c->shape[0] * c->shape[1];
    const unsigned blocks = unsigned(std::min<int64_t>((n + 255) / 256, 132 * 16));
    auto* out = static_cast<uint16_t*>(c->out);
    MutantInputs in{};
    for (int k = 0; k < kFamily<kOp>.inputs; ++k) in.p[k] = static_cast<const uint16_t*>(c->inputs[k].data);
    const int64_t g = kFamily<kOp>.group_mask ? c->group_rows : 1;
    auto s = static_cast<cudaStream_t>(c->stream);
    const int64_t step = mutant_step<kBug>(c->shape[1]);
    const int64_t done = step ? c->shape[1] / step * step : c->shape[1];
    uint16_t* dst = out;
    if constexpr (kBug == FamilyBug::kStaticWorkspace) {
      why = static_workspace(size_t(std::max<int64_t>(n, 1)) * 2, &dst);
    } else if constexpr (kBug == FamilyBug::kPerCallMalloc) {
      if (const cudaError_t e = cudaMalloc(&dst, size_t(std::max<int64_t>(n, 1)) * 2); e != cudaSuccess)
        why = cuda_error("cudaMalloc", e), dst = nullptr;
    }
    if (why.empty()) {
      if (mutant_dtype<kBug>(c->dtype) == FUSEPROOF_DTYPE_BF16)
        mutant_kernel<Half::kBf16><<<blocks, 256, 0, s>>>(dst, in, c->shape[0], c->shape[1], g, done);
      else
        mutant_kernel<Half::kFp16><<<blocks, 256, 0, s>>>(dst, in, c->shape[0], c->shape[1], g, done);
      if (dst != out) copy_out<<<blocks, 256, 0, s>>>(out, dst, n);
      if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess)
        why = std::string("launch failed: ") + cudaGetErrorString(e);
    }
    if (kBug == FamilyBug::kPerCallMalloc && dst && dst != out)
      if (const cudaError_t e = cudaFree(dst); e != cudaSuccess && why.empty()) why = cuda_error("cudaFree", e);
  }
  return family_call_status(*c, why);
}

}  // namespace
}  // namespace fuseproof::mutants

FUSEPROOF_FAMILY_MUTANT_EXPORT("cuda", true, &fuseproof::mutants::call)
