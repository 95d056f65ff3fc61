// mutant_host_plugin.cpp: a host-memory plugin carrying the bug FUSEPROOF_MUTANT_BUG (built once per bug by CMake).
#include "kernels/fuseproof_kernel_abi.h"
#include "kernels/mutants/mutant_host_kernel.h"
#include "kernels/mutants/mutant_validate.h"

#ifndef FUSEPROOF_MUTANT_BUG
#error "build with -DFUSEPROOF_MUTANT_BUG=<Bug enumerator> -DFUSEPROOF_MUTANT_NAME=\"...\""
#endif

namespace fuseproof::mutants {
namespace {

constexpr Bug kBug = Bug::FUSEPROOF_MUTANT_BUG;
constexpr int32_t kVectorBytes = 16;

int entry(void* out, const void* x, const void* bias, int64_t rows, int64_t width, int32_t dtype, void* /*stream*/,
          char* error, size_t error_size) {
  if (int rc = validate(kBug, out, x, bias, rows, width, dtype, kVectorBytes, error, error_size)) return rc;
  bias_gelu_host(static_cast<uint16_t*>(out), static_cast<const uint16_t*>(x), static_cast<const uint16_t*>(bias),
                 rows, width, dtype == FUSEPROOF_DTYPE_BF16, vector_elems(kVectorBytes), kBug);
  return 0;
}

const fuseproof_kernel_descriptor_t kDescriptor = {
    FUSEPROOF_KERNEL_ABI_VERSION, sizeof(fuseproof_kernel_descriptor_t), "mutant host " FUSEPROOF_MUTANT_NAME,
    "bias_gelu_tanh", FUSEPROOF_MEMORY_HOST, kVectorBytes, &entry,
};

}  // namespace
}  // namespace fuseproof::mutants

FUSEPROOF_DEFINE_PLUGIN(&fuseproof::mutants::kDescriptor)
