// quant_cuda_stub.cpp: the quantization kernels' CUDA launch in a build without CUDA: refused with a clear message.
#include "quant_launcher.h"

namespace fuseproof::detail {

std::string quant_launch_cuda(const QuantLaunch&, const fuseproof_call_t&) {
  return "quantization kernels: this build has no CUDA (FUSEPROOF_CUDA=OFF or no toolkit)";
}

}  // namespace fuseproof::detail
