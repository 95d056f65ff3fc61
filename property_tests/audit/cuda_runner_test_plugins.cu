// cuda_runner_test_plugins.cu: CUDA plugins of bias_gelu_tanh (ABI version 4, CUDA memory) that write known values,
// for the elementwise CUDA runner's own checks: out = x (a copy, so every element read back is known).
// -DET_WRITES_INPUT also flips the last element of x; -DET_OVERRUN also writes the element after out's last.
#include <cuda_runtime.h>

#include <cstdio>

#include "kernels/fuseproof_kernel_abi.h"

namespace {

__global__ void copy_x(uint16_t* out, uint16_t* x, int64_t n) {
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) out[i] = x[i];
#if defined(ET_WRITES_INPUT)
  if (blockIdx.x == 0 && threadIdx.x == 0) x[n - 1] ^= 1;  // after its own copy: out still holds the old value
#endif
#if defined(ET_OVERRUN)
  if (blockIdx.x == 0 && threadIdx.x == 0) out[n] = 0;
#endif
}

int reject(const fuseproof_call_t* c, const char* what) {
  if (c->error && c->error_size) snprintf(c->error, c->error_size, "cuda runner test plugin: %s", what);
  return 1;
}

int call(const fuseproof_call_t* c) {
  if (c->struct_size < FUSEPROOF_CALL_V3_SIZE) return reject(c, "struct_size too small");
  if (!c->out || c->n_inputs != 2 || !c->inputs[0].data || !c->inputs[1].data) return reject(c, "null pointer");
  if (c->shape[0] < 1 || c->shape[1] < 8 || c->shape[1] % 8) return reject(c, "width must be a multiple of 8");
  if (c->inputs[0].stride[0] != c->shape[1] || c->inputs[0].stride[1] != 1) return reject(c, "x must be contiguous");
  const int64_t n = c->shape[0] * c->shape[1];
  copy_x<<<256, 256, 0, static_cast<cudaStream_t>(c->stream)>>>(
      static_cast<uint16_t*>(c->out), static_cast<uint16_t*>(const_cast<void*>(c->inputs[0].data)), n);
  return cudaGetLastError() == cudaSuccess ? 0 : reject(c, "launch failed");
}

const fuseproof_kernel_descriptor_t kDescriptor = {
    FUSEPROOF_KERNEL_ABI_VERSION, sizeof(fuseproof_kernel_descriptor_t), "cuda runner test plugin",
    "bias_gelu_tanh", nullptr, FUSEPROOF_MEMORY_CUDA, 16, &call,
};

}  // namespace

FUSEPROOF_DEFINE_PLUGIN(&kDescriptor)
