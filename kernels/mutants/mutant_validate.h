// mutant_validate.h: the ABI's validity rules for bias_gelu_tanh, with a bug switch that removes one rule.
#pragma once

#include <cstdint>
#include <cstdio>
#include <initializer_list>

#include "kernels/fuseproof_kernel_abi.h"
#include "kernels/mutants/mutant_bugs.h"

namespace fuseproof::mutants {

/// Elements per vector for a 16-bit dtype.
constexpr int64_t vector_elems(int32_t vector_bytes) { return vector_bytes / 2; }

/// Writes a one-line message and returns 1, for `return reject(...)`.
template <typename... Args>
int reject(char* error, size_t error_size, const char* fmt, Args... args) {
  if (error && error_size) std::snprintf(error, error_size, fmt, args...);
  return 1;
}

/// 0 when the call is valid for a kernel with `bug`, else a rejection with its message.
inline int validate(Bug bug, const void* out, const void* x, const void* bias, int64_t rows, int64_t width,
                    int32_t dtype, int32_t vector_bytes, char* error, size_t error_size) {
  const int64_t v = vector_elems(vector_bytes);
  if (dtype != FUSEPROOF_DTYPE_BF16 && dtype != FUSEPROOF_DTYPE_FP16)
    return reject(error, error_size, "bias_gelu_tanh: dtype must be bf16 (0) or fp16 (1), got %d", int(dtype));
  if (!out || !x || !bias)
    return reject(error, error_size, "bias_gelu_tanh: %s must not be null", !out ? "out" : !x ? "x" : "bias");
  if (rows < 1 && !(bug == Bug::kHangOnEmpty && rows == 0)) return reject(error, error_size, "bias_gelu_tanh: rows must be >= 1, got %lld", (long long)rows);
  if (width < 1) return reject(error, error_size, "bias_gelu_tanh: width must be >= 1, got %lld", (long long)width);
  if (bug != Bug::kNoWidthRejection && bug != Bug::kTailOverread && width % v != 0)
    return reject(error, error_size, "bias_gelu_tanh: width must be a multiple of %lld, got %lld", (long long)v,
                  (long long)width);
  if (rows > INT64_MAX / 2 / width)
    return reject(error, error_size, "bias_gelu_tanh: rows * width must fit in int64, got %lld * %lld",
                  (long long)rows, (long long)width);
  if (bug != Bug::kNoAlignmentCheck && bug != Bug::kSegvOnMisaligned) {
    const uintptr_t mask = uintptr_t(vector_bytes) - 1;
    for (const void* p : {out, x, bias})
      if (reinterpret_cast<uintptr_t>(p) & mask)
        return reject(error, error_size, "bias_gelu_tanh: %s must be %d-byte aligned, got address %p",
                      p == out ? "out" : p == x ? "x" : "bias", int(vector_bytes), p);
  }
  return 0;
}

}  // namespace fuseproof::mutants
