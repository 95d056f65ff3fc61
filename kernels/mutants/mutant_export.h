// mutant_export.h: what every mutant plugin's one translation unit defines besides its call: its build constants
// (from the compile definitions CMake sets per bug) and its exported descriptor.
#pragma once

#include "kernels/fuseproof_kernel_abi.h"

#if defined(FUSEPROOF_QUANT_OP)
// A quantization mutant (quant_bugs.h): FUSEPROOF_QUANT_OP, FUSEPROOF_QUANT_FAULT, FUSEPROOF_QUANT_CONTRACT,
// FUSEPROOF_QUANT_NAME.
#include "kernels/quant_launcher.h"

namespace fuseproof::mutants {
inline constexpr kernel::QuantOp kQuantOp = kernel::QuantOp::FUSEPROOF_QUANT_OP;
inline constexpr kernel::QuantFault kQuantFault = kernel::QuantFault::FUSEPROOF_QUANT_FAULT;
inline constexpr kernel::QuantContract kQuantContract = kernel::QuantContract::FUSEPROOF_QUANT_CONTRACT;
static_assert(kernel::quant_has_contract<kQuantOp>(kQuantContract), "the op does not ship this contract");
}  // namespace fuseproof::mutants

/// After the plugin's namespaces: its version-4 descriptor ("mutant <memory> <op> <bug>") and the exported symbol.
#define FUSEPROOF_QUANT_MUTANT_EXPORT(memory_word, is_cuda, call_fn)                                     \
  namespace fuseproof::mutants {                                                                     \
  const fuseproof_kernel_descriptor_t kDescriptor =                                                  \
      quant_descriptor<kQuantOp>("mutant " memory_word " " FUSEPROOF_QUANT_NAME, kQuantContract, is_cuda, call_fn); \
  }                                                                                                  \
  FUSEPROOF_DEFINE_PLUGIN(&fuseproof::mutants::kDescriptor)
#elif defined(FUSEPROOF_FAMILY_OP)
// A family mutant (family_bugs.h): FUSEPROOF_FAMILY_OP, FUSEPROOF_FAMILY_BUG, FUSEPROOF_FAMILY_CONTRACT (kEager,
// kFp32 or kFma), FUSEPROOF_FAMILY_NAME.
#include "kernels/family_launcher.h"
#include "kernels/mutants/family_bugs.h"

namespace fuseproof::mutants {
inline constexpr kernel::FamilyOp kOp = kernel::FamilyOp::FUSEPROOF_FAMILY_OP;
inline constexpr FamilyBug kBug = FamilyBug::FUSEPROOF_FAMILY_BUG;
inline constexpr kernel::Contract kContract = kernel::Contract::FUSEPROOF_FAMILY_CONTRACT;
/// The tail bug needs widths that are not a multiple of the vector, so that mutant takes any width.
inline constexpr int kVector = kBug == FamilyBug::kWrongHalfTail ? 1 : kernel::kFamilyVectorElems;
}  // namespace fuseproof::mutants

/// After the plugin's namespaces: its version-2 descriptor ("mutant <memory> <op> <bug>") and the exported symbol.
#define FUSEPROOF_FAMILY_MUTANT_EXPORT(memory_word, is_cuda, call_fn)                                                \
  namespace fuseproof::mutants {                                                                                 \
  const fuseproof_kernel_descriptor_t kDescriptor =                                                              \
      family_descriptor<kOp>("mutant " memory_word " " FUSEPROOF_FAMILY_NAME, kContract, is_cuda, kVector, call_fn); \
  }                                                                                                              \
  FUSEPROOF_DEFINE_PLUGIN(&fuseproof::mutants::kDescriptor)
#else
// A bias_gelu_tanh mutant (mutant_bugs.h, the version-1 ABI): FUSEPROOF_MUTANT_BUG, FUSEPROOF_MUTANT_NAME.
#if !defined(FUSEPROOF_MUTANT_BUG) || !defined(FUSEPROOF_MUTANT_NAME)
#error "build with -DFUSEPROOF_MUTANT_BUG=<Bug enumerator> -DFUSEPROOF_MUTANT_NAME=\"...\" (or the FUSEPROOF_FAMILY_* set)"
#endif
#include "kernels/mutants/mutant_bugs.h"

namespace fuseproof::mutants {
inline constexpr Bug kBug = Bug::FUSEPROOF_MUTANT_BUG;
inline constexpr int32_t kVectorBytes = 16;
}  // namespace fuseproof::mutants

/// After the plugin's namespaces: its version-1 descriptor ("mutant <memory> <bug>") and the exported symbol.
#define FUSEPROOF_MUTANT_EXPORT(memory_word, memory, entry_fn)                                            \
  namespace fuseproof::mutants {                                                                        \
  const fuseproof_kernel_descriptor_v1_t kDescriptor = {                                                \
      FUSEPROOF_KERNEL_ABI_VERSION_1, sizeof(fuseproof_kernel_descriptor_v1_t),                         \
      "mutant " memory_word " " FUSEPROOF_MUTANT_NAME, "bias_gelu_tanh", memory, kVectorBytes, entry_fn}; \
  }                                                                                                     \
  FUSEPROOF_DEFINE_PLUGIN(&fuseproof::mutants::kDescriptor)
#endif
