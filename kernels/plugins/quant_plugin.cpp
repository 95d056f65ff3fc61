// quant_plugin.cpp: a built-in quantization kernel as a version-4 plugin; built once per op, contract and memory kind
// (FUSEPROOF_QUANT_OP, FUSEPROOF_QUANT_CONTRACT, FUSEPROOF_QUANT_CUDA), into
// lib/plugins/lib<op>[_<contract>]_<backend>.so.
#include "kernels/quant_launcher.h"

namespace {

constexpr auto kOp = fuseproof::kernel::QuantOp::FUSEPROOF_QUANT_OP;
constexpr fuseproof::QuantLaunch kLaunch{kOp, fuseproof::kernel::QuantContract::FUSEPROOF_QUANT_CONTRACT,
                                         FUSEPROOF_QUANT_CUDA != 0};
static_assert(fuseproof::kernel::quant_has_contract<kOp>(kLaunch.contract), "the op does not ship this contract");
static_assert(kLaunch.cuda || kLaunch.contract != fuseproof::kernel::QuantContract::kRcpApprox,
              "the emulation does not compute rcp-approx (no host rcp.approx.ftz.f32)");

int call(const fuseproof_call_t* c) { return fuseproof::quant_call_status(*c, fuseproof::quant_launch(kLaunch, *c)); }

const fuseproof_kernel_descriptor_t kDescriptor =
    fuseproof::quant_descriptor<kOp>(FUSEPROOF_QUANT_KERNEL_NAME, kLaunch.contract, kLaunch.cuda, &call);

}  // namespace

FUSEPROOF_DEFINE_PLUGIN(&kDescriptor)
