// torch_cpu_backend.cpp: eager libtorch CPU rows of a 2-input op's domain, and cases of any op.
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

torch::Dtype torch_dtype(ref::Dtype d) { return d == ref::Dtype::kBf16 ? torch::kBFloat16 : torch::kHalf; }

/// A node's value: a tensor, or a constant kept as a scalar operand (eager `1 + scale` adds a Python number).
struct Value {
  torch::Tensor t;
  bool scalar = false;
  double value = 0;
};

/// The contract's nodes, each one eager tensor op on tensors in T (kHalf) or float32, as composition.py runs them;
/// input(i) gives input i's tensor.
template <class Input>
torch::Tensor run_nodes(const ref::OpSpec& op, ref::Contract contract, ref::Dtype d, Input input) {
  const auto dt = torch_dtype(d);
  std::vector<Value> v;
  auto cast = [&](const torch::Tensor& t, ref::Precision p) {
    return p == ref::Precision::kHalf ? t.to(dt) : t.to(torch::kFloat);
  };
  auto binary = [&](const ref::Node& n) {
    const Value &a = v[size_t(n.a)], &b = v[size_t(n.b)];
    if (a.scalar && b.scalar) throw std::runtime_error("torch-cpu backend: a step of two constants");
    const bool add = n.op == ref::NodeOp::kAdd;
    // A constant operand stays a scalar: eager `1 + scale` is scale.add(1), T in, T out.
    if (a.scalar) return add ? cast(b.t, n.precision).add(a.value) : cast(b.t, n.precision).mul(a.value);
    if (b.scalar) return add ? cast(a.t, n.precision).add(b.value) : cast(a.t, n.precision).mul(b.value);
    return add ? cast(a.t, n.precision) + cast(b.t, n.precision) : cast(a.t, n.precision) * cast(b.t, n.precision);
  };
  for (const ref::Node& n : op.contract(contract)->nodes) {
    switch (n.op) {
      case ref::NodeOp::kInput: v.push_back({input(n.input)}); break;
      case ref::NodeOp::kConst: v.push_back({torch::Tensor(), true, double(n.value)}); break;
      case ref::NodeOp::kActivation: v.push_back({activation(n.act, cast(v[size_t(n.a)].t, n.precision))}); break;
      case ref::NodeOp::kAdd:
      case ref::NodeOp::kMul: v.push_back({binary(n)}); break;
      case ref::NodeOp::kFma:
        throw std::runtime_error(std::string("torch-cpu backend: eager libtorch has no fused multiply-add with one "
                                             "rounding (contract ") + ref::contract_name(contract) + " of " + op.name +
                                 ")");
    }
  }
  if (v.back().scalar) throw std::runtime_error("torch-cpu backend: the output is a constant");
  return v.back().t.to(dt).contiguous();
}

}  // namespace

void torch_cpu_cases(const ref::OpSpec& op, ref::Contract contract, ref::Dtype d, const uint16_t* in, size_t n,
                     uint16_t* out) {
  const int64_t k = int64_t(op.inputs.size());
  try {
    const auto all = torch::from_blob(const_cast<uint16_t*>(in), {int64_t(n), k}, torch::kInt16).view(torch_dtype(d));
    const auto y = run_nodes(op, contract, d, [&](int i) { return all.select(1, i).contiguous(); });
    std::memcpy(out, y.data_ptr(), n * 2);
  } catch (const c10::Error& e) {
    throw std::runtime_error(std::string("torch-cpu backend: libtorch ") + TORCH_VERSION + " cannot run " + op.name +
                             " for " + ref::dtype_name(d) + ": " + e.what_without_backtrace());
  }
}

void torch_cpu_rows(const ref::OpSpec* op, ref::Contract contract, ref::Dtype d, uint32_t first_second, uint32_t count,
                    uint16_t* out) {
  if (op && op->inputs.size() != 2)
    throw std::invalid_argument("torch-cpu backend: rows are of a 2-input op's domain, " + op->name + " has " +
                                std::to_string(op->inputs.size()) + " inputs");
  const auto dt = d == ref::Dtype::kBf16 ? torch::kBFloat16 : torch::kHalf;
  const auto a = torch::arange(65536, torch::kInt32).to(torch::kInt16).view(dt).reshape({1, 65536});
  const auto b = torch::arange(int64_t(first_second), int64_t(first_second) + count, torch::kInt32)
                     .to(torch::kInt16).view(dt).reshape({int64_t(count), 1});
  try {
    torch::Tensor y;
    if (!op) {
      y = a + b;  // eager `x + bias`, broadcast over rows
    } else {
      y = run_nodes(*op, contract, d, [&](int i) { return i == 0 ? a : b; });
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
void torch_cpu_cases(const ref::OpSpec&, ref::Contract, ref::Dtype, const uint16_t*, size_t, uint16_t*) {
  throw std::runtime_error("torch-cpu backend: this fuseproof was built without libtorch");
}
#endif

}  // namespace fuseproof::cli
