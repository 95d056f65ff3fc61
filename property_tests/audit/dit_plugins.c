/* dit_plugins.c: tiny host plugins (ABI v3) of the 3-input DiT ops for the audit's own tests, written apart from
 * reference/ and kernels/: plain binary32 arithmetic and a round-to-nearest-even narrowing of their own.
 *
 * One source, one plugin per build (the audit's CMakeLists names them):
 *   DIT_GATED          gated_residual: out = x + gate * y (gate group-broadcast)
 *   DIT_MODULATE       modulate: out = x * (1 + scale) + shift (scale, shift group-broadcast)
 *   CONTRACT_FMA       one fmaf rounded once, claiming the fma contract
 *   BROKEN_WRONG_GROUP reads group row r % groups instead of r / group_rows (right for 1 group and for group_rows 1:
 *                      only calls of 2+ groups of 2+ rows see it), claiming eager: a negative control
 *   BROKEN_FMA         one fmaf rounded once, claiming eager: a negative control
 *   WRONG_STAGE1_PAIR  modulate: round(x * s) one unit off for x = 0x4049 and s = round(1 + scale) = 0x4000 (2.0)
 *                      only, whatever scale gives that s: a pair only the stages class's stage 1 (x * s) reaches
 *                      (stage 0 runs x = 1, stage 2 scale = 0, so s = 1)
 *   WRONG_EVERYWHERE   every output's lowest bit flipped (the stages class's early stop)
 * The stages class's tests (check_stages_test.cpp) load the eager ones and these two from their own folder.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "kernels/fuseproof_kernel_abi.h"

/* | S |EEEEEEEE|MMMMMMM| bf16 is binary32's top half; | S |EEEEE|MMMMMMMMMM| fp16. */
static float widen(int bf, uint16_t h) {
  uint32_t u;
  float f;
  if (bf) {
    u = (uint32_t)h << 16;
  } else {
    const uint32_t s = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0x1F) {
      u = s | 0x7F800000u | (m << 13);
    } else if (e == 0) {
      f = (float)m * 0x1p-24f; /* exact: m < 2^10 */
      memcpy(&u, &f, 4);
      u |= s;
    } else {
      u = s | ((e + 112u) << 23) | (m << 13);
    }
  }
  memcpy(&f, &u, 4);
  return f;
}

/* Round to nearest, ties to even; every NaN 0x7FFF. */
static uint16_t narrow(int bf, float f) {
  uint32_t u, a;
  uint16_t s;
  memcpy(&u, &f, 4);
  a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return 0x7FFF;
  if (bf) return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
  s = (uint16_t)((u >> 16) & 0x8000u);
  if (a >= 0x477FF000u) return (uint16_t)(s | 0x7C00u); /* >= 65520: halfway to 2^16 and beyond round to Inf */
  if (a >= 0x38800000u) {                               /* normal: 13 bits dropped */
    uint32_t bits = ((a >> 23) - 112u) << 10 | ((a & 0x7FFFFFu) >> 13);
    const uint32_t rem = a & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (bits & 1u))) ++bits;
    return (uint16_t)(s | bits);
  }
  {
    float q; /* subnormal: units of 2^-24, rounded to an even integer on a tie (rintf in the default mode) */
    memcpy(&q, &a, 4);
    return (uint16_t)(s | (uint16_t)rintf(q * 0x1p24f));
  }
}

static int reject(const fuseproof_call_t* c, const char* what) {
  if (c->error && c->error_size) snprintf(c->error, c->error_size, "%s", what);
  return 1;
}

