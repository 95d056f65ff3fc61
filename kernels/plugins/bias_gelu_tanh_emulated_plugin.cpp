// bias_gelu_tanh_emulated_plugin.cpp: the built-in kernel's CPU emulation as a host-memory plugin.
#include "kernels/plugins/bias_gelu_tanh_plugin_entry.h"

namespace {

constexpr int32_t kVectorBytes = 16;  // the emulation's vector (VectorPolicy::kAuto on the CPU)

int call(const fuseproof_call_t* c) {
  return fuseproof::plugins::bias_gelu_tanh_call(c, fuseproof::Device{fuseproof::DeviceKind::kCpu, 0}, kVectorBytes);
}

const fuseproof_kernel_descriptor_t kDescriptor = {
    FUSEPROOF_KERNEL_ABI_VERSION, sizeof(fuseproof_kernel_descriptor_t),
    "fuseproof built-in bias_gelu_tanh (CPU emulation)", "bias_gelu_tanh", "eager", FUSEPROOF_MEMORY_HOST,
    kVectorBytes, &call,
};

}  // namespace

FUSEPROOF_DEFINE_PLUGIN(&kDescriptor)
