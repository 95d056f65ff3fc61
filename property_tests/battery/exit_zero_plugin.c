/* exit_zero_plugin.c: a host silu_and_mul plugin whose every call ends its process with status 0 and no verdict. */
#include <unistd.h>

#include "kernels/fuseproof_kernel_abi.h"

static int call(const fuseproof_call_t* c) {
  (void)c;
  _exit(0);
}

static const fuseproof_kernel_descriptor_t kDescriptor = {
    FUSEPROOF_KERNEL_ABI_VERSION, sizeof(fuseproof_kernel_descriptor_t), "battery exit(0) on every call",
    "silu_and_mul", "eager", FUSEPROOF_MEMORY_HOST, 2, call};

FUSEPROOF_DEFINE_PLUGIN(&kDescriptor)
