// quant_mutant_host_plugin.cpp: a host-memory plugin of a quantization op carrying one fault (FUSEPROOF_QUANT_OP,
// FUSEPROOF_QUANT_FAULT, FUSEPROOF_QUANT_CONTRACT; built per op and bug by CMake from quant_bugs.h): the emulation's
// loop over the faulty cell.
#include "kernels/mutants/mutant_export.h"
#include "kernels/quant_emulation.h"

namespace fuseproof::mutants {
namespace {

int call(const fuseproof_call_t* c) {
  const QuantLaunch l{kQuantOp, kQuantContract, false, kQuantFault};
  const std::string why = quant_can_implement(l, *c);
  if (why.empty()) detail::quant_emulate_op<kQuantOp, kQuantContract, kQuantFault>(quant_args(l, *c), c->dtype);
  return quant_call_status(*c, why);
}

}  // namespace
}  // namespace fuseproof::mutants

FUSEPROOF_QUANT_MUTANT_EXPORT("host", false, &fuseproof::mutants::call)
