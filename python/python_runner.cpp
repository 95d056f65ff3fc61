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

/// The shape of buffer k as a tensor: [width] for a broadcast row, else [rows, elements per row]. For an op with
/// group-broadcast inputs, DiT's 3-D shapes: [rows / group_rows, 1, width] for a group-broadcast buffer (so eager
/// broadcasting works), [rows / group_rows, group_rows, width] for the others.
std::vector<int64_t> buffer_shape(const ref::OpSpec& op, int k, int64_t rows, int64_t width, int64_t group_rows) {
  const int64_t per_row = op.buffer_row_elems(k, width);
  if (op.buffer_broadcast(k)) return {per_row};
  if (op.has_groups()) {
    const int64_t groups = group_rows > 0 ? rows / group_rows : 0;
    return {groups, op.buffer_grouped(k) ? 1 : group_rows, per_row};
  }
  return {rows, per_row};
}

/// The shape of out: [rows, width], or [rows / group_rows, group_rows, width] for an op with group-broadcast inputs.
std::vector<int64_t> out_shape(const ref::OpSpec& op, int64_t rows, int64_t width, int64_t group_rows) {
  if (op.has_groups()) return {group_rows > 0 ? rows / group_rows : 0, group_rows, width};
  return {rows, width};
}

int64_t elements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

py::tuple to_tuple(const std::vector<int64_t>& shape) {
  py::tuple t(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) t[i] = py::int_(shape[i]);
  return t;
}

}  // namespace

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
    if (why.empty() && s.op->has_groups() && (s.group_rows < 1 || s.rows % s.group_rows != 0))
      why = "group_rows " + std::to_string(s.group_rows) + " with rows " + std::to_string(s.rows) +
            " (the subject takes [rows / group_rows, group_rows, width] tensors)";
    for (size_t k = 0; why.empty() && k < s.buffers.size(); ++k)
      if (int64_t(s.buffers[k].size()) < elements(buffer_shape(*s.op, int(k), s.rows, s.width, s.group_rows)))
        why = "buffers smaller than the shape";
  }
  return why.empty() ? "" : "not applicable to a Python subject: " + why + " cannot be passed as torch tensors";
}

