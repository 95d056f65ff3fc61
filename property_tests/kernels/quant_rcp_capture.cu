// quant_rcp_capture.cu: the device's rcp.approx.ftz.f32 on the 2^23 mantissas of [1, 2), for the rcp-approx contract's
// model in the GPU tests (the instruction modelled by itself: what the test then checks is everything around it).
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "property_tests/kernels/cuda_test_kernels.h"
#include "property_tests/kernels/quant_rcp_capture.h"

namespace fuseproof::test {

namespace {
__global__ void rcp_mantissas(uint32_t* out) {
  const uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= (1u << 23)) return;
  float r;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(__uint_as_float(0x3F800000u | k)));
  out[k] = __float_as_uint(r);
}
}  // namespace

std::vector<uint32_t> capture_rcp_approx_mantissas() {
  constexpr uint32_t n = 1u << 23;
  DeviceBuffer d(size_t(n) * 4);
  rcp_mantissas<<<n / 256, 256>>>(static_cast<uint32_t*>(d.get()));
  cuda_check(cudaDeviceSynchronize(), "rcp_mantissas");
  std::vector<uint32_t> h(n);
  d.download(h.data(), size_t(n) * 4);
  return h;
}

}  // namespace fuseproof::test
