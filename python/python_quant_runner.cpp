// python_quant_runner.cpp: the calls of a quantization subject written in Python, read back as the ABI's bytes.
#include "python/python_quant_runner.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include <unistd.h>

#include "audit/call_watch.h"
#include "audit/guarded_image.h"
#include "kernels/fuseproof_kernel_abi.h"

namespace py = pybind11;

namespace fuseproof::python {

namespace {

std::string one_line(const std::string& s) {
  const auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

/// n bytes of the poison pattern, as a GuardedImage's kPoison elements lie in memory (little-endian).
std::vector<uint8_t> poisoned(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t(audit::kPoison >> (8 * (i & 1)));
  return v;
}

bool any_true(const std::vector<bool>& v) { return std::find(v.begin(), v.end(), true) != v.end(); }

ref::Layout layout_of_buffer(const audit::QuantCallSpec& s, int k) {
  for (size_t i = 0; i < s.inputs.size() && i < s.op->inputs.size(); ++i)
    if (s.inputs[i].buffer == k) return s.op->inputs[i].layout;
  return ref::Layout::kElementwise;
}

}  // namespace

std::vector<int64_t> quant_buffer_shape(const audit::QuantCallSpec& s, int k) {
  switch (layout_of_buffer(s, k)) {
    case ref::Layout::kRowBroadcast: return {s.width};
    case ref::Layout::kPackedFirst:
    case ref::Layout::kPackedSecond: return {s.rows, 2 * s.width};
    default: return {s.rows, s.width};
  }
}

std::string PythonQuantRunner::inexpressible(const audit::QuantCallSpec& s) const {
  std::string why;
  if (s.dtype != FUSEPROOF_DTYPE_BF16 && s.dtype != FUSEPROOF_DTYPE_FP16)
    why = "dtype code " + std::to_string(s.dtype) + " (the front end calls a torch op at bf16 and fp16 only)";
  else if (s.rows < 1 || s.width < 1)  // a torch op computes an empty result; the ABI's refusal is a kernel's
    why = "shape rows=" + std::to_string(s.rows) + ",width=" + std::to_string(s.width) + " (empty or negative)";
  else if (s.width > 0 && s.rows > INT64_MAX / 4 / s.width)
    why = "rows * width overflowing int64";
  else if (any_true(s.null_input) || s.null_codes || s.null_scales)
    why = "a null pointer";
  else if (s.codes_misalign || s.scales_misalign ||
           std::any_of(s.input_misalign.begin(), s.input_misalign.end(), [](uint32_t m) { return m != 0; }))
    why = "a misaligned pointer (the subject takes whole tensors)";
  else if (s.n_inputs_override >= 0)
    why = "another input count (a Python subject takes its buffers as arguments)";
  else if (s.n_scalars_override >= 0)
    why = "another scalar count (a Python subject takes the contract's scalars as arguments)";
  else if (s.scale_layout_override >= 0)
    why = "a scale layout code of its own (a Python subject is told a layout by name)";
  else {
    for (size_t k = 0; why.empty() && k < s.buffers.size(); ++k) {
      int64_t n = 1;
      for (int64_t d : quant_buffer_shape(s, int(k))) n *= d;
      if (int64_t(s.buffers[k].size()) < n) why = "buffers smaller than the shape";
    }
  }
  if (!why.empty()) return "not applicable to a Python subject: " + why + " cannot be passed as torch tensors";
  py::gil_scoped_acquire gil;
  const char* layout = ref::scale_layout_name(s.layout);
  if (!bridge_.attr("writes_layout")(layout).cast<bool>())
    return std::string("not applicable to a Python subject: scale layout ") + layout +
           " (the subject's fuseproof_scale_layouts does not list it)";
  return "";
}

audit::QuantOutcome PythonQuantRunner::call(const audit::QuantCallSpec& s) {
  audit::QuantOutcome o;
  o.codes = poisoned(s.codes_bytes);
  o.scales = poisoned(s.scale_bytes);
  const std::string why = inexpressible(s);
  if (!why.empty()) {
    o.rc = 1;
    o.message = why;
    o.not_applicable = true;
    return o;
  }
  // The subject gets copies of the buffers (the call's own are the record of what it was given).
  std::vector<std::vector<uint16_t>> inputs = s.buffers;
  py::gil_scoped_acquire gil;
  audit::watch_begin(audit::describe_quant_call(s));
  try {
    py::list bufs;
    for (size_t k = 0; k < inputs.size(); ++k) {
      const auto shape = quant_buffer_shape(s, int(k));
      int64_t n = 1;
      for (int64_t d : shape) n *= d;
      py::tuple t(shape.size());
      for (size_t i = 0; i < shape.size(); ++i) t[i] = py::int_(shape[i]);
      bufs.append(py::make_tuple(
          py::memoryview::from_memory(inputs[k].data(), py::ssize_t(n * 2), /*readonly=*/false), t));
    }
    py::list scalars;
    for (float v : s.scalars) scalars.append(py::float_(double(v)));
    py::dict call;
    call["rows"] = s.rows;
    call["width"] = s.width;
    call["block"] = s.op->block_size;
    call["dtype"] = s.dtype == FUSEPROOF_DTYPE_BF16 ? "bf16" : "fp16";
    call["element"] = ref::element_format_name(s.op->element_format);
    const ref::QuantContractSpec* c = s.op->contract(s.contract);
    call["scale"] = c ? ref::scale_format_name(c->scale_format) : "e4m3";
    call["layout"] = ref::scale_layout_name(s.layout);
    const py::tuple r = bridge_.attr("call")(bufs, scalars, call);
    o.rc = r[0].cast<int>();
    o.message = r[1].cast<std::string>();
    o.fault = r[2].cast<std::string>();
    if (o.rc == 0 && o.fault.empty()) {
      const std::string codes = r[3].cast<std::string>(), scales = r[4].cast<std::string>();
      if (codes.size() != s.codes_bytes || scales.size() != s.scale_bytes) {
        o.fault = "fuseproof._quant_bridge: converted " + std::to_string(codes.size()) + " code bytes and " +
                  std::to_string(scales.size()) + " scale bytes, the call has " + std::to_string(s.codes_bytes) +
                  " and " + std::to_string(s.scale_bytes);
      } else {
        std::memcpy(o.codes.data(), codes.data(), codes.size());
        std::memcpy(o.scales.data(), scales.data(), scales.size());
      }
    }
  } catch (const py::error_already_set& e) {
    o.fault = "fuseproof._quant_bridge: " + one_line(e.what());
  } catch (const py::cast_error& e) {  // the bridge's answer was not (int, str, str, bytes, bytes)
    o.fault = std::string("fuseproof._quant_bridge: ") + e.what();
  }
  audit::watch_end();
  // A device error found after the subject's call (a sticky CUDA error) is the subject's.
  o.subject_fault = !o.fault.empty() && o.fault.rfind("fuseproof._quant_bridge", 0) != 0;
  for (size_t k = 0; k < inputs.size(); ++k)
    if (inputs[k] != s.buffers[k]) {
      o.inputs_intact = false;
      const std::string name = k < s.buffer_names.size() ? s.buffer_names[k] : "buffer " + std::to_string(k);
      o.modified += (o.modified.empty() ? "" : ", ") + name;
    }
  return o;
}

std::vector<audit::QuantOutcome> PythonQuantRunner::call_batch(const std::vector<audit::QuantCallSpec>& specs) {
  std::vector<audit::QuantOutcome> out;
  out.reserve(specs.size());
  for (const auto& s : specs) out.push_back(call(s));
  return out;
}

std::optional<audit::QuantLargeOutcome> PythonQuantRunner::large_call(const audit::QuantLargeSpec& s,
                                                                      const audit::QuantChunkCheck& check) {
  const audit::QuantCallSpec spec = s.rows_of(0, s.view.rows);
  const audit::QuantOutcome got = call(spec);
  if (got.not_applicable) return std::nullopt;  // the class names the shape as not run
  audit::QuantLargeOutcome o;
  o.rc = got.rc;
  o.message = got.message;
  o.fault = got.fault;
  o.subject_fault = got.subject_fault;
  o.guard_writes = got.guard_writes;
  o.inputs_changed = got.inputs_intact ? 0 : 1;  // the call names the buffers, not the elements
  if (o.rc != 0 || !o.fault.empty()) return o;
  const size_t row_codes = spec.codes_bytes / size_t(spec.rows), row_scales = spec.scale_bytes / size_t(spec.rows);
  const int64_t chunk = std::max<int64_t>(1, (int64_t(1) << 24) / spec.width);
  for (int64_t r0 = 0; r0 < spec.rows; r0 += chunk)
    if (!check(r0, std::min(chunk, spec.rows - r0), got.codes.data() + size_t(r0) * row_codes,
               got.scales.data() + size_t(r0) * row_scales))
      break;
  return o;
}

uint64_t PythonQuantRunner::memory_available() const {
  return capped_by_device(audit::host_memory_available() / 3);
}

}  // namespace fuseproof::python