static int call(const fuseproof_call_t* c) {
  char msg[160];
  int64_t rows, width, g, r, w, groups;
  int bf, i;
  uint16_t* out;
  const uint16_t *in0, *in1, *in2;
  if (c->struct_size < sizeof(fuseproof_call_t)) return reject(c, "dit plugin: struct_size too small for ABI v3");
  if (c->dtype != FUSEPROOF_DTYPE_BF16 && c->dtype != FUSEPROOF_DTYPE_FP16) {
    snprintf(msg, sizeof msg, "dit plugin: dtype must be bf16 (0) or fp16 (1), got %d", (int)c->dtype);
    return reject(c, msg);
  }
  if (c->n_inputs != 3) {
    snprintf(msg, sizeof msg, "dit plugin: n_inputs must be 3, got %d", (int)c->n_inputs);
    return reject(c, msg);
  }
  rows = c->shape[0];
  width = c->shape[1];
  g = c->group_rows;
  if (rows < 1 || width < 1) return reject(c, "dit plugin: rows and width must be >= 1");
  if (rows > INT64_MAX / 2 / width) return reject(c, "dit plugin: rows * width * 2 overflows int64");
  if (g < 1 || rows % g != 0) {
    snprintf(msg, sizeof msg, "dit plugin: group_rows must be >= 1 and divide rows (%lld), got %lld", (long long)rows,
             (long long)g);
    return reject(c, msg);
  }
  if (!c->out) return reject(c, "dit plugin: out must not be null");
  for (i = 0; i < 3; ++i) {
    if (!c->inputs[i].data) return reject(c, "dit plugin: an input is null");
    if (c->inputs[i].stride[0] != width || c->inputs[i].stride[1] != 1)
      return reject(c, "dit plugin: every input's stride must be {width, 1}");
  }
  if (((uintptr_t)c->out | (uintptr_t)c->inputs[0].data | (uintptr_t)c->inputs[1].data |
       (uintptr_t)c->inputs[2].data) & 1u)
    return reject(c, "dit plugin: pointers must be 2-byte aligned");
  bf = c->dtype == FUSEPROOF_DTYPE_BF16;
  out = (uint16_t*)c->out;
  in0 = (const uint16_t*)c->inputs[0].data;
  in1 = (const uint16_t*)c->inputs[1].data;
  in2 = (const uint16_t*)c->inputs[2].data;
  groups = rows / g;
  for (r = 0; r < rows; ++r) {
#ifdef BROKEN_WRONG_GROUP
    const int64_t gr = r % groups;
#else
    const int64_t gr = r / g;
#endif
    for (w = 0; w < width; ++w) {
      const float x = widen(bf, in0[r * width + w]);
      uint16_t o;
#ifdef DIT_GATED
      const float gate = widen(bf, in1[gr * width + w]), y = widen(bf, in2[r * width + w]);
#if defined(CONTRACT_FMA) || defined(BROKEN_FMA)
      o = narrow(bf, fmaf(gate, y, x));
#else
      const float p = widen(bf, narrow(bf, gate * y));
      o = narrow(bf, x + p);
#endif
#else
      const float scale = widen(bf, in1[gr * width + w]), shift = widen(bf, in2[gr * width + w]);
#if defined(CONTRACT_FMA) || defined(BROKEN_FMA)
      o = narrow(bf, fmaf(x, 1.0f + scale, shift));
#else
      const uint16_t s = narrow(bf, 1.0f + scale);
      uint16_t m = narrow(bf, x * widen(bf, s));
#ifdef WRONG_STAGE1_PAIR
      if (in0[r * width + w] == 0x4049 && s == 0x4000) m ^= 1u;
#endif
      o = narrow(bf, widen(bf, m) + shift);
#endif
#endif
#ifdef WRONG_EVERYWHERE
      o ^= 1u;
#endif
      out[r * width + w] = o;
    }
  }
  (void)groups;
  return 0;
}

#ifdef DIT_GATED
#define DIT_OP "gated_residual"
#else
#define DIT_OP "modulate"
#endif
#ifdef CONTRACT_FMA
#define DIT_CONTRACT "fma"
#else
#define DIT_CONTRACT "eager"
#endif

static const fuseproof_kernel_descriptor_t kDescriptor = {
    FUSEPROOF_KERNEL_ABI_VERSION, sizeof(fuseproof_kernel_descriptor_t), "audit test plugin " DIT_OP " (" DIT_CONTRACT
#ifdef BROKEN_WRONG_GROUP
    ", wrong group row"
#endif
#ifdef BROKEN_FMA
    ", fmaf claiming eager"
#endif
#ifdef WRONG_STAGE1_PAIR
    ", one pair of x * (1 + scale) wrong"
#endif
#ifdef WRONG_EVERYWHERE
    ", every output's last bit flipped"
#endif
    ")",
    DIT_OP, DIT_CONTRACT, FUSEPROOF_MEMORY_HOST, 2, call};

FUSEPROOF_DEFINE_PLUGIN(&kDescriptor)
