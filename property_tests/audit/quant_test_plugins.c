/* quant_test_plugins.c: host nvfp4_quant plugins (ABI version 4) that write KNOWN bytes, not quantized values, for
 * the quantization runners' own checks: every code byte (r * width / 2 + j) is 0x11 * ((r + j) % 15 + 1) and every
 * scale cell of a block 0x38, padding cells 0x00. -DQT_NO_PADDING leaves the swizzled layout's padding cells
 * unwritten; -DQT_OVERRUN writes one byte past the end of codes and of scales; -DQT_WRITES_INPUT writes x[0]. */
#include "kernels/fuseproof_kernel_abi.h"

#include <stdio.h>
#include <string.h>

static int reject(const fuseproof_call_t* c, const char* what) {
  if (c->error && c->error_size) snprintf(c->error, c->error_size, "quant test plugin: %s", what);
  return 1;
}

static int64_t scale_cell(int32_t layout, int64_t r, int64_t k, int64_t blocks) {
  if (layout == FUSEPROOF_SCALE_LINEAR) return r * blocks + k;
  return ((r / 128) * ((blocks + 3) / 4) + k / 4) * 512 + (r % 32) * 16 + ((r / 32) % 4) * 4 + k % 4;
}

static int call(const fuseproof_call_t* c) {
  if (c->struct_size != sizeof(fuseproof_call_t)) return reject(c, "struct_size must be the version-4 size");
  if (!c->out) return reject(c, "out must not be null");
  if (!c->scales) return reject(c, "scales must not be null");
  if (c->n_inputs != 1 || !c->inputs[0].data) return reject(c, "x must be given");
  if (c->shape[0] < 1 || c->shape[1] < 16 || c->shape[1] % 16) return reject(c, "width must be a multiple of 16");
  const int64_t rows = c->shape[0], width = c->shape[1], blocks = width / 16;
  uint8_t* codes = (uint8_t*)c->out;
  uint8_t* scales = (uint8_t*)c->scales;
  const int64_t codes_bytes = rows * width / 2;
  const int64_t scale_bytes = c->scale_layout == FUSEPROOF_SCALE_LINEAR
                                  ? rows * blocks
                                  : (rows + 127) / 128 * 128 * ((blocks + 3) / 4 * 4);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < width / 2; ++j) codes[r * (width / 2) + j] = (uint8_t)(0x11 * ((r + j) % 15 + 1));
#if !defined(QT_NO_PADDING)
  memset(scales, 0x00, (size_t)scale_bytes);
#else
  (void)scale_bytes;
#endif
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < blocks; ++k) scales[scale_cell(c->scale_layout, r, k, blocks)] = 0x38;
#if defined(QT_OVERRUN)
  codes[codes_bytes] = 0x00;
  scales[scale_bytes] = 0x00;
#else
  (void)codes_bytes;
#endif
#if defined(QT_WRITES_INPUT)
  *(uint16_t*)c->inputs[0].data ^= 1;
#endif
  return 0;
}

static const fuseproof_kernel_descriptor_t kDescriptor = {
    FUSEPROOF_KERNEL_ABI_VERSION, sizeof(fuseproof_kernel_descriptor_t), "quant runner test plugin", "nvfp4_quant",
    NULL, FUSEPROOF_MEMORY_HOST, 16, &call,
};
FUSEPROOF_DEFINE_PLUGIN(&kDescriptor)
