// bias_gelu_tanh_launcher.cpp: validation of every argument, then dispatch to the CUDA kernel or the CPU emulation.
#include "bias_gelu_tanh_launcher.h"

#include <cinttypes>
#include <cstdio>
#include <string>

#include "bias_gelu_tanh_emulation.h"
#include "cuda_device.h"

#if FUSEPROOF_HAVE_CUDA
#include "bias_gelu_tanh_cuda.h"
#endif

namespace fuseproof {

namespace {

constexpr const char* kOp = "bias_gelu_tanh: ";

LaunchStatus reject(const std::string& message) { return LaunchStatus{false, kOp + message}; }

std::string device_name(const Device& d) {
  if (d.kind == DeviceKind::kCpu) return "cpu";
  if (d.kind == DeviceKind::kCuda) return "cuda:" + std::to_string(d.index);
  return "device-kind(" + std::to_string(static_cast<int>(d.kind)) + ")";
}

bool same_device(const Device& a, const Device& b) {
  return a.kind == b.kind && (a.kind == DeviceKind::kCpu || a.index == b.index);
}

std::string ints(const int64_t* v, int n) {
  std::string s = "[";
  for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string hex_ptr(const void* p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%" PRIxPTR, reinterpret_cast<uintptr_t>(p));
  return buf;
}

std::string range(const void* p, uint64_t bytes) {
  char buf[64];
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  std::snprintf(buf, sizeof buf, "[0x%" PRIxPTR ", 0x%" PRIxPTR ")", a, uintptr_t(a + bytes));
  return buf;
}

bool supported(ScalarType t) { return t == ScalarType::kBf16 || t == ScalarType::kFp16; }

bool ranges_overlap(const void* a, uint64_t a_bytes, const void* b, uint64_t b_bytes) {
  const uintptr_t pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
  return pa < pb + b_bytes && pb < pa + a_bytes;
}

/// Row-major contiguity as PyTorch defines it: the stride of a dimension of size 1 does not matter.
bool contiguous(const TensorView& v) {
  int64_t expected = 1;
  for (int i = v.rank - 1; i >= 0; --i) {
    if (v.sizes[i] != 1 && v.strides[i] != expected) return false;
    expected *= v.sizes[i];
  }
  return true;
}

std::string expected_strides(const TensorView& v) {
  int64_t s[TensorView::kMaxRank];
  int64_t expected = 1;
  for (int i = v.rank - 1; i >= 0; --i) {
    s[i] = expected;
    expected *= v.sizes[i];
  }
  return ints(s, v.rank);
}

std::string pointer_kind_name(const PointerInfo& p) {
  switch (p.kind) {
    case PointerKind::kHost: return "host memory";
    case PointerKind::kDevice: return "device memory on cuda:" + std::to_string(p.device);
    case PointerKind::kManaged: return "managed memory on cuda:" + std::to_string(p.device);
    default: return "memory unknown to CUDA";
  }
}

struct Plan {
  int vector_bytes = 16;
  GeluMath math = GeluMath::kDirect;  ///< resolved
  int64_t rows = 0, width = 0;
  uint64_t bytes = 0;  ///< of x and of out
};

struct Named {
  const char* name;
  const TensorView* view;
};

LaunchStatus validate(const TensorView& out, const TensorView& x, const TensorView& bias,
                      const BiasGeluOptions& options, bool emulation_only, Plan* plan) {
  // Options.
  const int vbytes = static_cast<int>(options.vector);
  if (vbytes != 0 && vbytes != 16 && vbytes != 32)
    return reject("options.vector must be auto, 16 or 32 bytes, got " + std::to_string(vbytes));
  const int math = static_cast<int>(options.math);
  if (math < 0 || math > static_cast<int>(GeluMath::kTableRangeBulk))
    return reject("options.math must be auto, direct, table-bulk or table-range-bulk, got " + std::to_string(math));
  if (options.emulated_sms <= 0)
    return reject("options.emulated_sms must be positive, got " + std::to_string(options.emulated_sms));
  if (options.max_grid_for_test < 0)
    return reject("options.max_grid_for_test must be 0 or positive, got " + std::to_string(options.max_grid_for_test));

  const Named views[] = {{"x", &x}, {"bias", &bias}, {"out", &out}};
  // Dtypes.
  for (const Named& n : views)
    if (!supported(n.view->dtype))
      return reject(std::string(n.name) + " dtype must be bf16 or fp16, got " + scalar_type_name(n.view->dtype));
  for (const Named& n : {views[1], views[2]})
    if (n.view->dtype != x.dtype)
      return reject(std::string(n.name) + " dtype must equal x dtype (" + scalar_type_name(x.dtype) + "), got " +
                    scalar_type_name(n.view->dtype));
  // Ranks and shapes.
  if (x.rank != 2) return reject("x rank must be 2, got " + std::to_string(x.rank));
  if (out.rank != 2) return reject("out rank must be 2, got " + std::to_string(out.rank));
  if (bias.rank != 1) return reject("bias rank must be 1, got " + std::to_string(bias.rank));
  const int64_t rows = x.sizes[0], width = x.sizes[1];
  if (rows <= 0) return reject("rows must be positive, got " + std::to_string(rows));
  if (width <= 0) return reject("width must be positive, got " + std::to_string(width));
  if (out.sizes[0] != rows || out.sizes[1] != width)
    return reject("out shape must equal x shape " + ints(x.sizes, 2) + ", got " + ints(out.sizes, 2));
  if (bias.sizes[0] != width)
    return reject("bias length must equal width (" + std::to_string(width) + "), got " + std::to_string(bias.sizes[0]));
  // Sizes: element count and byte count must fit in int64 (and so in every index the kernel forms).
  int64_t elements = 0, bytes = 0;
  if (__builtin_mul_overflow(rows, width, &elements) || __builtin_mul_overflow(elements, int64_t(2), &bytes))
    return reject("rows x width x 2 bytes must fit in int64, got " + std::to_string(rows) + " x " +
                  std::to_string(width));
  // Devices.
  for (const Named& n : {views[1], views[2]})
    if (!same_device(n.view->device, x.device))
      return reject(std::string(n.name) + " device must equal x device (" + device_name(x.device) + "), got " +
                    device_name(n.view->device));
  if (x.device.kind != DeviceKind::kCpu && x.device.kind != DeviceKind::kCuda)
    return reject("x device must be cpu or cuda, got " + device_name(x.device));
  if (emulation_only && x.device.kind != DeviceKind::kCpu)
    return reject("x device must be cpu for the emulation, got " + device_name(x.device));
  if (x.device.kind == DeviceKind::kCuda) {
#if !FUSEPROOF_HAVE_CUDA
    return reject("x device must be cpu in a build without CUDA, got " + device_name(x.device));
#else
    const int count = cuda_device_count();
    if (count == 0) return reject("x device must be cpu when no CUDA device is available, got " + device_name(x.device));
    if (x.device.index < 0 || x.device.index >= count)
      return reject("x device must be one of the " + std::to_string(count) + " CUDA devices, got " +
                    device_name(x.device));
#endif
  }
  // Vector policy and width.
  const VectorPolicy policy = bias_gelu_tanh_resolve_vector(x.device, options.vector);
  const int vector_bytes = static_cast<int>(policy);
  const int elems = bias_gelu_tanh_vector_elems(x.dtype, policy);
  if (width % elems != 0)
    return reject("width must be a positive multiple of " + std::to_string(elems) + " (" + scalar_type_name(x.dtype) +
                  ", " + std::to_string(vector_bytes) + "-byte vectors), got " + std::to_string(width));
  // Layout and pointers.
  for (const Named& n : views)
    if (!contiguous(*n.view))
      return reject(std::string(n.name) + " must be contiguous (strides " + expected_strides(*n.view) +
                    "), got strides " + ints(n.view->strides, n.view->rank));
  const uint64_t bias_bytes = uint64_t(width) * 2;
  for (const Named& n : views) {
    const uint64_t nbytes = n.view == &bias ? bias_bytes : uint64_t(bytes);
    const uintptr_t p = reinterpret_cast<uintptr_t>(n.view->data);
    if (p == 0) return reject(std::string(n.name) + " data pointer must be non-null, got 0x0");
    if (p % uintptr_t(vector_bytes) != 0)
      return reject(std::string(n.name) + " data pointer must be aligned to " + std::to_string(vector_bytes) +
                    " bytes (" + std::to_string(vector_bytes) + "-byte vectors), got " + hex_ptr(n.view->data));
    if (p + nbytes < p)
      return reject(std::string(n.name) + " data range must not wrap the address space, got " + hex_ptr(n.view->data) +
                    " + " + std::to_string(nbytes) + " bytes");
  }
  // Memory kind, when CUDA can tell: a host pointer in a CUDA view (or the reverse) would fault on first touch.
  if (cuda_device_count() > 0) {
    for (const Named& n : views) {
      const PointerInfo info = cuda_pointer_info(n.view->data);
      if (x.device.kind == DeviceKind::kCuda) {
        const bool ok = (info.kind == PointerKind::kDevice || info.kind == PointerKind::kManaged) &&
                        info.device == x.device.index;
        if (!ok)
          return reject(std::string(n.name) + " data pointer must be device memory on " + device_name(x.device) +
                        ", got " + pointer_kind_name(info));
      } else if (info.kind == PointerKind::kDevice) {
        return reject(std::string(n.name) + " data pointer must be host memory for device cpu, got " +
                      pointer_kind_name(info));
      }
    }
  }
  // Aliasing: exact in-place (out is x) is supported; any other overlap is not, and out may never overlap bias.
  if (ranges_overlap(out.data, uint64_t(bytes), x.data, uint64_t(bytes)) && out.data != x.data)
    return reject("out must be x itself or not overlap it (exact in-place is supported), got out " +
                  range(out.data, uint64_t(bytes)) + " and x " + range(x.data, uint64_t(bytes)));
  if (ranges_overlap(out.data, uint64_t(bytes), bias.data, bias_bytes))
    return reject("out must not overlap bias, got out " + range(out.data, uint64_t(bytes)) + " and bias " +
                  range(bias.data, bias_bytes));
#if FUSEPROOF_HAVE_CUDA
  if (x.device.kind == DeviceKind::kCuda) {
    const std::string why = kernel::bias_gelu_tanh_cuda_check(
        x.device.index, x.dtype == ScalarType::kBf16 ? kernel::Half::kBf16 : kernel::Half::kFp16, vector_bytes);
    if (!why.empty()) return LaunchStatus{false, why};
    if (options.math != GeluMath::kAuto && options.math != GeluMath::kDirect) {
      const std::string no_table = kernel::bias_gelu_tanh_cuda_table_check(x.device.index, kernel::table_kind_of(options.math));
      if (!no_table.empty()) return LaunchStatus{false, no_table};
    }
  }
#endif
  if (plan) {
    plan->math = bias_gelu_tanh_resolve_math(x.device, elements, options.math);
    plan->vector_bytes = vector_bytes;
    plan->rows = rows;
    plan->width = width;
    plan->bytes = uint64_t(bytes);
  }
  return {};
}

}  // namespace

VectorPolicy bias_gelu_tanh_resolve_vector(const Device& device, VectorPolicy requested) {
  if (requested != VectorPolicy::kAuto) return requested;
  if (device.kind == DeviceKind::kCuda && cuda_device_compute_capability(device.index) >= 100)
    return VectorPolicy::kBytes32;
  return VectorPolicy::kBytes16;
}

GeluMath bias_gelu_tanh_resolve_math(const Device& device, int64_t elements, GeluMath requested) {
  if (requested != GeluMath::kAuto) return requested;
  if (elements < kAutoTableMinElements) return GeluMath::kDirect;
  // Largest first; a table the device cannot hold falls back to the next smaller choice.
  const GeluMath candidates[] = {kAutoLargeMath, GeluMath::kTableRangeBulk};
  for (GeluMath m : candidates) {
#if FUSEPROOF_HAVE_CUDA
    if (device.kind == DeviceKind::kCuda && !kernel::bias_gelu_tanh_cuda_table_check(device.index, kernel::table_kind_of(m)).empty())
      continue;
#else
    (void)device;
#endif
    return m;
  }
  return GeluMath::kDirect;
}

const char* gelu_math_name(GeluMath math) {
  switch (math) {
    case GeluMath::kAuto: return "auto";
    case GeluMath::kDirect: return "direct";
    case GeluMath::kTableBulk: return "table-bulk";
    case GeluMath::kTableRangeBulk: return "table-range-bulk";
  }
  return "?";
}

bool gelu_math_from_name(const std::string& name, GeluMath* math) {
  if (name == gelu_math_name(GeluMath::kAuto)) {
    if (math) *math = GeluMath::kAuto;
    return true;
  }
  for (GeluMath m : kAllGeluMaths)
    if (name == gelu_math_name(m)) {
      if (math) *math = m;
      return true;
    }
  return false;
}

int bias_gelu_tanh_vector_elems(ScalarType dtype, VectorPolicy resolved) {
  const int size = scalar_type_size(dtype);
  const int bytes = resolved == VectorPolicy::kAuto ? 16 : static_cast<int>(resolved);
  return size > 0 ? bytes / size : 0;
}

LaunchStatus bias_gelu_tanh_can_implement(const TensorView& out, const TensorView& x, const TensorView& bias,
                                          const BiasGeluOptions& options) {
  return validate(out, x, bias, options, false, nullptr);
}

LaunchStatus bias_gelu_tanh(const TensorView& out, const TensorView& x, const TensorView& bias,
                            const BiasGeluOptions& options) {
  Plan plan;
  if (LaunchStatus s = validate(out, x, bias, options, false, &plan); !s) return s;
  if (x.device.kind == DeviceKind::kCpu) {
    detail::run_emulation(out, x, bias, plan.vector_bytes, options.emulated_sms, EmulatedBody::kProduction, plan.math);
    return {};
  }
#if FUSEPROOF_HAVE_CUDA
  kernel::CudaLaunch launch;
  launch.dtype = x.dtype == ScalarType::kBf16 ? kernel::Half::kBf16 : kernel::Half::kFp16;
  launch.vector_bytes = plan.vector_bytes;
  const int elems = plan.vector_bytes / 2;
  launch.args.out = static_cast<uint16_t*>(out.data);
  launch.args.x = static_cast<const uint16_t*>(x.data);
  launch.args.bias = static_cast<const uint16_t*>(bias.data);
  launch.args.n_vectors = plan.rows * plan.width / elems;
  launch.args.width_vectors = plan.width / elems;
  launch.device = x.device.index;
  launch.stream = options.stream;
  launch.pdl = options.pdl;
  launch.skip_wait = options.pdl_skip_wait_for_test;
  launch.max_grid = options.max_grid_for_test;
  launch.table = kernel::table_kind_of(plan.math);
  launch.table_auto = options.math == GeluMath::kAuto;
  const std::string err = kernel::bias_gelu_tanh_cuda_launch(launch);
  if (!err.empty()) return LaunchStatus{false, err};
  return {};
#else
  return reject("x device must be cpu in a build without CUDA, got " + device_name(x.device));
#endif
}

LaunchStatus bias_gelu_tanh_emulate(const TensorView& out, const TensorView& x, const TensorView& bias,
                                    const BiasGeluOptions& options, EmulatedBody body) {
  Plan plan;
  if (LaunchStatus s = validate(out, x, bias, options, true, &plan); !s) return s;
  detail::run_emulation(out, x, bias, plan.vector_bytes, options.emulated_sms, body, plan.math);
  return {};
}

}  // namespace fuseproof
