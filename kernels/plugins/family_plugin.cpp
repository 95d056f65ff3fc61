// family_plugin.cpp: a built-in kernel of the op family as a plugin; built once per op, contract and memory kind
// (FUSEPROOF_FAMILY_OP, FUSEPROOF_FAMILY_CONTRACT, FUSEPROOF_FAMILY_CUDA), into
// lib/plugins/lib<op>[_fp32|_fma]_<backend>.so.
#include "kernels/family_launcher.h"

namespace {

constexpr auto kOp = fuseproof::kernel::FamilyOp::FUSEPROOF_FAMILY_OP;
constexpr fuseproof::FamilyLaunch kLaunch{kOp, fuseproof::kernel::Contract::FUSEPROOF_FAMILY_CONTRACT,
                                          FUSEPROOF_FAMILY_CUDA != 0};
static_assert(fuseproof::kernel::family_has_contract<kOp>(kLaunch.contract), "the op does not ship this contract");

int call(const fuseproof_call_t* c) { return fuseproof::family_call_status(*c, fuseproof::family_launch(kLaunch, *c)); }

const fuseproof_kernel_descriptor_t kDescriptor = fuseproof::family_descriptor<kOp>(
    FUSEPROOF_FAMILY_KERNEL_NAME, kLaunch.contract, kLaunch.cuda, fuseproof::kernel::kFamilyVectorElems, &call);

}  // namespace

FUSEPROOF_DEFINE_PLUGIN(&kDescriptor)
