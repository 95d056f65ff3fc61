// bias_gelu_tanh_plugin_entry.h: adapts the ABI's op-generic call (version 2) to the fuseproof::bias_gelu_tanh
// launcher.
#pragma once

#include <cstdio>
#include <cstdint>
#include <string>

#include "kernels/bias_gelu_tanh_launcher.h"
#include "kernels/fuseproof_kernel_abi.h"

namespace fuseproof::plugins {

/// Builds views (out, x: rows x width with the call's strides; bias: its [width] row) on `device` and calls the
/// launcher, which does all the validation (shapes, strides, overflow, alignment, null pointers); the call's input
/// count, dtype codes with no ScalarType and a bias that is not one broadcast row are refused here.
inline int bias_gelu_tanh_call(const fuseproof_call_t* c, Device device, int32_t vector_bytes) {
  auto reject = [&](const std::string& m) {
    if (c->error && c->error_size) std::snprintf(c->error, c->error_size, "%s", m.c_str());
    return 1;
  };
  if (c->struct_size != sizeof(fuseproof_call_t))
    return reject("bias_gelu_tanh: call struct size must be " + std::to_string(sizeof(fuseproof_call_t)) + ", got " +
                  std::to_string(c->struct_size));
  if (c->n_inputs != 2) return reject("bias_gelu_tanh: takes 2 inputs (x, bias), got " + std::to_string(c->n_inputs));
  ScalarType t;
  switch (c->dtype) {
    case FUSEPROOF_DTYPE_BF16: t = ScalarType::kBf16; break;
    case FUSEPROOF_DTYPE_FP16: t = ScalarType::kFp16; break;
    case FUSEPROOF_DTYPE_FLOAT32: t = ScalarType::kFloat32; break;
    case FUSEPROOF_DTYPE_INT16: t = ScalarType::kInt16; break;
    default: return reject("bias_gelu_tanh: dtype code must be 0 (bf16) or 1 (fp16), got " + std::to_string(c->dtype));
  }
  const fuseproof_input_t& b = c->inputs[1];
  if (b.stride[0] != 0 || b.stride[1] != 1)
    return reject("bias_gelu_tanh: bias must be one [width] row shared by every row (strides {0, 1}), got {" +
                  std::to_string(b.stride[0]) + ", " + std::to_string(b.stride[1]) + "}");
  const int64_t rows = c->shape[0], width = c->shape[1];
  TensorView ov = contiguous_view(c->out, t, {rows, width}, device);
  TensorView xv = contiguous_view(const_cast<void*>(c->inputs[0].data), t, {rows, width}, device);
  xv.strides[0] = c->inputs[0].stride[0];
  xv.strides[1] = c->inputs[0].stride[1];
  const TensorView bv = contiguous_view(const_cast<void*>(b.data), t, {width}, device);
  BiasGeluOptions options;
  options.vector = vector_bytes == 32 ? VectorPolicy::kBytes32 : VectorPolicy::kBytes16;
  options.pdl = true;
  options.stream = c->stream;
  const LaunchStatus s = bias_gelu_tanh(ov, xv, bv, options);
  return s.ok ? 0 : reject(s.message.empty() ? "bias_gelu_tanh: rejected" : s.message);
}

}  // namespace fuseproof::plugins
