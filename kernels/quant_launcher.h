// quant_launcher.h: validating launcher of the built-in quantization kernels (kernels/quant_ops.h) on CUDA or the CPU
// emulation, from the ABI's version-4 call.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "fuseproof_kernel_abi.h"
#include "quant_ops.h"

namespace fuseproof {

struct QuantLaunch {
  kernel::QuantOp op;
  kernel::QuantContract contract;
  bool cuda = false;  ///< device pointers and a stream; else host pointers and the emulation
  kernel::QuantFault fault = kernel::QuantFault::kNone;  ///< a mutant's deliberate fault; kNone in the built-ins
};

/// Checks every rule of kernels/fuseproof_kernel_abi.h for a quantization call without touching memory: the full
/// version-4 struct, dtype, n_inputs and the op's strides, rows >= 1, width a multiple of the block size (and so of
/// vector_bytes / 2), int64 byte counts, non-null pointers aligned to 16 bytes (inputs, codes) and 4 bytes (scales),
/// scale_layout one of the op's (swizzled only for the NVFP4 ops), n_scalars the contract's count; then that the
/// op ships the contract and the backend computes it (the emulation has no rcp.approx: it refuses rcp-approx). ""
/// when valid, else one line naming argument, rule and value ("nvfp4_quant: width must be a multiple of 16, got 24").
std::string quant_can_implement(const QuantLaunch& l, const fuseproof_call_t& call);

/// Validates, then runs: the CUDA kernel on call.stream, or the emulation on the host. Returns "" or the refusal.
std::string quant_launch(const QuantLaunch& l, const fuseproof_call_t& call);

/// The op's name ("nvfp4_quant").
const char* quant_op_name(kernel::QuantOp op);

/// The validated call's pointers and shape for quant_cell.
kernel::QuantArgs quant_args(const QuantLaunch& l, const fuseproof_call_t& call);

/// A plugin's return for a call: 0 when `why` is empty, else 1 with `why` in the call's error buffer (truncated).
inline int quant_call_status(const fuseproof_call_t& call, const std::string& why) {
  if (why.empty()) return 0;
  if (call.error && call.error_size) std::snprintf(call.error, call.error_size, "%s", why.c_str());
  return 1;
}

/// The version-4 descriptor of a quantization plugin (built-in or mutant) named `name`.
template <kernel::QuantOp Op>
constexpr fuseproof_kernel_descriptor_t quant_descriptor(const char* name, kernel::QuantContract contract, bool cuda,
                                                         int (*call)(const fuseproof_call_t*)) {
  return {FUSEPROOF_KERNEL_ABI_VERSION, sizeof(fuseproof_kernel_descriptor_t), name, kernel::kQuant<Op>.name,
          kernel::quant_contract_name(contract), cuda ? FUSEPROOF_MEMORY_CUDA : FUSEPROOF_MEMORY_HOST,
          kernel::kQuantVectorBytes, call};
}

namespace detail {
/// The CUDA kernel for a validated call (quant_kernel.cu); "" or the launch error.
std::string quant_launch_cuda(const QuantLaunch& l, const fuseproof_call_t& call);
/// The emulation for a validated call (quant_emulation.cpp).
void quant_emulate(const QuantLaunch& l, const fuseproof_call_t& call);
}  // namespace detail

}  // namespace fuseproof
