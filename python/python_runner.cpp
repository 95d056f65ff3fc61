// python_runner.cpp: the guarded host images, the bridge calls and the guard and input checks of a Python subject.
#include "python/python_runner.h"

#include <climits>

#include "kernels/fuseproof_kernel_abi.h"

namespace py = pybind11;

namespace fuseproof::python {

namespace {

using audit::kGuardElems;
using audit::kPoison;

/// kGuardElems of `fill`, `lead` more, then the data, then kGuardElems of `fill`: what the bridge wraps as a tensor.
struct HostImage {
  HostImage(const uint16_t* data, size_t n, size_t lead, uint16_t fill)
      : offset(kGuardElems + lead), elems(n), image(2 * kGuardElems + lead + n, fill) {
    if (data) std::copy(data, data + n, image.begin() + long(offset));
  }
  py::memoryview view() {
    return py::memoryview::from_memory(image.data(), py::ssize_t(image.size() * 2), /*readonly=*/false);
  }
  size_t offset;
  size_t elems;
  std::vector<uint16_t> image;
};

const char* dtype_name(int32_t dtype) { return dtype == FUSEPROOF_DTYPE_BF16 ? "bf16" : "fp16"; }

/// The bridge answers (rc, message, fault); a Python error outside the subject (a CUDA fault found while copying back,
/// a defect of the bridge) is a fault of the backend.
void unpack(const py::object& r, int* rc, std::string* message, std::string* fault) {
  const py::tuple t = r.cast<py::tuple>();
  *rc = t[0].cast<int>();
  *message = t[1].cast<std::string>();
  *fault = t[2].cast<std::string>();
}

std::string one_line(const py::error_already_set& e) {
  std::string s = e.what();
  const auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

}  // namespace

std::string inexpressible_reason(const audit::CallSpec& s) {
  if (s.dtype != FUSEPROOF_DTYPE_BF16 && s.dtype != FUSEPROOF_DTYPE_FP16)
    return "dtype code " + std::to_string(s.dtype) + " (the front end calls a torch op at bf16 and fp16 only)";
  if (s.rows < 0 || s.width < 0)
    return "shape rows=" + std::to_string(s.rows) + ",width=" + std::to_string(s.width) + " (negative)";
  if (s.width > 0 && s.rows > INT64_MAX / 2 / s.width) return "rows * width overflowing int64";
  if (s.null_x || s.null_bias || s.null_out) return "a null pointer";
  if ((s.x_misalign | s.bias_misalign | s.out_misalign) & 1u) return "a pointer to half an element";
  if (s.x.size() < size_t(s.rows * s.width) || s.bias.size() < size_t(s.width) || s.out_elems < size_t(s.rows * s.width))
    return "buffers smaller than rows * width";
  return "";
}

PythonRunner::PythonRunner(py::object bridge, bool cuda) : bridge_(std::move(bridge)), cuda_(cuda) {
  py::gil_scoped_acquire gil;
  hardware_ = bridge_.attr("hardware")().cast<std::string>();
  if (!cuda_) hardware_ += "; host " + audit::host_cpu_description();
}

PythonRunner::~PythonRunner() {
  py::gil_scoped_acquire gil;
  bridge_ = py::object();
}

audit::CallOutcome PythonRunner::call(const audit::CallSpec& s) {
  audit::CallOutcome o;
  o.out.assign(s.out_elems, kPoison);
  if (const std::string why = inexpressible_reason(s); !why.empty()) {
    o.rc = 1;
    o.message = "not applicable to a Python subject: " + why + " cannot be passed as torch tensors";
    return o;
  }
  const size_t n = size_t(s.rows * s.width);
  HostImage x(s.x.data(), s.x.size(), s.x_misalign / 2, kPoison ^ 0x1111);
  HostImage bias(s.bias.data(), s.bias.size(), s.bias_misalign / 2, kPoison ^ 0x2222);
  HostImage out(nullptr, s.out_elems, s.out_misalign / 2, kPoison);
  const std::vector<uint16_t> x_before = x.image, bias_before = bias.image;
  {
    py::gil_scoped_acquire gil;
    try {
      unpack(bridge_.attr("call")(x.view(), x.offset, bias.view(), bias.offset, out.view(), out.offset, s.rows, s.width,
                                  dtype_name(s.dtype), n),
             &o.rc, &o.message, &o.fault);
    } catch (const py::error_already_set& e) {
      o.fault = "fuseproof._bridge: " + one_line(e);
    }
  }
  std::copy(out.image.begin() + long(out.offset), out.image.begin() + long(out.offset + s.out_elems), o.out.begin());
  // Every byte of the out image outside the data must still be poison (counted in bytes, as the plugin runners do).
  const uint8_t* bytes = reinterpret_cast<const uint8_t*>(out.image.data());
  const size_t lo = out.offset * 2, hi = lo + s.out_elems * 2;
  for (size_t i = 0; i < out.image.size() * 2; ++i) {
    if (i >= lo && i < hi) continue;
    if (bytes[i] != ((i & 1) ? uint8_t(kPoison >> 8) : uint8_t(kPoison & 0xFF))) ++o.guard_writes;
  }
  o.inputs_intact = x.image == x_before && bias.image == bias_before;
  return o;
}

audit::DomainBlock PythonRunner::domain_block(int32_t dtype, const std::vector<uint16_t>& biases) {
  audit::DomainBlock d;
  d.out_canonical.assign(size_t(65536) * biases.size(), kPoison);
  std::vector<uint16_t> b(biases);
  py::gil_scoped_acquire gil;
  try {
    auto bv = py::memoryview::from_memory(b.data(), py::ssize_t(b.size() * 2), /*readonly=*/false);
    auto ov = py::memoryview::from_memory(d.out_canonical.data(), py::ssize_t(d.out_canonical.size() * 2), false);
    unpack(bridge_.attr("domain")(bv, ov, dtype_name(dtype)), &d.rc, &d.message, &d.fault);
  } catch (const py::error_already_set& e) {
    d.fault = "fuseproof._bridge: " + one_line(e);
  }
  if (b != biases && d.fault.empty() && d.rc == 0) {
    d.rc = 1;
    d.message = "subject modified bias";
  }
  return d;
}

}  // namespace fuseproof::python
