/* bad_plugins.c: plugins the loader must refuse, one per -DBAD_<kind>, a valid version-1 plugin (-DV1_OK) the shim
 * must load, valid version-2 and version-3 plugins (-DV2_OK, -DV3_OK) that must be called with their version's call
 * size, and a valid version-4 quantization plugin (-DQUANT_OK, its contract NULL: the op's first); also proves the
 * ABI header compiles as C. */
#include "kernels/fuseproof_kernel_abi.h"

#include <stdio.h>

static int call(const fuseproof_call_t* c) {
  if (c->error && c->error_size) snprintf(c->error, c->error_size, "bad plugin: refuses every call");
  return 1;
}

static int entry(void* out, const void* x, const void* bias, int64_t rows, int64_t width, int32_t dtype, void* stream,
                 char* error, size_t error_size) {
  (void)x, (void)bias, (void)rows, (void)width, (void)dtype, (void)stream;
  if (!out) {
    if (error && error_size) snprintf(error, error_size, "v1 plugin: out must not be null");
    return 1;
  }
  return 0;
}

/* Version 2: the call without group_rows. */
static int v2_call(const fuseproof_call_t* c) {
  if (c->struct_size == FUSEPROOF_CALL_V2_SIZE) return 0;
  if (c->error && c->error_size) snprintf(c->error, c->error_size, "v2 plugin: call struct size %u", c->struct_size);
  return 1;
}

/* Version 3: the call up to group_rows. */
static int v3_call(const fuseproof_call_t* c) {
  if (c->struct_size == FUSEPROOF_CALL_V3_SIZE && c->group_rows == 1) return 0;
  if (c->error && c->error_size) snprintf(c->error, c->error_size, "v3 plugin: call struct size %u", c->struct_size);
  return 1;
}

#if defined(BAD_NO_SYMBOL)
FUSEPROOF_PLUGIN_EXPORT int not_a_descriptor(void) { return entry(0, 0, 0, 0, 0, 0, 0, 0, 0) + call(0); }
#elif defined(BAD_V1_OP) || defined(V1_OK)
static const fuseproof_kernel_descriptor_v1_t kDescriptor = {
    FUSEPROOF_KERNEL_ABI_VERSION_1, sizeof(fuseproof_kernel_descriptor_v1_t), "v1 plugin",
#if defined(BAD_V1_OP)
    "silu_and_mul",
#else
    "bias_gelu_tanh",
#endif
    FUSEPROOF_MEMORY_HOST, 16, &entry,
};
FUSEPROOF_DEFINE_PLUGIN(&kDescriptor)
#else
static const fuseproof_kernel_descriptor_t kDescriptor = {
#if defined(BAD_ABI_VERSION)
    99u,
#elif defined(V2_OK) || defined(BAD_V2_GROUP_OP)
    FUSEPROOF_KERNEL_ABI_VERSION_2,
#elif defined(V3_OK) || defined(BAD_QUANT_V3)
    FUSEPROOF_KERNEL_ABI_VERSION_3,
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
#elif defined(BAD_V2_GROUP_OP)
    "gated_residual",
#elif defined(BAD_QUANT_V3) || defined(BAD_QUANT_CONTRACT) || defined(QUANT_OK)
    "nvfp4_quant",
#else
    "bias_gelu_tanh",
#endif
#if defined(BAD_CONTRACT)
    "fp32",
#elif defined(BAD_QUANT_CONTRACT)
    "fp8-group",
#elif defined(QUANT_OK)
    NULL,
#else
    "eager",
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
#if defined(V2_OK)
    &v2_call,
#elif defined(V3_OK)
    &v3_call,
#else
    &call,
#endif
};
FUSEPROOF_DEFINE_PLUGIN(&kDescriptor)
#endif
