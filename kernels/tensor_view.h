// tensor_view.h: a small non-owning tensor view (pointer, dtype, shape, strides, device) so kernels/ needs no libtorch.
#pragma once

#include <cstdint>
#include <initializer_list>

namespace fuseproof {

/// Element types a caller may hand to a launcher; only kBf16 and kFp16 are accepted by bias_gelu_tanh.
enum class ScalarType : int {
  kBf16, kFp16, kFloat32, kFloat64, kInt8, kInt16, kInt32, kFp8E4m3, kFp8E5m2,
};

/// Short lower-case name ("bf16", "fp16", "float32", ...).
const char* scalar_type_name(ScalarType t);
/// Size of one element in bytes.
int scalar_type_size(ScalarType t);

enum class DeviceKind : int { kCpu, kCuda };

struct Device {
  DeviceKind kind = DeviceKind::kCpu;
  int index = 0;  ///< CUDA ordinal; 0 for the CPU
};

/// Non-owning view of a strided tensor of rank <= 4; sizes and strides count elements.
struct TensorView {
  static constexpr int kMaxRank = 4;
  void* data = nullptr;
  ScalarType dtype = ScalarType::kBf16;
  int rank = 0;
  int64_t sizes[kMaxRank] = {0, 0, 0, 0};
  int64_t strides[kMaxRank] = {0, 0, 0, 0};
  Device device{};
};

/// A contiguous row-major view over `data` with the given sizes.
TensorView contiguous_view(void* data, ScalarType dtype, std::initializer_list<int64_t> sizes, Device device = {});

}  // namespace fuseproof
