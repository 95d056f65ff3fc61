// torch_cpu_backend.h: eager libtorch on the CPU as a sweep backend (x + bias, then gelu(approximate="tanh")).
#pragma once

#include <cstdint>
#include <string>

#include "reference/dtype.h"

namespace fuseproof::cli {

enum class SweepOp : int { kBiasGeluTanh, kAddRound };

/// True when this build has libtorch.
bool torch_cpu_available();
/// "libtorch 1.13.0 (CPU)" or "not built".
std::string torch_cpu_version();

/// Fills out[r * 65536 + x] for biases [bias_first, bias_first + count) with eager libtorch's result for every x;
/// throws std::runtime_error (one line) when libtorch cannot run the op (e.g. no CPU GELU for Half in 1.13).
void torch_cpu_rows(SweepOp op, ref::Dtype d, uint32_t bias_first, uint32_t count, uint16_t* out);

}  // namespace fuseproof::cli
