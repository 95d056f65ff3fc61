// lpips_model.cpp: torch::jit::load of the LPIPS network and one forward per frame pair.
#include "lpips_model.h"

#include <torch/script.h>

#include <c10/core/InferenceMode.h>

#include <stdexcept>

namespace fuseproof::e2e {
namespace {

/// RGB24 [H, W, 3] bytes -> float32 [1, 3, H, W] in [-1, 1].
at::Tensor to_input(const uint8_t* rgb, int width, int height) {
  const at::Tensor u8 = at::from_blob(const_cast<uint8_t*>(rgb), {height, width, 3}, at::TensorOptions().dtype(at::kByte));
  return (u8.to(at::kFloat).permute({2, 0, 1}).unsqueeze(0) / 127.5 - 1.0).contiguous();
}

}  // namespace

struct LpipsModel::Impl {
  std::string path;
  torch::jit::script::Module module;
};

LpipsModel::LpipsModel(const std::string& path) : impl_(std::make_unique<Impl>()) {
  impl_->path = path;
  try {
    impl_->module = torch::jit::load(path, torch::kCPU);
  } catch (const std::exception& e) {
    std::string why = e.what();
    why = why.substr(0, why.find('\n'));
    throw std::runtime_error("--lpips-model: '" + path + "' is not a loadable TorchScript module (" + why + ")");
  }
  impl_->module.eval();
}

LpipsModel::~LpipsModel() = default;

double LpipsModel::distance(const uint8_t* a, const uint8_t* b, int width, int height) {
  c10::InferenceMode guard;
  at::Tensor out;
  try {
    out = impl_->module.forward({to_input(a, width, height), to_input(b, width, height)}).toTensor();
  } catch (const std::exception& e) {
    std::string why = e.what();
    why = why.substr(0, why.find('\n'));
    throw std::runtime_error("--lpips-model: '" + impl_->path + "' failed on a frame pair (" + why + ")");
  }
  if (out.numel() != 1) {
    throw std::runtime_error("--lpips-model: '" + impl_->path + "' must return one value per frame pair, got " +
                             std::to_string(out.numel()));
  }
  return out.to(at::kDouble).item<double>();
}

}  // namespace fuseproof::e2e
