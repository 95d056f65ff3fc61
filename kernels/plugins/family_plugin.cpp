// family_plugin.cpp: a built-in kernel of the op family as a plugin; built once per op, contract and memory kind
// (FUSEPROOF_FAMILY_OP, FUSEPROOF_FAMILY_FP32, FUSEPROOF_FAMILY_CUDA), into lib/plugins/lib<op>[_fp32]_<backend>.so.
#include <cstdio>

#include "kernels/family_launcher.h"

namespace {

constexpr fuseproof::FamilyLaunch kLaunch{fuseproof::kernel::FamilyOp::FUSEPROOF_FAMILY_OP, FUSEPROOF_FAMILY_FP32 != 0,
                                          FUSEPROOF_FAMILY_CUDA != 0};
using Traits = fuseproof::kernel::FamilyTraits<fuseproof::kernel::FamilyOp::FUSEPROOF_FAMILY_OP>;

int call(const fuseproof_call_t* c) {
  const std::string why = fuseproof::family_launch(kLaunch, *c);
  if (why.empty()) return 0;
  if (c->error && c->error_size) std::snprintf(c->error, c->error_size, "%s", why.c_str());
  return 1;
}

const fuseproof_kernel_descriptor_t kDescriptor = {
    FUSEPROOF_KERNEL_ABI_VERSION, sizeof(fuseproof_kernel_descriptor_t), FUSEPROOF_FAMILY_KERNEL_NAME, Traits::kName,
    FUSEPROOF_FAMILY_FP32 ? "fp32" : "eager", FUSEPROOF_FAMILY_CUDA ? FUSEPROOF_MEMORY_CUDA : FUSEPROOF_MEMORY_HOST,
    2 * fuseproof::kernel::kFamilyVectorElems, &call,
};

}  // namespace

FUSEPROOF_DEFINE_PLUGIN(&kDescriptor)
