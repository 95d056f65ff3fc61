// stages_test_plugin.cpp: host subjects of the 3-input ops for the stages class's tests (ABI v3), computed with plain
// binary32 operations and their own round-to-nearest-even, sharing no code with reference/.
//
// Built once per variant (compile definitions):
//   OP_GATED_RESIDUAL / OP_MODULATE   the op (eager: every step rounded to T)
//   WRONG_STAGE1_PAIR                 modulate: round(x * s) one unit off for x = 0x4049 and s = round(1 + scale) =
//                                     0x4000 (2.0) only, whatever scale gives that s: a pair that only stage 1
//                                     (x * s) reaches (stage 0 runs x = 1, stage 2 scale = 0, so s = 1)
//   WRONG_EVERYWHERE                  every output's lowest bit flipped (the early-stop test)
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "kernels/fuseproof_kernel_abi.h"

namespace {

/// | S |EEEEEEEE|MMMMMMM|: the top half of binary32.
float bf16_to_float(uint16_t h) {
  const uint32_t u = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// | S |EEEEE|MMMMMMMMMM|
float fp16_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16, e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
  uint32_t u;
  if (e == 0) {
    const float mag = float(m) * 0x1p-24f;  // exact: m < 2^10
    return sign ? -mag : mag;
  }
  if (e == 31) u = sign | 0x7F800000u | (m << 13);
  else u = sign | ((e - 15 + 127) << 23) | (m << 13);
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// m / 2^shift rounded to nearest, ties to even (shift >= 1).
uint32_t shift_rne(uint32_t m, uint32_t shift) {
  if (shift > 31) return 0;
  const uint32_t q = m >> shift, rest = m & ((1u << shift) - 1), half = 1u << (shift - 1);
  return q + (rest > half || (rest == half && (q & 1u)));
}

uint16_t float_to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return 0x7FFF;
  return uint16_t((u >> 16) + (((u & 0xFFFFu) > 0x8000u || ((u & 0xFFFFu) == 0x8000u && (u >> 16 & 1u))) ? 1u : 0u));
}

uint16_t float_to_fp16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  const uint16_t sign = uint16_t(u >> 16 & 0x8000u);
  const uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return 0x7FFF;
  if (a >= 0x477FF000u) return uint16_t(sign | 0x7C00u);  // from 65520 (the tie above 65504) up: Inf
  const uint32_t e = a >> 23, m = (a & 0x7FFFFFu) | (e ? 0x800000u : 0u);
  if (e < 113) return uint16_t(sign | shift_rne(m, 126 - e + (e == 0)));  // below 2^-14: multiples of 2^-24
  return uint16_t(sign | shift_rne(a - ((127u - 15u) << 23), 13));          // a carry rounds into the exponent
}

struct Half {
  bool bf16;
  float wide(uint16_t h) const { return bf16 ? bf16_to_float(h) : fp16_to_float(h); }
  uint16_t round(float f) const { return bf16 ? float_to_bf16(f) : float_to_fp16(f); }
};

uint16_t element(const Half& h, uint16_t in0, uint16_t in1, uint16_t in2) {
  uint16_t out;
#if defined(OP_GATED_RESIDUAL)
  const uint16_t p = h.round(h.wide(in1) * h.wide(in2));  // gate * y
  out = h.round(h.wide(in0) + h.wide(p));
#else
  const uint16_t s = h.round(1.0f + h.wide(in1));  // 1 + scale
  uint16_t m = h.round(h.wide(in0) * h.wide(s));
#if defined(WRONG_STAGE1_PAIR)
  if (in0 == 0x4049 && s == 0x4000) m ^= 1u;
#endif
  out = h.round(h.wide(m) + h.wide(in2));
#endif
#if defined(WRONG_EVERYWHERE)
  out ^= 1u;
#endif
  return out;
}

int call(const fuseproof_call_t* c) {
  const auto reject = [&](const char* what) {
    if (c->error && c->error_size) std::snprintf(c->error, c->error_size, "stages test plugin: %s", what);
    return 1;
  };
  if (c->struct_size < sizeof(fuseproof_call_t)) return reject("call struct too small");
  if (c->dtype != FUSEPROOF_DTYPE_BF16 && c->dtype != FUSEPROOF_DTYPE_FP16) return reject("dtype must be bf16 or fp16");
  if (c->n_inputs != 3) return reject("n_inputs must be 3");
  const int64_t rows = c->shape[0], width = c->shape[1], g = c->group_rows;
  if (rows < 1 || width < 1 || width % 8 || g < 1 || rows % g) return reject("bad shape");
  if (!c->out) return reject("out null");
  for (int i = 0; i < 3; ++i)
    if (!c->inputs[i].data) return reject("input null");
  const Half h{c->dtype == FUSEPROOF_DTYPE_BF16};
  const auto* x = static_cast<const uint16_t*>(c->inputs[0].data);
  const auto* in1 = static_cast<const uint16_t*>(c->inputs[1].data);
  const auto* in2 = static_cast<const uint16_t*>(c->inputs[2].data);
#if defined(OP_GATED_RESIDUAL)
  const bool grouped1 = true, grouped2 = false;  // gate [rows / g, width], y per element
#else
  const bool grouped1 = true, grouped2 = true;  // scale, shift [rows / g, width]
#endif
  auto* out = static_cast<uint16_t*>(c->out);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t col = 0; col < width; ++col) {
      const int64_t r1 = grouped1 ? r / g : r, r2 = grouped2 ? r / g : r;
      out[r * width + col] =
          element(h, x[r * c->inputs[0].stride[0] + col * c->inputs[0].stride[1]],
                  in1[r1 * c->inputs[1].stride[0] + col * c->inputs[1].stride[1]],
                  in2[r2 * c->inputs[2].stride[0] + col * c->inputs[2].stride[1]]);
    }
  return 0;
}

#if defined(OP_GATED_RESIDUAL)
constexpr const char* kOp = "gated_residual";
#else
constexpr const char* kOp = "modulate";
#endif

const fuseproof_kernel_descriptor_t kDescriptor = {
    FUSEPROOF_KERNEL_ABI_VERSION, sizeof(fuseproof_kernel_descriptor_t), "stages test plugin (host)", kOp, "eager",
    FUSEPROOF_MEMORY_HOST, 16, &call};

}  // namespace

FUSEPROOF_DEFINE_PLUGIN(&kDescriptor)
