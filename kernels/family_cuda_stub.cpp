// family_cuda_stub.cpp: the family's CUDA launch in a build without CUDA: refused with a clear message.
#include "family_launcher.h"

namespace fuseproof::detail {

std::string family_launch_cuda(const FamilyLaunch&, const fuseproof_call_t&) {
  return "family kernels: this build has no CUDA (FUSEPROOF_CUDA=OFF or no toolkit)";
}

}  // namespace fuseproof::detail
