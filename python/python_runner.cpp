// python_runner.cpp: the bridge calls of a Python subject, on the audit's guarded images.
#include "python/python_runner.h"

#include <unistd.h>

#include <algorithm>
#include <climits>

#include "audit/call_watch.h"
#include "kernels/fuseproof_kernel_abi.h"

namespace py = pybind11;

namespace fuseproof::python {

namespace {

const char* dtype_name(int32_t dtype) { return dtype == FUSEPROOF_DTYPE_BF16 ? "bf16" : "fp16"; }

std::string one_line(const py::error_already_set& e) {
  std::string s = e.what();
  const auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

py::memoryview view_of(audit::GuardedImage& im) {
  return py::memoryview::from_memory(im.bytes(), py::ssize_t(im.size_bytes()), /*readonly=*/false);
}

/// The shape of buffer k as a tensor: [width] for a broadcast row, else [rows, elements per row].
std::vector<int64_t> buffer_shape(const ref::OpSpec& op, int k, int64_t rows, int64_t width) {
  const int64_t per_row = op.buffer_row_elems(k, width);
  if (op.buffer_broadcast(k)) return {per_row};
  return {rows, per_row};
}

}  // namespace

PythonRunner::PythonRunner(py::object bridge, bool cuda) : bridge_(std::move(bridge)), cuda_(cuda) {
  py::gil_scoped_acquire gil;
  hardware_ = bridge_.attr("hardware")().cast<std::string>();
  arch_ = bridge_.attr("arch")().cast<std::string>();
  if (!cuda_) hardware_ += "; host " + audit::host_cpu_description();
}

PythonRunner::~PythonRunner() {
  py::gil_scoped_acquire gil;
  bridge_ = py::object();
}

std::string PythonRunner::inexpressible(const audit::CallSpec& s) const {
  std::string why;
  if (s.dtype != FUSEPROOF_DTYPE_BF16 && s.dtype != FUSEPROOF_DTYPE_FP16)
    why = "dtype code " + std::to_string(s.dtype) + " (the front end calls a torch op at bf16 and fp16 only)";
  else if (s.rows < 0 || s.width < 0)
    why = "shape rows=" + std::to_string(s.rows) + ",width=" + std::to_string(s.width) + " (negative)";
  else if (s.width > 0 && s.rows > INT64_MAX / 4 / s.width)
    why = "rows * width overflowing int64";
  else if (s.null_out || std::find(s.null_input.begin(), s.null_input.end(), true) != s.null_input.end())
    why = "a null pointer";
  else if (s.n_inputs_override >= 0)
    why = "another input count (a Python subject takes its buffers as arguments)";
  else if (s.out_misalign & 1u)
    why = "a pointer to half an element";
  else {
    for (int i = 0; i < int(s.input_misalign.size()); ++i) {
      if (!s.input_misalign[size_t(i)]) continue;
      const ref::Layout l = s.op->inputs[size_t(i)].layout;
      if ((s.input_misalign[size_t(i)] & 1u) || l == ref::Layout::kPackedFirst || l == ref::Layout::kPackedSecond)
        why = "a misaligned " + s.op->inputs[size_t(i)].name + " pointer (the subject takes whole buffers)";
    }
    for (size_t k = 0; why.empty() && k < s.buffers.size(); ++k)
      if (s.rows >= 0 && int64_t(s.buffers[k].size()) < buffer_shape(*s.op, int(k), s.rows, s.width).back() *
                                                             (s.op->buffer_broadcast(int(k)) ? 1 : s.rows))
        why = "buffers smaller than the shape";
  }
  return why.empty() ? "" : "not applicable to a Python subject: " + why + " cannot be passed as torch tensors";
}

std::string PythonRunner::call_bridge(std::vector<audit::GuardedImage*>& buffers,
                                      const std::vector<int64_t>& data_offsets,
                                      const std::vector<std::vector<int64_t>>& shapes, audit::GuardedImage& out,
                                      int64_t rows, int64_t width, int32_t dtype, const std::string& call, int* rc,
                                      std::string* message) {
  py::gil_scoped_acquire gil;
  audit::watch_begin(call);
  std::string fault;
  try {
    py::list bufs;
    for (size_t k = 0; k < buffers.size(); ++k) {
      py::tuple shape(shapes[k].size());
      for (size_t i = 0; i < shapes[k].size(); ++i) shape[i] = py::int_(shapes[k][i]);
      bufs.append(py::make_tuple(view_of(*buffers[k]), data_offsets[k], shape));
    }
    const py::tuple t = bridge_.attr("call")(bufs, py::make_tuple(view_of(out), out.data_offset() / 2), rows, width,
                                             dtype_name(dtype));
    *rc = t[0].cast<int>();
    *message = t[1].cast<std::string>();
    fault = t[2].cast<std::string>();
  } catch (const py::error_already_set& e) {
    fault = "fuseproof._bridge: " + one_line(e);
  } catch (const py::cast_error& e) {  // the bridge's answer was not (int, str, str)
    fault = std::string("fuseproof._bridge: ") + e.what();
  }
  audit::watch_end();
  return fault;
}

std::string PythonRunner::run(const audit::CallSpec& s, audit::CallImages& im, audit::CallOutcome* o) {
  std::vector<audit::GuardedImage*> bufs;
  std::vector<int64_t> offsets;
  std::vector<std::vector<int64_t>> shapes;
  for (size_t k = 0; k < im.buffers.size(); ++k) {
    bufs.push_back(&im.buffers[k]);
    int64_t off = int64_t(im.buffers[k].data_offset() / 2);
    for (int i = 0; i < int(s.inputs.size()); ++i)
      if (s.inputs[size_t(i)].buffer == int(k)) off += s.misalign_of(i) / 2;  // an input with a buffer of its own
    offsets.push_back(off);
    shapes.push_back(buffer_shape(*s.op, int(k), s.rows, s.width));
  }
  const std::string fault = call_bridge(bufs, offsets, shapes, im.out, s.rows, s.width, s.dtype,
                                        audit::describe_call(s), &o->rc, &o->message);
  // A device error found after the subject's call (a sticky CUDA error) is the subject's.
  o->subject_fault = !fault.empty() && fault.rfind("fuseproof._bridge", 0) != 0;
  return fault;
}

audit::LargeOutcome PythonRunner::large_call(const audit::LargeSpec& s, const audit::ChunkCheck& check) {
  audit::LargeOutcome o;
  const size_t n = size_t(s.rows) * size_t(s.width);
  std::vector<audit::GuardedImage> images;
  std::vector<uint16_t*> data;
  for (int k = 0; k < int(s.op->buffers().size()); ++k) {
    images.emplace_back(s.buffer_elems(k), audit::input_guard_fill(k));
    data.push_back(reinterpret_cast<uint16_t*>(images.back().data()));
  }
  audit::fill_counter_buffers(s, data);
  audit::GuardedImage out(n, audit::kPoison);
  std::vector<audit::GuardedImage*> bufs;
  std::vector<int64_t> offsets;
  std::vector<std::vector<int64_t>> shapes;
  for (size_t k = 0; k < images.size(); ++k) {
    bufs.push_back(&images[k]);
    offsets.push_back(int64_t(images[k].data_offset() / 2));
    shapes.push_back(buffer_shape(*s.op, int(k), s.rows, s.width));
  }
  audit::CallSpec view = audit::make_call(*s.op, 0, s.width, s.dtype);
  view.rows = s.rows;
  o.fault = call_bridge(bufs, offsets, shapes, out, s.rows, s.width, s.dtype, audit::describe_call(view), &o.rc,
                        &o.message);
  o.subject_fault = !o.fault.empty() && o.fault.rfind("fuseproof._bridge", 0) != 0;
  o.guard_writes = out.guard_writes();
  std::vector<const uint16_t*> cdata(data.begin(), data.end());
  o.inputs_changed = audit::count_counter_changes(s, cdata);
  for (const auto& im : images) o.inputs_changed += (im.guard_writes() + 1) / 2;
  if (o.rc != 0 || !o.fault.empty()) return o;
  const uint16_t* result = out.elems();
  const int64_t chunk = std::max<int64_t>(1, (int64_t(1) << 24) / s.width);
  for (int64_t r0 = 0; r0 < s.rows; r0 += chunk)
    if (!check(r0, std::min(chunk, s.rows - r0), result + size_t(r0) * size_t(s.width))) break;
  return o;
}

std::string PythonRunner::buffers_per_call() const {
  if (!cuda_)
    return "every call on new guarded host images (allocated per call), wrapped as torch tensors without a copy";
  return "every call on new guarded host images, copied by the bridge into new device tensors (torch's caching "
         "allocator may hand back an earlier call's addresses)";
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

}  // namespace fuseproof::python
