// cuda_runner_stub.cpp: the CUDA runners (elementwise and quantization) in a build without CUDA: CUDA plugins are refused with a clear message.
#include "audit/kernel_runner.h"
#include "audit/quant_runner.h"

namespace fuseproof::audit {

bool cuda_runner_available(std::string* why) {
  if (why) *why = "this build has no CUDA (FUSEPROOF_CUDA=OFF or no toolkit)";
  return false;
}

std::unique_ptr<KernelRunner> make_cuda_runner(const Plugin& plugin) {
  throw PluginError("audit: plugin " + plugin.info().path +
                    " takes CUDA device memory but this build has no CUDA (FUSEPROOF_CUDA=OFF or no toolkit)");
}

std::unique_ptr<QuantRunner> make_cuda_quant_runner(const Plugin& plugin) {
  throw PluginError("audit: plugin " + plugin.info().path +
                    " takes CUDA device memory but this build has no CUDA (FUSEPROOF_CUDA=OFF or no toolkit)");
}

}  // namespace fuseproof::audit
