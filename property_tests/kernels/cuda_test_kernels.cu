// cuda_test_kernels.cu: device helpers for the GPU tests.
#include "property_tests/kernels/cuda_test_kernels.h"

#include <cuda_runtime.h>

#include <stdexcept>

namespace fuseproof::test {

namespace {

__host__ __device__ inline uint16_t splitmix_bits(uint64_t seed, uint64_t k) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + k + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return uint16_t((z ^ (z >> 31)) >> 17);
}

__global__ void fill_domain_kernel(uint16_t* x, uint16_t* bias) {
  const uint64_t stride = uint64_t(gridDim.x) * blockDim.x;
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (uint64_t(1) << 32); i += stride) {
    x[i] = uint16_t(i >> 16);
    if (i < 65536) bias[i] = uint16_t(i);
  }
}

__global__ void fill_pattern_kernel(uint16_t* p, int64_t n, uint64_t seed) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) p[i] = splitmix_bits(seed, uint64_t(i));
}

/// 32 x 32 tiles through shared memory; the +1 column avoids bank conflicts.
__global__ void transpose_kernel(const uint16_t* out, uint16_t* staging, uint32_t first, uint32_t count) {
  __shared__ uint16_t tile[32][33];
  const uint32_t r0 = blockIdx.x * 32, j0 = blockIdx.y * 32;
  for (uint32_t dy = threadIdx.y; dy < 32; dy += blockDim.y) {
    const uint32_t r = r0 + dy, j = j0 + threadIdx.x;
    if (j < count) tile[dy][threadIdx.x] = out[uint64_t(r) * 65536 + first + j];
  }
  __syncthreads();
  for (uint32_t dy = threadIdx.y; dy < 32; dy += blockDim.y) {
    const uint32_t j = j0 + dy, r = r0 + threadIdx.x;
    if (j < count) staging[uint64_t(j) * 65536 + r] = tile[threadIdx.x][dy];
  }
}

__global__ void mismatch_kernel(const uint16_t* a, const uint16_t* b, int64_t n, unsigned long long* count,
                                DeviceMismatch* records, int max_records) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    if (a[i] != b[i]) {
      const unsigned long long slot = atomicAdd(count, 1ull);
      if (slot < unsigned(max_records)) records[slot] = DeviceMismatch{uint64_t(i), a[i], b[i]};
    }
  }
}

__global__ void pdl_producer_kernel(uint16_t* x, int64_t n, uint64_t seed, uint32_t spin_ns) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  // Let the dependent grid launch now, while this one still has all of x to write.
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
  const unsigned long long start = clock64();
  const unsigned long long cycles = (unsigned long long)spin_ns * 2;  // ~2 GHz; only "long enough" matters
  while (clock64() - start < cycles) __nanosleep(1000);
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) x[i] = splitmix_bits(seed, uint64_t(i));
}

int sm_count() {
  int dev = 0, sms = 0;
  cuda_check(cudaGetDevice(&dev), "cudaGetDevice");
  cuda_check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "cudaDeviceGetAttribute");
  return sms;
}

}  // namespace

void cuda_check(int status, const char* what) {
  const auto e = static_cast<cudaError_t>(status);
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
}

DeviceBuffer::DeviceBuffer(size_t bytes) : bytes_(bytes) { cuda_check(cudaMalloc(&p_, bytes), "cudaMalloc"); }
DeviceBuffer::~DeviceBuffer() { cudaFree(p_); }
void DeviceBuffer::poison(uint8_t byte) { cuda_check(cudaMemset(p_, byte, bytes_), "cudaMemset"); }
void DeviceBuffer::upload(const void* host, size_t bytes, size_t offset) {
  cuda_check(cudaMemcpy(static_cast<char*>(p_) + offset, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
}
void DeviceBuffer::download(void* host, size_t bytes, size_t offset) const {
  cuda_check(cudaMemcpy(host, static_cast<const char*>(p_) + offset, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
}

uint16_t pattern_bits(uint64_t seed, uint64_t k) { return splitmix_bits(seed, k); }

void fill_domain(uint16_t* x, uint16_t* bias) {
  fill_domain_kernel<<<sm_count() * 8, 256>>>(x, bias);
  cuda_check(cudaGetLastError(), "fill_domain launch");
  cuda_check(cudaDeviceSynchronize(), "fill_domain");
}

void fill_pattern(uint16_t* p, int64_t n, uint64_t seed) {
  fill_pattern_kernel<<<sm_count() * 8, 256>>>(p, n, seed);
  cuda_check(cudaGetLastError(), "fill_pattern launch");
  cuda_check(cudaDeviceSynchronize(), "fill_pattern");
}

void transpose_domain_chunk(const uint16_t* out, uint16_t* staging, uint32_t first, uint32_t count, void* stream) {
  const dim3 grid(65536 / 32, (count + 31) / 32), block(32, 8);
  transpose_kernel<<<grid, block, 0, static_cast<cudaStream_t>(stream)>>>(out, staging, first, count);
  cuda_check(cudaGetLastError(), "transpose launch");
}

uint64_t count_mismatches(const uint16_t* a, const uint16_t* b, int64_t n, DeviceMismatch* records, int max_records) {
  unsigned long long* d_count = nullptr;
  DeviceMismatch* d_records = nullptr;
  cuda_check(cudaMalloc(&d_count, sizeof *d_count), "cudaMalloc");
  cuda_check(cudaMalloc(&d_records, sizeof(DeviceMismatch) * size_t(max_records > 0 ? max_records : 1)), "cudaMalloc");
  cuda_check(cudaMemset(d_count, 0, sizeof *d_count), "cudaMemset");
  mismatch_kernel<<<sm_count() * 8, 256>>>(a, b, n, d_count, d_records, max_records);
  cuda_check(cudaGetLastError(), "mismatch launch");
  unsigned long long count = 0;
  cuda_check(cudaMemcpy(&count, d_count, sizeof count, cudaMemcpyDeviceToHost), "cudaMemcpy");
  const size_t kept = size_t(count < unsigned(max_records) ? count : unsigned(max_records));
  if (kept) cuda_check(cudaMemcpy(records, d_records, kept * sizeof(DeviceMismatch), cudaMemcpyDeviceToHost), "cudaMemcpy");
  cudaFree(d_count);
  cudaFree(d_records);
  return count;
}

void launch_pdl_producer(uint16_t* x, int64_t n, uint64_t seed, uint32_t spin_ns, int blocks, void* stream) {
  // An SM runs blocks of one shared-memory carveout at a time: a dependent that needs a large carveout (the table
  // kernel's 128 KiB) cannot start beside a producer configured for a small one, so it would never start early and the
  // negative control could not see a stale read. The producer asks for the largest carveout too.
  cuda_check(cudaFuncSetAttribute(pdl_producer_kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                  cudaSharedmemCarveoutMaxShared),
             "cudaFuncSetAttribute(carveout)");
  pdl_producer_kernel<<<blocks, 256, 0, static_cast<cudaStream_t>(stream)>>>(x, n, seed, spin_ns);
  cuda_check(cudaGetLastError(), "pdl producer launch");
}

std::string pending_cuda_error() { return cudaGetErrorName(cudaPeekAtLastError()); }

}  // namespace fuseproof::test
