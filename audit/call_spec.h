// call_spec.h: one call of an op as the audit builds it: the op's buffers and their contents, the strided view of each
// declared input, and how a rejection probe spoils them; the ABI call made from it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/fuseproof_kernel_abi.h"
#include "reference/op_spec.h"

namespace fuseproof::audit {

/// Element (r, c) of an input: buffer[offset + r * stride[0] + c * stride[1]].
struct InputView {
  int buffer = 0;
  int64_t offset = 0;
  int64_t stride[2] = {0, 1};
  bool grouped = false;  ///< group-broadcast: row r reads row r / CallSpec::group_rows
};

struct CallSpec {
  const ref::OpSpec* op = nullptr;
  int64_t rows = 0;
  int64_t width = 0;
  int32_t dtype = 0;
  int64_t group_rows = 1;                      ///< rows per row of a group-broadcast input (ABI version 3)
  std::vector<std::vector<uint16_t>> buffers;  ///< the op's buffers (OpSpec::buffers order), copied into the call
  std::vector<std::string> buffer_names;
  std::vector<InputView> inputs;               ///< one per declared input
  size_t out_elems = 0;                        ///< size of the out buffer
  // Rejection probes: bytes added to aligned pointers, null pointers, a wrong input count.
  std::vector<uint32_t> input_misalign;        ///< per input (empty: none)
  uint32_t out_misalign = 0;
  std::vector<bool> null_input;                ///< per input (empty: none)
  bool null_out = false;
  int32_t n_inputs_override = -1;              ///< >= 0: passed as n_inputs instead of the op's count

  /// The element (r, c) of input i (row r / group_rows of a group-broadcast input).
  uint16_t& at(int i, int64_t r, int64_t c) {
    const InputView& v = inputs[size_t(i)];
    return buffers[size_t(v.buffer)][size_t(v.offset + row_of(v, r) * v.stride[0] + c * v.stride[1])];
  }
  uint16_t at(int i, int64_t r, int64_t c) const {
    const InputView& v = inputs[size_t(i)];
    return buffers[size_t(v.buffer)][size_t(v.offset + row_of(v, r) * v.stride[0] + c * v.stride[1])];
  }
  int64_t row_of(const InputView& v, int64_t r) const { return v.grouped ? r / group_rows : r; }
  uint32_t misalign_of(int i) const { return input_misalign.empty() ? 0 : input_misalign[size_t(i)]; }
  bool null_of(int i) const { return !null_input.empty() && null_input[size_t(i)]; }
};

/// The views the op's layout gives a [rows, width] call (offsets and strides in elements of each buffer).
std::vector<InputView> layout_views(const ref::OpSpec& op, int64_t width);

/// A valid call of `op`: buffers sized for [rows, width] (rows * width, width for a broadcast row, rows * 2 * width
/// for a packed pair, rows / group_rows * width for a group-broadcast input), zero-filled, with the op's views; out
/// of rows * width. group_rows must divide rows (ops without group-broadcast inputs ignore it).
CallSpec make_call(const ref::OpSpec& op, int64_t rows, int64_t width, int32_t dtype, int64_t group_rows = 1);

/// What an ABI call takes from any spec (CallSpec and QuantCallSpec alike): struct_size, dtype, shape and stream, and
/// n_inputs and inputs[] from the spec's views once each buffer's data starts at buffer_data[k], with the spec's null
/// and misaligned input probes and its n_inputs override. The caller sets out and the fields of its own kind of call.
template <class Spec>
fuseproof_call_t abi_call_common(const Spec& s, const std::vector<uint8_t*>& buffer_data, void* stream) {
  fuseproof_call_t c{};
  c.struct_size = sizeof c;
  c.dtype = s.dtype;
  c.shape[0] = s.rows;
  c.shape[1] = s.width;
  c.stream = stream;
  c.n_inputs = s.n_inputs_override >= 0 ? s.n_inputs_override : int32_t(s.inputs.size());
  for (int i = 0; i < int(s.inputs.size()) && i < FUSEPROOF_MAX_INPUTS; ++i) {
    const InputView& v = s.inputs[size_t(i)];
    c.inputs[i].data = s.null_of(i) ? nullptr : buffer_data[size_t(v.buffer)] + v.offset * 2 + s.misalign_of(i);
    c.inputs[i].stride[0] = v.stride[0];
    c.inputs[i].stride[1] = v.stride[1];
  }
  return c;
}

/// The ABI call for `spec` once each buffer's data starts at buffer_data[k] and out at `out`; pointers of null and
/// misaligned probes applied. The error fields are left for Plugin::call.
fuseproof_call_t abi_call(const CallSpec& spec, const std::vector<uint8_t*>& buffer_data, uint8_t* out, void* stream);

/// "rows=R,width=W,dtype=D,x+M,bias+M,out+M" (+ which pointers are null, a wrong input count): the call's arguments
/// for a record.
std::string describe_call(const CallSpec& s);

/// "[r=3,c=4097] x=0x3F80 bias=0x3C00": where an element sits and its inputs, named as the op declares them.
std::string describe_element(const ref::OpSpec& op, int64_t r, int64_t c, const uint16_t* inputs);

}  // namespace fuseproof::audit
