// bias_gelu_tanh_emulated_plugin.cpp: the built-in kernel's CPU emulation as a host-memory plugin.
#include "kernels/plugins/bias_gelu_tanh_plugin_entry.h"

namespace {

constexpr int32_t kVectorBytes = 16;  // the emulation's vector (VectorPolicy::kAuto on the CPU)

int entry(void* out, const void* x, const void* bias, int64_t rows, int64_t width, int32_t dtype, void* /*stream*/,
          char* error, size_t error_size) {
  return fuseproof::plugins::bias_gelu_tanh_entry(out, x, bias, rows, width, dtype, nullptr, error, error_size,
                                                  fuseproof::Device{fuseproof::DeviceKind::kCpu, 0}, kVectorBytes);
}

const fuseproof_kernel_descriptor_t kDescriptor = {
    FUSEPROOF_KERNEL_ABI_VERSION, sizeof(fuseproof_kernel_descriptor_t), "fuseproof built-in bias_gelu_tanh (CPU emulation)",
    "bias_gelu_tanh", FUSEPROOF_MEMORY_HOST, kVectorBytes, &entry,
};

}  // namespace

FUSEPROOF_DEFINE_PLUGIN(&kDescriptor)
