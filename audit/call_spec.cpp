// call_spec.cpp: building calls from the op's layout, and their ABI form.
#include "audit/call_spec.h"

#include <cstdio>

namespace fuseproof::audit {

std::vector<InputView> layout_views(const ref::OpSpec& op, int64_t width) {
  std::vector<InputView> v;
  for (int i = 0; i < int(op.inputs.size()); ++i) {
    InputView iv;
    iv.buffer = op.buffer_of(i);
    switch (op.inputs[size_t(i)].layout) {
      case ref::Layout::kElementwise: iv.stride[0] = width; break;
      case ref::Layout::kGroupBroadcast:
        iv.stride[0] = width;
        iv.grouped = true;
        break;
      case ref::Layout::kRowBroadcast: iv.stride[0] = 0; break;
      case ref::Layout::kPackedFirst: iv.stride[0] = 2 * width; break;
      case ref::Layout::kPackedSecond:
        iv.stride[0] = 2 * width;
        iv.offset = width;
        break;
    }
    v.push_back(iv);
  }
  return v;
}

CallSpec make_call(const ref::OpSpec& op, int64_t rows, int64_t width, int32_t dtype, int64_t group_rows) {
  CallSpec s;
  s.op = &op;
  s.rows = rows;
  s.width = width;
  s.dtype = dtype;
  s.group_rows = op.has_groups() ? group_rows : 1;
  s.buffer_names = op.buffers();
  for (int k = 0; k < int(s.buffer_names.size()); ++k) {
    const int64_t per_row = op.buffer_row_elems(k, width);
    s.buffers.emplace_back(size_t(op.buffer_rows(k, rows, s.group_rows) * per_row), 0);
  }
  s.inputs = layout_views(op, width);
  s.out_elems = size_t(rows * width);
  return s;
}

fuseproof_call_t abi_call(const CallSpec& s, const std::vector<uint8_t*>& buffer_data, uint8_t* out, void* stream) {
  fuseproof_call_t c = abi_call_common(s, buffer_data, stream);
  c.out = s.null_out ? nullptr : out + s.out_misalign;
  c.group_rows = s.group_rows;
  return c;
}

std::string describe_call(const CallSpec& s) {
  std::string d = "rows=" + std::to_string(s.rows) + ",width=" + std::to_string(s.width) + ",dtype=" +
                  std::to_string(s.dtype);
  if (s.op && s.op->has_groups()) d += ",group_rows=" + std::to_string(s.group_rows);
  for (int i = 0; s.op && i < int(s.inputs.size()); ++i) {
    d += "," + s.op->inputs[size_t(i)].name + (s.null_of(i) ? "=null" : "+" + std::to_string(s.misalign_of(i)));
  }
  d += s.null_out ? ",out=null" : ",out+" + std::to_string(s.out_misalign);
  if (s.n_inputs_override >= 0) d += ",n_inputs=" + std::to_string(s.n_inputs_override);
  return d;
}

std::string describe_element(const ref::OpSpec& op, int64_t r, int64_t c, const uint16_t* in) {
  std::string s = "[r=" + std::to_string(r) + ",c=" + std::to_string(c) + "]";
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    char b[32];
    std::snprintf(b, sizeof b, "=0x%04X", in[i]);
    s += " " + op.inputs[i].name + b;
  }
  return s;
}

}  // namespace fuseproof::audit
