// tensor_view.cpp: scalar type names and sizes, contiguous views.
#include "tensor_view.h"

namespace fuseproof {

const char* scalar_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::kBf16: return "bf16";
    case ScalarType::kFp16: return "fp16";
    case ScalarType::kFloat32: return "float32";
    case ScalarType::kFloat64: return "float64";
    case ScalarType::kInt8: return "int8";
    case ScalarType::kInt16: return "int16";
    case ScalarType::kInt32: return "int32";
    case ScalarType::kFp8E4m3: return "fp8_e4m3";
    case ScalarType::kFp8E5m2: return "fp8_e5m2";
  }
  return "unknown";
}

int scalar_type_size(ScalarType t) {
  switch (t) {
    case ScalarType::kBf16:
    case ScalarType::kFp16:
    case ScalarType::kInt16: return 2;
    case ScalarType::kFloat32:
    case ScalarType::kInt32: return 4;
    case ScalarType::kFloat64: return 8;
    case ScalarType::kInt8:
    case ScalarType::kFp8E4m3:
    case ScalarType::kFp8E5m2: return 1;
  }
  return 0;
}

TensorView contiguous_view(void* data, ScalarType dtype, std::initializer_list<int64_t> sizes, Device device) {
  TensorView v;
  v.data = data;
  v.dtype = dtype;
  v.device = device;
  // A rank above kMaxRank is kept so that the launcher rejects it; only the first kMaxRank sizes are stored.
  v.rank = static_cast<int>(sizes.size());
  int i = 0;
  for (int64_t s : sizes) {
    if (i == TensorView::kMaxRank) break;
    v.sizes[i++] = s;
  }
  uint64_t stride = 1;  // unsigned: views of absurd sizes (overflow tests) must not be undefined behaviour here
  for (int j = i - 1; j >= 0; --j) {
    v.strides[j] = static_cast<int64_t>(stride);
    stride *= static_cast<uint64_t>(v.sizes[j]);
  }
  return v;
}

}  // namespace fuseproof
