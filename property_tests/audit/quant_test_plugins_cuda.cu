// quant_test_plugins_cuda.cu: the CUDA twins of quant_test_plugins.c (nvfp4_quant, ABI version 4, CUDA memory): the
// same known bytes written by a kernel on the call's stream, for the CUDA quantization runner's own checks.
// -DQT_NO_PADDING leaves the swizzled padding cells unwritten; -DQT_OVERRUN writes one byte past codes and scales.
#include <cuda_runtime.h>

#include <cstdio>

#include "kernels/fuseproof_kernel_abi.h"

namespace {

__device__ int64_t scale_cell(int32_t layout, int64_t r, int64_t k, int64_t blocks) {
  if (layout == FUSEPROOF_SCALE_LINEAR) return r * blocks + k;
  return ((r / 128) * ((blocks + 3) / 4) + k / 4) * 512 + (r % 32) * 16 + ((r / 32) % 4) * 4 + k % 4;
}

__global__ void write_known(uint8_t* codes, uint8_t* scales, int64_t rows, int64_t width, int32_t layout,
                            int64_t scale_bytes) {
  const int64_t half = width / 2, blocks = width / 16;
  const int64_t stride = int64_t(gridDim.x) * blockDim.x;
  const int64_t t0 = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  for (int64_t i = t0; i < rows * half; i += stride) codes[i] = uint8_t(0x11 * ((i / half + i % half) % 15 + 1));
#if !defined(QT_NO_PADDING)
  for (int64_t i = t0; i < scale_bytes; i += stride) scales[i] = 0x00;
  __syncthreads();  // one block writes everything (see the launch): the padding before the cells
#endif
  for (int64_t i = t0; i < rows * blocks; i += stride) scales[scale_cell(layout, i / blocks, i % blocks, blocks)] = 0x38;
#if defined(QT_OVERRUN)
  if (t0 == 0) codes[rows * half] = 0x00, scales[scale_bytes] = 0x00;
#endif
}

int reject(const fuseproof_call_t* c, const char* what) {
  if (c->error && c->error_size) snprintf(c->error, c->error_size, "quant test plugin: %s", what);
  return 1;
}

int call(const fuseproof_call_t* c) {
  if (c->struct_size != sizeof(fuseproof_call_t)) return reject(c, "struct_size must be the version-4 size");
  if (!c->out) return reject(c, "out must not be null");
  if (!c->scales) return reject(c, "scales must not be null");
  if (c->n_inputs != 1 || !c->inputs[0].data) return reject(c, "x must be given");
  if (c->shape[0] < 1 || c->shape[1] < 16 || c->shape[1] % 16) return reject(c, "width must be a multiple of 16");
  const int64_t rows = c->shape[0], width = c->shape[1], blocks = width / 16;
  const int64_t scale_bytes = c->scale_layout == FUSEPROOF_SCALE_LINEAR
                                  ? rows * blocks
                                  : (rows + 127) / 128 * 128 * ((blocks + 3) / 4 * 4);
  // One block: the padding is written before the cells (__syncthreads), so no cell is overwritten with 0x00.
  write_known<<<1, 256, 0, static_cast<cudaStream_t>(c->stream)>>>(static_cast<uint8_t*>(c->out),
                                                                    static_cast<uint8_t*>(c->scales), rows, width,
                                                                    c->scale_layout, scale_bytes);
  return cudaGetLastError() == cudaSuccess ? 0 : reject(c, "launch failed");
}

const fuseproof_kernel_descriptor_t kDescriptor = {
    FUSEPROOF_KERNEL_ABI_VERSION, sizeof(fuseproof_kernel_descriptor_t), "quant runner test plugin (CUDA)",
    "nvfp4_quant", nullptr, FUSEPROOF_MEMORY_CUDA, 16, &call,
};

}  // namespace

FUSEPROOF_DEFINE_PLUGIN(&kDescriptor)
