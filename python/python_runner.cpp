// python_runner.cpp: the guarded host images, the bridge calls and the guard and input checks of a Python subject.
#include "python/python_runner.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <thread>

#include "audit/call_watch.h"
#include "audit/counter_patterns.h"
#include "kernels/fuseproof_kernel_abi.h"

namespace py = pybind11;

namespace fuseproof::python {

namespace {

using audit::kGuardElems;
using audit::kPoison;

/// kGuardElems of `fill`, `lead` more, then the data, then kGuardElems of `fill`: what the bridge wraps as a tensor.
struct HostImage {
  HostImage(size_t n, size_t lead, uint16_t fill)
      : offset(kGuardElems + lead), elems(n), image(2 * kGuardElems + lead + n, fill) {}
  HostImage(const uint16_t* data, size_t n, size_t lead, uint16_t fill) : HostImage(n, lead, fill) {
    std::copy(data, data + n, image.begin() + long(offset));
  }
  uint16_t* data() { return image.data() + offset; }
  py::memoryview view() {
    return py::memoryview::from_memory(image.data(), py::ssize_t(image.size() * 2), /*readonly=*/false);
  }
  /// Bytes outside the data that are no longer `fill` (counted in bytes, as the plugin runners count).
  uint64_t guard_writes(uint16_t fill) const {
    const uint8_t* b = reinterpret_cast<const uint8_t*>(image.data());
    const size_t lo = offset * 2, hi = lo + elems * 2;
    uint64_t n = 0;
    for (size_t i = 0; i < image.size() * 2; ++i)
      if ((i < lo || i >= hi) && b[i] != ((i & 1) ? uint8_t(fill >> 8) : uint8_t(fill & 0xFF))) ++n;
    return n;
  }
  size_t offset;
  size_t elems;
  std::vector<uint16_t> image;
};

const char* dtype_name(int32_t dtype) { return dtype == FUSEPROOF_DTYPE_BF16 ? "bf16" : "fp16"; }

size_t thread_count() { return std::max(1u, std::thread::hardware_concurrency()); }

/// Runs fn(worker, lo, hi) over [0, n) on every hardware thread.
template <typename Fn>
void parallel_for(size_t n, Fn fn) {
  const size_t threads = thread_count();
  std::vector<std::thread> pool;
  for (size_t w = 0; w < threads; ++w) pool.emplace_back([&, w] { fn(w, n * w / threads, n * (w + 1) / threads); });
  for (auto& t : pool) t.join();
}

std::string one_line(const py::error_already_set& e) {
  std::string s = e.what();
  const auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

}  // namespace

struct PythonRunner::Images {
  HostImage x, bias, out;
};

std::string inexpressible_reason(const audit::CallSpec& s) {
  if (s.dtype != FUSEPROOF_DTYPE_BF16 && s.dtype != FUSEPROOF_DTYPE_FP16)
    return "dtype code " + std::to_string(s.dtype) + " (the front end calls a torch op at bf16 and fp16 only)";
  if (s.rows < 0 || s.width < 0)
    return "shape rows=" + std::to_string(s.rows) + ",width=" + std::to_string(s.width) + " (negative)";
  if (s.width > 0 && s.rows > INT64_MAX / 2 / s.width) return "rows * width overflowing int64";
  if (s.null_x || s.null_bias || s.null_out) return "a null pointer";
  if ((s.x_misalign | s.bias_misalign | s.out_misalign) & 1u) return "a pointer to half an element";
  const size_t n = size_t(s.rows * s.width);
  if (s.x.size() < n || s.bias.size() < size_t(s.width) || s.out_elems < n)
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

void PythonRunner::run(Images& im, int64_t rows, int64_t width, int32_t dtype, const std::string& call, int* rc,
                       std::string* message, std::string* fault, bool* subject_fault) {
  py::gil_scoped_acquire gil;
  audit::watch_begin(call);
  try {
    const py::tuple t = bridge_.attr("call")(im.x.view(), im.x.offset, im.bias.view(), im.bias.offset, im.out.view(),
                                             im.out.offset, rows, width, dtype_name(dtype), size_t(rows * width));
    *rc = t[0].cast<int>();
    *message = t[1].cast<std::string>();
    *fault = t[2].cast<std::string>();
    // A device error found after the subject's call (a sticky CUDA error) is the subject's.
    *subject_fault = !fault->empty();
  } catch (const py::error_already_set& e) {
    *fault = "fuseproof._bridge: " + one_line(e);
  }
  audit::watch_end();
}

audit::CallOutcome PythonRunner::call(const audit::CallSpec& s) {
  audit::CallOutcome o;
  o.out.assign(s.out_elems, kPoison);
  if (const std::string why = inexpressible_reason(s); !why.empty()) {
    o.rc = 1;
    o.not_applicable = true;
    o.message = "not applicable to a Python subject: " + why + " cannot be passed as torch tensors";
    return o;
  }
  Images im{HostImage(s.x.data(), s.x.size(), s.x_misalign / 2, kPoison ^ 0x1111),
            HostImage(s.bias.data(), s.bias.size(), s.bias_misalign / 2, kPoison ^ 0x2222),
            HostImage(s.out_elems, s.out_misalign / 2, kPoison)};
  const std::vector<uint16_t> x_before = im.x.image, bias_before = im.bias.image;
  run(im, s.rows, s.width, s.dtype, audit::describe_call(s), &o.rc, &o.message, &o.fault, &o.subject_fault);
  std::copy(im.out.data(), im.out.data() + s.out_elems, o.out.begin());
  o.guard_writes = im.out.guard_writes(kPoison);
  o.inputs_intact = im.x.image == x_before && im.bias.image == bias_before;
  return o;
}

audit::LargeOutcome PythonRunner::large_call(const audit::LargeSpec& s, const audit::ChunkCheck& check) {
  audit::LargeOutcome o;
  const bool bf16 = s.dtype == FUSEPROOF_DTYPE_BF16;
  const size_t n = size_t(s.rows) * size_t(s.width);
  Images im{HostImage(n, 0, kPoison ^ 0x1111), HostImage(size_t(s.width), 0, kPoison ^ 0x2222),
            HostImage(n, 0, kPoison)};
  uint16_t* x = im.x.data();
  uint16_t* b = im.bias.data();
  parallel_for(n, [&](size_t, size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) x[i] = audit::counter_pattern(bf16, s.seed, i);
  });
  for (size_t c = 0; c < size_t(s.width); ++c) b[c] = audit::counter_pattern(bf16, s.seed ^ audit::kBiasSalt, c);
  run(im, s.rows, s.width, s.dtype,
      "rows=" + std::to_string(s.rows) + ",width=" + std::to_string(s.width) + ",dtype=" + std::to_string(s.dtype) +
          ",x+0,bias+0,out+0",
      &o.rc, &o.message, &o.fault, &o.subject_fault);
  o.guard_writes = im.out.guard_writes(kPoison);
  // Inputs: regenerated rather than kept twice; the guards of x and bias must keep their fills.
  std::vector<uint64_t> changed(thread_count(), 0);
  parallel_for(n, [&](size_t w, size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i) changed[w] += x[i] != audit::counter_pattern(bf16, s.seed, i);
  });
  for (uint64_t k : changed) o.inputs_changed += k;
  for (size_t c = 0; c < size_t(s.width); ++c)
    o.inputs_changed += b[c] != audit::counter_pattern(bf16, s.seed ^ audit::kBiasSalt, c);
  o.inputs_changed += (im.x.guard_writes(kPoison ^ 0x1111) + im.bias.guard_writes(kPoison ^ 0x2222) + 1) / 2;
  if (o.rc != 0 || !o.fault.empty()) return o;
  const uint16_t* out = im.out.data();
  const int64_t chunk = std::max<int64_t>(1, (int64_t(1) << 24) / s.width);
  for (int64_t r0 = 0; r0 < s.rows; r0 += chunk)
    if (!check(r0, std::min(chunk, s.rows - r0), out + size_t(r0) * size_t(s.width))) break;
  return o;
}

uint64_t PythonRunner::memory_available() const {
  const long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  uint64_t host = pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
  if (!cuda_) return host;
  py::gil_scoped_acquire gil;
  try {
    const uint64_t device_free = bridge_.attr("device_free_bytes")().cast<uint64_t>();
    return std::min(host, device_free / 2);
  } catch (const py::error_already_set&) {
    return host;
  }
}

audit::DomainBlock PythonRunner::domain_block(int32_t dtype, const std::vector<uint16_t>& biases) {
  audit::DomainBlock d;
  d.out_canonical.assign(size_t(65536) * biases.size(), kPoison);
  std::vector<uint16_t> b(biases);
  py::gil_scoped_acquire gil;
  audit::watch_begin("rows=65536,width=" + std::to_string(b.size()) + ",dtype=" + std::to_string(dtype) +
                     ",x+0,bias+0,out+0");
  try {
    auto bv = py::memoryview::from_memory(b.data(), py::ssize_t(b.size() * 2), /*readonly=*/false);
    auto ov = py::memoryview::from_memory(d.out_canonical.data(), py::ssize_t(d.out_canonical.size() * 2), false);
    const py::tuple t = bridge_.attr("domain")(bv, ov, dtype_name(dtype));
    d.rc = t[0].cast<int>();
    d.message = t[1].cast<std::string>();
    d.fault = t[2].cast<std::string>();
    d.subject_fault = !d.fault.empty();
  } catch (const py::error_already_set& e) {
    d.fault = "fuseproof._bridge: " + one_line(e);
  }
  audit::watch_end();
  if (b != biases && d.fault.empty() && d.rc == 0) {
    d.rc = 1;
    d.message = "subject modified bias";
  }
  return d;
}

}  // namespace fuseproof::python
