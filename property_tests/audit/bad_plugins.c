/* bad_plugins.c: plugins the loader must refuse, one per -DBAD_<kind>; also proves the ABI header compiles as C. */
#include "kernels/fuseproof_kernel_abi.h"

static int entry(void* out, const void* x, const void* bias, int64_t rows, int64_t width, int32_t dtype, void* stream,
                 char* error, size_t error_size) {
  (void)out, (void)x, (void)bias, (void)rows, (void)width, (void)dtype, (void)stream, (void)error, (void)error_size;
  return 1;
}

#if defined(BAD_NO_SYMBOL)
FUSEPROOF_PLUGIN_EXPORT int not_a_descriptor(void) { return entry(0, 0, 0, 0, 0, 0, 0, 0, 0); }
#else
static const fuseproof_kernel_descriptor_t kDescriptor = {
#if defined(BAD_ABI_VERSION)
    99u,
#else
    FUSEPROOF_KERNEL_ABI_VERSION,
#endif
#if defined(BAD_STRUCT_SIZE)
    (uint32_t)sizeof(fuseproof_kernel_descriptor_t) - 8u,
#else
    sizeof(fuseproof_kernel_descriptor_t),
#endif
    "bad plugin",
#if defined(BAD_OP)
    "softmax",
#else
    "bias_gelu_tanh",
#endif
#if defined(BAD_MEMORY)
    7,
#else
    FUSEPROOF_MEMORY_HOST,
#endif
#if defined(BAD_VECTOR)
    12,
#else
    16,
#endif
    &entry,
};
FUSEPROOF_DEFINE_PLUGIN(&kDescriptor)
#endif
