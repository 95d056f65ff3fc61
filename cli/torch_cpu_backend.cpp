// torch_cpu_backend.cpp: eager libtorch CPU rows of the (x, bias) domain.
#include "cli/torch_cpu_backend.h"

#include <cstring>
#include <stdexcept>

#if FUSEPROOF_HAVE_TORCH
#include <torch/torch.h>
#endif

namespace fuseproof::cli {

#if FUSEPROOF_HAVE_TORCH
bool torch_cpu_available() { return true; }
std::string torch_cpu_version() { return std::string("libtorch ") + TORCH_VERSION + " (CPU)"; }

void torch_cpu_rows(SweepOp op, ref::Dtype d, uint32_t bias_first, uint32_t count, uint16_t* out) {
  const auto dt = d == ref::Dtype::kBf16 ? torch::kBFloat16 : torch::kHalf;
  const auto x = torch::arange(65536, torch::kInt32).to(torch::kInt16).view(dt).reshape({1, 65536});
  const auto b = torch::arange(int64_t(bias_first), int64_t(bias_first) + count, torch::kInt32)
                     .to(torch::kInt16).view(dt).reshape({int64_t(count), 1});
  try {
    torch::Tensor y = x + b;  // eager `x + bias`, broadcast over rows
    if (op == SweepOp::kBiasGeluTanh) y = torch::gelu(y, "tanh");
    y = y.contiguous();
    std::memcpy(out, y.data_ptr(), size_t(count) * 65536 * 2);
  } catch (const c10::Error& e) {
    throw std::runtime_error(std::string("torch-cpu backend: libtorch ") + TORCH_VERSION + " cannot run this op for " +
                             ref::dtype_name(d) + ": " + e.what_without_backtrace());
  }
}
#else
bool torch_cpu_available() { return false; }
std::string torch_cpu_version() { return "not built"; }
void torch_cpu_rows(SweepOp, ref::Dtype, uint32_t, uint32_t, uint16_t*) {
  throw std::runtime_error("torch-cpu backend: this fuseproof was built without libtorch");
}
#endif

}  // namespace fuseproof::cli
