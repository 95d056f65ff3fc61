// torch_view.h: the thin libtorch adapter, at::Tensor -> fuseproof::TensorView, using only API present in libtorch 1.13 and 2.x.
#pragma once

#include <ATen/core/Tensor.h>

#include <stdexcept>
#include <string>

#include "tensor_view.h"

namespace fuseproof::e2e {

/// Non-owning view of `t` (rank <= 4); the tensor must outlive the view. Throws std::invalid_argument for an
/// unsupported dtype or rank; the launcher itself checks everything else (contiguity, alignment, devices).
inline TensorView torch_view(const at::Tensor& t) {
  TensorView v;
  switch (t.scalar_type()) {
    case at::kBFloat16: v.dtype = ScalarType::kBf16; break;
    case at::kHalf: v.dtype = ScalarType::kFp16; break;
    case at::kFloat: v.dtype = ScalarType::kFloat32; break;
    case at::kDouble: v.dtype = ScalarType::kFloat64; break;
    case at::kChar: v.dtype = ScalarType::kInt8; break;
    case at::kShort: v.dtype = ScalarType::kInt16; break;
    case at::kInt: v.dtype = ScalarType::kInt32; break;
    default:
      throw std::invalid_argument(std::string("torch_view: dtype must be bf16, fp16, float32, float64 or int8/16/32, got ") +
                                  std::string(c10::toString(t.scalar_type())));
  }
  if (t.dim() > TensorView::kMaxRank) {
    throw std::invalid_argument("torch_view: rank must be <= 4, got " + std::to_string(t.dim()));
  }
  v.data = t.data_ptr();
  v.rank = static_cast<int>(t.dim());
  for (int i = 0; i < v.rank; ++i) {
    v.sizes[i] = t.sizes()[i];
    v.strides[i] = t.strides()[i];
  }
  v.device = t.is_cuda() ? Device{DeviceKind::kCuda, static_cast<int>(t.get_device())} : Device{DeviceKind::kCpu, 0};
  return v;
}

}  // namespace fuseproof::e2e
