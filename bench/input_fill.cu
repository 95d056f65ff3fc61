// input_fill.cu: device kernels for the benchmark's inputs: one element per thread per turn of a grid-stride loop.
#include "bench/input_fill.h"

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "bench/input_element.h"
#include "kernels/half_convert.h"

namespace fuseproof::bench {

namespace {

constexpr int kThreads = 256;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("bench: input fill ") + what + " failed: " + cudaGetErrorName(e));
}

__global__ void uniform16_kernel(uint16_t* dst, int64_t n, uint64_t seed, uint64_t stream) {
  for (int64_t i = blockIdx.x * int64_t(kThreads) + threadIdx.x; i < n; i += int64_t(gridDim.x) * kThreads)
    dst[i] = uniform16_element(seed, stream, uint64_t(i));
}

template <kernel::Half D>
__global__ void normal_kernel(uint16_t* dst, int64_t n, uint64_t seed, uint64_t stream, float sigma) {
  for (int64_t i = blockIdx.x * int64_t(kThreads) + threadIdx.x; i < n; i += int64_t(gridDim.x) * kThreads)
    dst[i] = kernel::float_to_half_rn<D>(normal_element(seed, stream, uint64_t(i), sigma));
}

__global__ void tile_kernel(uint16_t* dst, int64_t n, const uint16_t* sample, int64_t m, int64_t offset) {
  for (int64_t i = blockIdx.x * int64_t(kThreads) + threadIdx.x; i < n; i += int64_t(gridDim.x) * kThreads)
    dst[i] = sample[(i + offset) % m];
}

}  // namespace

void fill_device(uint16_t* dst, int64_t n, const Distribution& d, bool bf16, uint64_t seed, uint64_t stream,
                 void* cuda_stream) {
  if (n <= 0) return;
  const cudaStream_t s = static_cast<cudaStream_t>(cuda_stream);
  const unsigned grid = unsigned(std::min<int64_t>((n + kThreads - 1) / kThreads, 65536));
  switch (d.kind) {
    case DistKind::kUniform16:
      uniform16_kernel<<<grid, kThreads, 0, s>>>(dst, n, seed, stream);
      break;
    case DistKind::kNormal:
      if (bf16) normal_kernel<kernel::Half::kBf16><<<grid, kThreads, 0, s>>>(dst, n, seed, stream, d.sigma);
      else normal_kernel<kernel::Half::kFp16><<<grid, kThreads, 0, s>>>(dst, n, seed, stream, d.sigma);
      break;
    case DistKind::kSample: {
      const std::vector<uint16_t> p = sample_patterns(d, bf16, stream == kBiasStream);
      const int64_t m = int64_t(p.size());
      uint16_t* sample = nullptr;
      check(cudaMalloc(&sample, size_t(m) * 2), "cudaMalloc");
      check(cudaMemcpyAsync(sample, p.data(), size_t(m) * 2, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync");
      tile_kernel<<<grid, kThreads, 0, s>>>(dst, n, sample, m, sample_offset(stream, m));
      check(cudaGetLastError(), "launch");
      check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
      check(cudaFree(sample), "cudaFree");
      return;
    }
  }
  check(cudaGetLastError(), "launch");
}

}  // namespace fuseproof::bench
