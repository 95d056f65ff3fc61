// torch_tensor_view.h: the libtorch adapter, at::Tensor -> fuseproof::TensorView (libtorch 1.13 and 2.x), header-only.
#pragma once

#include <ATen/ATen.h>
#include <torch/version.h>

#include <stdexcept>
#include <string>

#include "kernels/tensor_view.h"

namespace fuseproof {

/// Non-owning view of `t` (rank <= 4); `t` must outlive it. Dtypes the launcher rejects are mapped too, so that the
/// rejection tests can hand them over; a dtype with no ScalarType throws std::invalid_argument.
inline TensorView torch_tensor_view(const at::Tensor& t) {
  TensorView v;
  switch (t.scalar_type()) {
    case at::kBFloat16: v.dtype = ScalarType::kBf16; break;
    case at::kHalf: v.dtype = ScalarType::kFp16; break;
    case at::kFloat: v.dtype = ScalarType::kFloat32; break;
    case at::kDouble: v.dtype = ScalarType::kFloat64; break;
    case at::kChar: v.dtype = ScalarType::kInt8; break;
    case at::kShort: v.dtype = ScalarType::kInt16; break;
    case at::kInt: v.dtype = ScalarType::kInt32; break;
#if defined(TORCH_VERSION_MAJOR) && TORCH_VERSION_MAJOR >= 2
    case at::kFloat8_e4m3fn: v.dtype = ScalarType::kFp8E4m3; break;
    case at::kFloat8_e5m2: v.dtype = ScalarType::kFp8E5m2; break;
#endif
    default:
      throw std::invalid_argument(std::string("torch_tensor_view: dtype must map to a fuseproof ScalarType, got ") +
                                  c10::toString(t.scalar_type()));
  }
  if (t.dim() > TensorView::kMaxRank)
    throw std::invalid_argument("torch_tensor_view: rank must be <= 4, got " + std::to_string(t.dim()));
  v.data = t.data_ptr();
  v.rank = static_cast<int>(t.dim());
  for (int i = 0; i < v.rank; ++i) {
    v.sizes[i] = t.size(i);
    v.strides[i] = t.stride(i);
  }
  v.device = t.is_cuda() ? Device{DeviceKind::kCuda, static_cast<int>(t.get_device())} : Device{DeviceKind::kCpu, 0};
  return v;
}

}  // namespace fuseproof
