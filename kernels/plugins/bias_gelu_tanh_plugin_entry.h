// bias_gelu_tanh_plugin_entry.h: adapts the ABI entry (raw pointers) to the fuseproof::bias_gelu_tanh launcher.
#pragma once

#include <cstdio>
#include <cstdint>
#include <string>

#include "kernels/bias_gelu_tanh_launcher.h"
#include "kernels/fuseproof_kernel_abi.h"

namespace fuseproof::plugins {

/// Builds contiguous views (out, x: rows x width; bias: width) on `device` and calls the launcher, which does all
/// the validation (shapes, overflow, alignment, null pointers); only dtype codes with no ScalarType are refused here.
inline int bias_gelu_tanh_entry(void* out, const void* x, const void* bias, int64_t rows, int64_t width, int32_t dtype,
                                void* stream, char* error, size_t error_size, Device device, int32_t vector_bytes) {
  auto reject = [&](const std::string& m) {
    if (error && error_size) std::snprintf(error, error_size, "%s", m.c_str());
    return 1;
  };
  ScalarType t;
  switch (dtype) {
    case FUSEPROOF_DTYPE_BF16: t = ScalarType::kBf16; break;
    case FUSEPROOF_DTYPE_FP16: t = ScalarType::kFp16; break;
    case FUSEPROOF_DTYPE_FLOAT32: t = ScalarType::kFloat32; break;
    case FUSEPROOF_DTYPE_INT16: t = ScalarType::kInt16; break;
    default: return reject("bias_gelu_tanh: dtype code must be 0 (bf16) or 1 (fp16), got " + std::to_string(dtype));
  }
  const TensorView ov = contiguous_view(out, t, {rows, width}, device);
  const TensorView xv = contiguous_view(const_cast<void*>(x), t, {rows, width}, device);
  const TensorView bv = contiguous_view(const_cast<void*>(bias), t, {width}, device);
  BiasGeluOptions options;
  options.vector = vector_bytes == 32 ? VectorPolicy::kBytes32 : VectorPolicy::kBytes16;
  options.pdl = true;
  options.stream = stream;
  const LaunchStatus s = bias_gelu_tanh(ov, xv, bv, options);
  return s.ok ? 0 : reject(s.message.empty() ? "bias_gelu_tanh: rejected" : s.message);
}

}  // namespace fuseproof::plugins
