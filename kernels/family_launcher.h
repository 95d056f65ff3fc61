// family_launcher.h: validating launcher of the family's built-in kernels (bias_gelu_erf, the *_and_mul ops,
// gated_residual and modulate) on CUDA or the CPU emulation, from the ABI's op-generic call.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

#include "family_ops.h"
#include "fuseproof_kernel_abi.h"

namespace fuseproof {

struct FamilyLaunch {
  kernel::FamilyOp op;
  kernel::Contract contract = kernel::Contract::kEager;  ///< fp32: packed ops only; fma: the 3-input ops only
  bool cuda = false;  ///< device pointers and a stream; else host pointers and the emulation
  int vector_elems = kernel::kFamilyVectorElems;  ///< the width rule and the alignment (a mutant may take any width)
};

/// Checks every rule of kernels/fuseproof_kernel_abi.h for `call` (struct size, dtype, input count, shape, group_rows
/// for the ops with group-broadcast inputs, overflow, null pointers, alignment to 16 bytes, the op's strides, out
/// overlapping an input, the contract) without touching memory; "" when valid, else a one-line message naming
/// argument, rule and value ("silu_and_mul: width must be a multiple of 8, got 12").
std::string family_can_implement(const FamilyLaunch& l, const fuseproof_call_t& call);

/// Validates, then runs: the CUDA kernel on call.stream, or the emulation on the host. Returns "" or the refusal.
std::string family_launch(const FamilyLaunch& l, const fuseproof_call_t& call);

/// A plugin's return for a call: 0 when `why` is empty, else 1 with `why` in the call's error buffer (truncated to it).
inline int family_call_status(const fuseproof_call_t& call, const std::string& why) {
  if (why.empty()) return 0;
  if (call.error && call.error_size) std::snprintf(call.error, call.error_size, "%s", why.c_str());
  return 1;
}

/// The version-2 descriptor of a family plugin (built-in or mutant) of op Op, named `name`.
template <kernel::FamilyOp Op>
constexpr fuseproof_kernel_descriptor_t family_descriptor(const char* name, kernel::Contract contract, bool cuda,
                                                          int vector_elems, int (*call)(const fuseproof_call_t*)) {
  return {FUSEPROOF_KERNEL_ABI_VERSION, sizeof(fuseproof_kernel_descriptor_t), name, kernel::kFamily<Op>.name,
          kernel::contract_name(contract), cuda ? FUSEPROOF_MEMORY_CUDA : FUSEPROOF_MEMORY_HOST, 2 * vector_elems, call};
}

namespace detail {
/// The CUDA kernel for a validated call (family_kernel.cu); "" or the launch error.
std::string family_launch_cuda(const FamilyLaunch& l, const fuseproof_call_t& call);
/// The emulation for a validated call (family_emulation.cpp).
void family_emulate(const FamilyLaunch& l, const fuseproof_call_t& call);
}  // namespace detail

}  // namespace fuseproof
