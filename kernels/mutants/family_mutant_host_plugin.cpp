// family_mutant_host_plugin.cpp: a host-memory plugin of a family op carrying one bug (FUSEPROOF_FAMILY_OP,
// FUSEPROOF_FAMILY_BUG, FUSEPROOF_FAMILY_FP32; built per op and bug by CMake from family_bugs.h).
#include <cstdio>

#include "kernels/family_launcher.h"
#include "kernels/mutants/family_mutant_kernel.h"

namespace fuseproof::mutants {
namespace {

constexpr FamilyOp kOp = FamilyOp::FUSEPROOF_FAMILY_OP;
constexpr FamilyBug kBug = FamilyBug::FUSEPROOF_FAMILY_BUG;
constexpr bool kFp32 = FUSEPROOF_FAMILY_FP32 != 0;
constexpr int kVector = kBug == FamilyBug::kWrongHalfTail ? 1 : kernel::kFamilyVectorElems;

template <Half D>
void run(const fuseproof_call_t& c) {
  const int64_t rows = c.shape[0], w = c.shape[1];
  const auto* a = static_cast<const uint16_t*>(c.inputs[0].data);
  const auto* b = static_cast<const uint16_t*>(c.inputs[1].data);
  auto* out = static_cast<uint16_t*>(c.out);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t col = 0; col < w; ++col)
      out[r * w + col] = mutant_element<kOp, D, kBug, kFp32>(a[kernel::family_in0<kOp>(r, col, w)],
                                                             b[mutant_in1<kOp, kBug>(r, col, w)]);
}

int call(const fuseproof_call_t* c) {
  const FamilyLaunch l{kOp, kFp32, false, kVector};
  if (const std::string why = family_can_implement(l, *c); !why.empty()) {
    if (c->error && c->error_size) std::snprintf(c->error, c->error_size, "%s", why.c_str());
    return 1;
  }
  c->dtype == FUSEPROOF_DTYPE_BF16 ? run<Half::kBf16>(*c) : run<Half::kFp16>(*c);
  return 0;
}

const fuseproof_kernel_descriptor_t kDescriptor = {
    FUSEPROOF_KERNEL_ABI_VERSION, sizeof(fuseproof_kernel_descriptor_t), "mutant host " FUSEPROOF_FAMILY_NAME,
    FamilyTraits<kOp>::kName, kFp32 ? "fp32" : "eager", FUSEPROOF_MEMORY_HOST, 2 * kVector, &call,
};

}  // namespace
}  // namespace fuseproof::mutants

FUSEPROOF_DEFINE_PLUGIN(&fuseproof::mutants::kDescriptor)
