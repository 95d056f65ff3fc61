// quant_call.cpp: building a quantization op's calls from its inputs' layouts, their ABI form, and reading the codes
// and scales tensors back (kernels/fuseproof_kernel_abi.h, version 4).
#include "audit/quant_call.h"

#include <cstdio>
#include <cstring>

#include "reference/dtype.h"
#include "reference/op_spec.h"

namespace fuseproof::audit {

QuantCallSpec make_quant_call(const ref::QuantOpSpec& op, ref::QuantContract contract, int64_t rows, int64_t width,
                              int32_t dtype, ref::ScaleLayout layout) {
  QuantCallSpec s;
  s.op = &op;
  s.contract = contract;
  s.dtype = dtype;
  s.rows = rows;
  s.width = width;
  s.layout = layout;
  // A fused op's inputs are laid out as its family op's (a packed gate|up pair, a row-broadcast bias); a quantizer
  // alone reads one elementwise x.
  if (const ref::OpSpec* fam = op.activation.family_op.empty() ? nullptr : ref::find_op(op.activation.family_op)) {
    s.buffer_names = fam->buffers();
    for (int k = 0; k < int(s.buffer_names.size()); ++k)
      s.buffers.emplace_back(size_t(fam->buffer_rows(k, rows, 1) * fam->buffer_row_elems(k, width)), 0);
    s.inputs = layout_views(*fam, width);
  } else {
    s.buffer_names = {op.inputs.empty() ? std::string("x") : op.inputs[0].name};
    s.buffers.emplace_back(size_t(rows * width), 0);
    InputView v;
    v.stride[0] = width;
    s.inputs = {v};
  }
  const ref::QuantContractSpec* c = op.contract(contract);
  if (c) s.scalars.assign(c->scalars.size(), 1.0f);
  const int64_t blocks = (width + op.block_size - 1) / op.block_size;
  s.codes_bytes = size_t(op.element_format == ref::ElementFormat::kE2m1 ? rows * width / 2 : rows * width);
  const int64_t cell = c && c->scale_format != ref::ScaleFormat::kE4m3 ? 4 : 1;
  s.scale_bytes = size_t(ref::scale_tensor_size(layout, rows, blocks) * cell);
  return s;
}

fuseproof_call_t abi_quant_call(const QuantCallSpec& s, const std::vector<uint8_t*>& buffer_data, uint8_t* codes,
                                uint8_t* scales, void* stream) {
  fuseproof_call_t c = abi_call_common(s, buffer_data, stream);
  c.out = s.null_codes ? nullptr : codes + s.codes_misalign;
  c.group_rows = 1;
  c.scales = s.null_scales ? nullptr : scales + s.scales_misalign;
  c.scale_layout = s.scale_layout_override >= 0 ? s.scale_layout_override : int32_t(s.layout);
  c.n_scalars = s.n_scalars_override >= 0 ? s.n_scalars_override : int32_t(s.scalars.size());
  for (size_t j = 0; j < s.scalars.size() && j < FUSEPROOF_MAX_SCALARS; ++j) c.scalars[j] = s.scalars[j];
  return c;
}

std::string describe_quant_call(const QuantCallSpec& s) {
  std::string d = "rows=" + std::to_string(s.rows) + ",width=" + std::to_string(s.width) + ",dtype=" +
                  std::to_string(s.dtype) + ",layout=" +
                  (s.scale_layout_override >= 0 ? std::to_string(s.scale_layout_override)
                                                : std::string(ref::scale_layout_name(s.layout)));
  const ref::QuantContractSpec* c = s.op ? s.op->contract(s.contract) : nullptr;
  for (size_t j = 0; j < s.scalars.size(); ++j) {
    char b[48];
    std::snprintf(b, sizeof b, "=0x%08X", ref::f32_bits(s.scalars[j]));
    d += "," + (c && j < c->scalars.size() ? c->scalars[j] : "scalar" + std::to_string(j)) + b;
  }
  for (int i = 0; s.op && i < int(s.inputs.size()); ++i) {
    const std::string name = i < int(s.op->inputs.size()) ? s.op->inputs[size_t(i)].name : "input" + std::to_string(i);
    d += "," + name + (s.null_of(i) ? "=null" : "+" + std::to_string(s.misalign_of(i)));
  }
  d += s.null_codes ? ",codes=null" : ",codes+" + std::to_string(s.codes_misalign);
  d += s.null_scales ? ",scales=null" : ",scales+" + std::to_string(s.scales_misalign);
  if (s.n_inputs_override >= 0) d += ",n_inputs=" + std::to_string(s.n_inputs_override);
  if (s.n_scalars_override >= 0) d += ",n_scalars=" + std::to_string(s.n_scalars_override);
  return d;
}

uint8_t code_at(const ref::QuantOpSpec& op, const uint8_t* codes, int64_t width, int64_t r, int64_t c) {
  if (op.element_format == ref::ElementFormat::kE4m3) return codes[r * width + c];
  // | high nibble: element 2j + 1 | low nibble: element 2j |
  const uint8_t byte = codes[(r * width + c) / 2];
  return uint8_t(c & 1 ? byte >> 4 : byte & 0x0F);
}

ref::QuantScale scale_at(const ref::QuantContractSpec& c, ref::ScaleLayout layout, const uint8_t* scales, int64_t rows,
                         int64_t blocks, int64_t r, int64_t k) {
  const int64_t cell = ref::scale_offset(layout, r, k, rows, blocks);
  ref::QuantScale s;
  if (c.scale_format == ref::ScaleFormat::kE4m3) {
    s.byte = scales[cell];
    s.value = ref::e4m3_to_f32(s.byte);
  } else {
    uint32_t u = 0;
    for (int b = 0; b < 4; ++b) u |= uint32_t(scales[cell * 4 + b]) << (8 * b);
    s.value = ref::f32_from_bits(u);
  }
  return s;
}

}  // namespace fuseproof::audit
