// torch_cpu_backend.cpp: eager libtorch CPU rows of a 2-input op's domain.
#include "cli/torch_cpu_backend.h"

#include <cstring>
#include <stdexcept>
#include <vector>

#if FUSEPROOF_HAVE_TORCH
#include <torch/torch.h>
#endif

namespace fuseproof::cli {

#if FUSEPROOF_HAVE_TORCH
bool torch_cpu_available() { return true; }
std::string torch_cpu_version() { return std::string("libtorch ") + TORCH_VERSION + " (CPU)"; }

namespace {

torch::Tensor activation(ref::Activation a, const torch::Tensor& t) {
  switch (a) {
    case ref::Activation::kGeluTanh: return torch::gelu(t, "tanh");
    case ref::Activation::kGeluErf: return torch::gelu(t);
    case ref::Activation::kSilu: return torch::silu(t);
  }
  throw std::invalid_argument("torch-cpu backend: unknown activation");
}

}  // namespace

void torch_cpu_rows(const ref::OpSpec* op, ref::Contract contract, ref::Dtype d, uint32_t first_second, uint32_t count,
                    uint16_t* out) {
  const auto dt = d == ref::Dtype::kBf16 ? torch::kBFloat16 : torch::kHalf;
  const auto a = torch::arange(65536, torch::kInt32).to(torch::kInt16).view(dt).reshape({1, 65536});
  const auto b = torch::arange(int64_t(first_second), int64_t(first_second) + count, torch::kInt32)
                     .to(torch::kInt16).view(dt).reshape({int64_t(count), 1});
  try {
    torch::Tensor y;
    if (!op) {
      y = a + b;  // eager `x + bias`, broadcast over rows
    } else {
      // The contract's nodes, each one eager tensor op on tensors in T (kHalf) or float32, as composition.py runs them.
      std::vector<torch::Tensor> v;
      auto cast = [&](const torch::Tensor& t, ref::Precision p) { return p == ref::Precision::kHalf ? t.to(dt) : t.to(torch::kFloat); };
      for (const ref::Node& n : op->contract(contract)->nodes) {
        switch (n.op) {
          case ref::NodeOp::kInput: v.push_back(n.input == 0 ? a : b); break;
          case ref::NodeOp::kActivation: v.push_back(activation(n.act, cast(v[size_t(n.a)], n.precision))); break;
          case ref::NodeOp::kAdd: v.push_back(cast(v[size_t(n.a)], n.precision) + cast(v[size_t(n.b)], n.precision)); break;
          case ref::NodeOp::kMul: v.push_back(cast(v[size_t(n.a)], n.precision) * cast(v[size_t(n.b)], n.precision)); break;
        }
      }
      y = v.back().to(dt);
    }
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
void torch_cpu_rows(const ref::OpSpec*, ref::Contract, ref::Dtype, uint32_t, uint32_t, uint16_t*) {
  throw std::runtime_error("torch-cpu backend: this fuseproof was built without libtorch");
}
#endif

}  // namespace fuseproof::cli
