// bias_gelu_tanh_cuda_plugin.cpp: the built-in CUDA kernel as a CUDA-memory plugin (16-byte vectors, PDL on).
#include <cuda_runtime.h>

#include "kernels/plugins/bias_gelu_tanh_plugin_entry.h"

namespace {

constexpr int32_t kVectorBytes = 16;  // sm_90's 16-byte vectors; the audit then knows the width rule

int call(const fuseproof_call_t* c) {
  int device = 0;
  cudaGetDevice(&device);
  return fuseproof::plugins::bias_gelu_tanh_call(c, fuseproof::Device{fuseproof::DeviceKind::kCuda, device},
                                                 kVectorBytes);
}

const fuseproof_kernel_descriptor_t kDescriptor = {
    FUSEPROOF_KERNEL_ABI_VERSION, sizeof(fuseproof_kernel_descriptor_t), "fuseproof built-in bias_gelu_tanh (CUDA)",
    "bias_gelu_tanh", "eager", FUSEPROOF_MEMORY_CUDA, kVectorBytes, &call,
};

}  // namespace

FUSEPROOF_DEFINE_PLUGIN(&kDescriptor)