std::string PythonRunner::call_bridge(std::vector<audit::GuardedImage*>& buffers,
                                      const std::vector<int64_t>& data_offsets,
                                      const std::vector<std::vector<int64_t>>& shapes, audit::GuardedImage& out,
                                      const std::vector<int64_t>& oshape, int32_t dtype, const std::string& call,
                                      int* rc, std::string* message) {
  py::gil_scoped_acquire gil;
  audit::watch_begin(call);
  std::string fault;
  try {
    py::list bufs;
    for (size_t k = 0; k < buffers.size(); ++k)
      bufs.append(py::make_tuple(view_of(*buffers[k]), data_offsets[k], to_tuple(shapes[k])));
    const py::tuple t =
        bridge_.attr("call")(bufs, py::make_tuple(view_of(out), out.data_offset() / 2, to_tuple(oshape)),
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

/// The data offset (in elements) of each buffer of a call on `im`, misaligned probes applied.
std::vector<int64_t> data_offsets(const audit::CallSpec& s, const audit::CallImages& im) {
  std::vector<int64_t> offsets;
  for (size_t k = 0; k < im.buffers.size(); ++k) {
    int64_t off = int64_t(im.buffers[k].data_offset() / 2);
    for (int i = 0; i < int(s.inputs.size()); ++i)
      if (s.inputs[size_t(i)].buffer == int(k)) off += s.misalign_of(i) / 2;  // an input with a buffer of its own
    offsets.push_back(off);
  }
  return offsets;
}

std::string PythonRunner::run(const audit::CallSpec& s, audit::CallImages& im, audit::CallOutcome* o) {
  std::vector<audit::GuardedImage*> bufs;
  const std::vector<int64_t> offsets = data_offsets(s, im);
  std::vector<std::vector<int64_t>> shapes;
  for (size_t k = 0; k < im.buffers.size(); ++k) {
    bufs.push_back(&im.buffers[k]);
    shapes.push_back(buffer_shape(*s.op, int(k), s.rows, s.width, s.group_rows));
  }
  const std::string fault = call_bridge(bufs, offsets, shapes, im.out, out_shape(*s.op, s.rows, s.width, s.group_rows),
                                        s.dtype, audit::describe_call(s), &o->rc, &o->message);
  // A device error found after the subject's call (a sticky CUDA error) is the subject's.
  o->subject_fault = !fault.empty() && fault.rfind("fuseproof._bridge", 0) != 0;
  return fault;
}

py::tuple PythonRunner::call_args(const audit::CallSpec& s, audit::CallImages& im) {
  const std::vector<int64_t> offsets = data_offsets(s, im);
  py::list bufs;
  for (size_t k = 0; k < im.buffers.size(); ++k)
    bufs.append(py::make_tuple(view_of(im.buffers[k]), offsets[k],
                               to_tuple(buffer_shape(*s.op, int(k), s.rows, s.width, s.group_rows))));
  return py::make_tuple(bufs, py::make_tuple(view_of(im.out), im.out.data_offset() / 2,
                                             to_tuple(out_shape(*s.op, s.rows, s.width, s.group_rows))),
                        dtype_name(s.dtype));
}

py::list PythonRunner::call_list(const std::vector<audit::CallSpec>& specs, std::vector<audit::CallImages>& images) {
  py::list calls;
  for (size_t i = 0; i < specs.size(); ++i) calls.append(call_args(specs[i], images[i]));
  return calls;
}

namespace {

/// A bridge fault is the backend's when the bridge itself failed, else (a device error after the call) the subject's.
bool subject_fault_of(const std::string& fault) {
  return !fault.empty() && fault.rfind("fuseproof._bridge", 0) != 0;
}

}  // namespace

std::optional<audit::ConcurrentOutcome> PythonRunner::call_concurrent(const std::vector<audit::CallSpec>& specs,
                                                                      int lanes) {
  py::gil_scoped_acquire gil;
  std::vector<audit::CallImages> images = audit::images_of(specs);
  const py::list calls = call_list(specs, images);
  audit::ConcurrentOutcome co;
  co.calls.resize(specs.size());
  co.spans.resize(specs.size());
  audit::watch_begin(std::to_string(specs.size()) + " calls on " + std::to_string(lanes) + " torch streams");
  try {
    const py::tuple t = bridge_.attr("call_concurrent")(calls, lanes);
    const py::list results = t[0], spans = t[1];
    co.fault = t[2].cast<std::string>();
    co.lanes = t[3].cast<std::string>();
    for (size_t i = 0; i < specs.size() && i < results.size(); ++i) {
      const py::tuple r = results[i];
      co.calls[i].rc = r[0].cast<int>();
      co.calls[i].message = r[1].cast<std::string>();
    }
    for (size_t i = 0; i < specs.size() && i < spans.size(); ++i) {
      const py::tuple sp = spans[i];
      co.spans[i] = {sp[0].cast<double>(), sp[1].cast<double>()};
    }
  } catch (const py::error_already_set& e) {
    co.fault = "fuseproof._bridge: " + one_line(e);
  } catch (const py::cast_error& e) {
    co.fault = std::string("fuseproof._bridge: ") + e.what();
  }
  audit::watch_end();
  co.subject_fault = subject_fault_of(co.fault);
  if (co.fault.empty())
    for (size_t i = 0; i < specs.size(); ++i) images[i].finish(specs[i], co.calls[i]);
  return co;
}

std::optional<audit::GraphOutcome> PythonRunner::call_graph(const std::vector<std::vector<audit::CallSpec>>& sets) {
  if (!cuda_ || sets.empty()) return std::nullopt;
  py::gil_scoped_acquire gil;
  std::vector<std::vector<audit::CallImages>> images;
  py::list py_sets;
  for (const auto& set : sets) {
    images.push_back(audit::images_of(set));
    py_sets.append(call_list(set, images.back()));
  }
  // The warm-ups run on images of their own (sets[0]'s contents), as the bridge's call() of each.
  std::vector<audit::CallImages> warm_images = audit::images_of(sets[0]);
  const py::list warm_calls = call_list(sets[0], warm_images);
  audit::GraphOutcome g;
  audit::watch_begin("warm-up, capture and " + std::to_string(sets.size()) + " replays of " +
                     std::to_string(sets[0].size()) + " calls in a torch.cuda.graph");
  try {
    const py::tuple t = bridge_.attr("call_graph")(py_sets, warm_calls);
    const py::list warm = t[0], replays = t[2];
    g.capture_error = t[1].cast<std::string>();
    g.graph = t[3].cast<std::string>();
    g.fault = t[4].cast<std::string>();
    for (size_t i = 0; i < warm.size() && i < warm_images.size(); ++i) {
      const py::tuple w = warm[i];
      audit::CallOutcome o;
      o.rc = w[0].cast<int>();
      o.message = w[1].cast<std::string>();
      o.fault = w[2].cast<std::string>();
      o.subject_fault = subject_fault_of(o.fault);
      if (o.fault.empty()) warm_images[i].finish(sets[0][i], o);
      g.warmup.push_back(std::move(o));
    }
    for (size_t k = 0; k < replays.size() && k < sets.size(); ++k) {
      const py::list calls = replays[k];
      g.replays.emplace_back();
      for (size_t i = 0; i < calls.size() && i < sets[k].size(); ++i) {
        const py::tuple r = calls[i];
        audit::CallOutcome o;
        o.rc = r[0].cast<int>();
        o.message = r[1].cast<std::string>();
        images[k][i].finish(sets[k][i], o);
        g.replays.back().push_back(std::move(o));
      }
    }
  } catch (const py::error_already_set& e) {
    g.fault = "fuseproof._bridge: " + one_line(e);
  } catch (const py::cast_error& e) {
    g.fault = std::string("fuseproof._bridge: ") + e.what();
  }
  audit::watch_end();
  g.subject_fault = subject_fault_of(g.fault);
  return g;
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
  const int64_t group_rows = s.op->has_groups() ? s.group_rows : 1;
  for (size_t k = 0; k < images.size(); ++k) {
    bufs.push_back(&images[k]);
    offsets.push_back(int64_t(images[k].data_offset() / 2));
    shapes.push_back(buffer_shape(*s.op, int(k), s.rows, s.width, group_rows));
  }
  audit::CallSpec view = audit::make_call(*s.op, 0, s.width, s.dtype, group_rows);
  view.rows = s.rows;
  o.fault = call_bridge(bufs, offsets, shapes, out, out_shape(*s.op, s.rows, s.width, group_rows), s.dtype,
                        audit::describe_call(view), &o.rc, &o.message);
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

uint64_t PythonRunner::memory_available() const { return capped_by_device(audit::host_memory_available()); }

}  // namespace fuseproof::python
