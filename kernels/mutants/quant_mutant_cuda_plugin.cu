// quant_mutant_cuda_plugin.cu: a CUDA-memory plugin of a quantization op carrying one fault: the built-in kernel's
// grid over the faulty cell.
#include "kernels/mutants/mutant_export.h"
#include "kernels/quant_kernel.cuh"

namespace fuseproof::mutants {
namespace {

int call(const fuseproof_call_t* c) {
  const QuantLaunch l{kQuantOp, kQuantContract, true, kQuantFault};
  std::string why = quant_can_implement(l, *c);
  if (why.empty())
    why = detail::quant_launch_op<kQuantOp, kQuantContract, kQuantFault>(quant_args(l, *c), c->dtype,
                                                                         static_cast<cudaStream_t>(c->stream));
  return quant_call_status(*c, why);
}

}  // namespace
}  // namespace fuseproof::mutants

FUSEPROOF_QUANT_MUTANT_EXPORT("cuda", true, &fuseproof::mutants::call)
