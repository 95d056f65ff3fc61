// family_mutant_host_plugin.cpp: a host-memory plugin of a family op carrying one bug (FUSEPROOF_FAMILY_OP,
// FUSEPROOF_FAMILY_BUG, FUSEPROOF_FAMILY_FP32; built per op and bug by CMake from family_bugs.h).
#include <cstdio>

#include "kernels/mutants/mutant_export.h"
#include "kernels/mutants/family_mutant_kernel.h"

namespace fuseproof::mutants {
namespace {

template <Half D>
void run(const fuseproof_call_t& c) {
  const int64_t rows = c.shape[0], w = c.shape[1];
  const auto* a = static_cast<const uint16_t*>(c.inputs[0].data);
  const auto* b = static_cast<const uint16_t*>(c.inputs[1].data);
  auto* out = static_cast<uint16_t*>(c.out);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t col = 0; col < w; ++col)
      out[r * w + col] = mutant_row_element<kOp, D, kBug, kFp32>(a[kernel::family_in0<kOp>(r, col, w)],
                                                                 b[mutant_in1<kOp, kBug>(r, col, w)], r, rows);
}

int call(const fuseproof_call_t* c) {
  const FamilyLaunch l{kOp, kFp32, false, kVector};
  const std::string why = family_can_implement(l, *c);
  if (why.empty()) mutant_dtype<kBug>(c->dtype) == FUSEPROOF_DTYPE_BF16 ? run<Half::kBf16>(*c) : run<Half::kFp16>(*c);
  return family_call_status(*c, why);
}

}  // namespace
}  // namespace fuseproof::mutants

FUSEPROOF_FAMILY_MUTANT_EXPORT("host", false, &fuseproof::mutants::call)
