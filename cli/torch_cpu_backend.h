// torch_cpu_backend.h: eager libtorch on the CPU as a backend: a 2-input op's domain rows, or any op's cases, its
// contract run node by node as the op spec's composition says (or eager `x + bias` alone, "add_round").
#pragma once

#include <cstdint>
#include <string>

#include "reference/dtype.h"
#include "reference/op_spec.h"

namespace fuseproof::cli {

/// True when this build has libtorch.
bool torch_cpu_available();
/// "libtorch 1.13.0 (CPU)" or "not built".
std::string torch_cpu_version();

/// Fills out[r * 65536 + first] for second inputs [first_second, + count) with eager libtorch's result for every
/// first input: `contract` of `op`, or x + bias when op is nullptr. Throws std::runtime_error (one line) when
/// libtorch cannot run the op (e.g. no CPU GELU for Half in 1.13), std::invalid_argument for an op without 2 inputs.
void torch_cpu_rows(const ref::OpSpec* op, ref::Contract contract, ref::Dtype d, uint32_t first_second, uint32_t count,
                    uint16_t* out);

/// out[k] = eager libtorch's result of `contract` of `op` for case k, whose input i is in[k * op.inputs.size() + i]:
/// each node one eager tensor op on tensors in T (kHalf) or float32, a constant a scalar operand (`1 + scale`).
/// Throws std::runtime_error (one line) for a contract eager libtorch cannot state (a fused multiply-add) or cannot
/// run.
void torch_cpu_cases(const ref::OpSpec& op, ref::Contract contract, ref::Dtype d, const uint16_t* in, size_t n,
                     uint16_t* out);

}  // namespace fuseproof::cli
