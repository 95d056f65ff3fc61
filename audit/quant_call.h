// quant_call.h: one call of a quantization op (reference/quant_spec.h) as the audit builds it: the inputs' buffers
// and views, the contract's scalars, the codes and scales tensors' sizes and layout, the rejection probes; and its
// ABI form (kernels/fuseproof_kernel_abi.h, version 4).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "audit/call_spec.h"
#include "kernels/fuseproof_kernel_abi.h"
#include "reference/quant_block.h"
#include "reference/quant_spec.h"

namespace fuseproof::audit {

struct QuantCallSpec {
  const ref::QuantOpSpec* op = nullptr;
  ref::QuantContract contract = ref::QuantContract::kVllmRef;  ///< fixes the scalars and the scale format
  int32_t dtype = 0;                           ///< FUSEPROOF_DTYPE_*
  int64_t rows = 0;
  int64_t width = 0;                           ///< T values per row fed to the quantizer (a multiple of block_size)
  ref::ScaleLayout layout = ref::ScaleLayout::kLinear;
  std::vector<std::vector<uint16_t>> buffers;  ///< the inputs' buffers (a packed gate|up pair is one [rows, 2w] buffer)
  std::vector<std::string> buffer_names;
  std::vector<InputView> inputs;               ///< one per declared input of the op (call_spec.h's views)
  std::vector<float> scalars;                  ///< the contract's binary32 scalars, declared order
  size_t codes_bytes = 0;                      ///< rows * width (E4M3) or rows * width / 2 (E2M1, two per byte)
  size_t scale_bytes = 0;                      ///< ref::scale_tensor_size(layout, ...) cells, times 4 for fp32 scales
  // Rejection probes.
  std::vector<uint32_t> input_misalign;        ///< per input (empty: none)
  std::vector<bool> null_input;                ///< per input (empty: none)
  uint32_t codes_misalign = 0, scales_misalign = 0;
  bool null_codes = false, null_scales = false;
  int32_t n_inputs_override = -1;              ///< >= 0: passed as n_inputs
  int32_t n_scalars_override = -1;             ///< >= 0: passed as n_scalars
  int32_t scale_layout_override = -1;          ///< >= 0: passed as scale_layout

  int64_t blocks_per_row() const { return width / op->block_size; }
  /// The element (r, c) of input i.
  uint16_t& at(int i, int64_t r, int64_t c) {
    const InputView& v = inputs[size_t(i)];
    return buffers[size_t(v.buffer)][size_t(v.offset + r * v.stride[0] + c * v.stride[1])];
  }
  uint16_t at(int i, int64_t r, int64_t c) const {
    const InputView& v = inputs[size_t(i)];
    return buffers[size_t(v.buffer)][size_t(v.offset + r * v.stride[0] + c * v.stride[1])];
  }
  uint32_t misalign_of(int i) const { return input_misalign.empty() ? 0 : input_misalign[size_t(i)]; }
  bool null_of(int i) const { return !null_input.empty() && null_input[size_t(i)]; }
};

/// A valid call: zero-filled buffers for [rows, width] in the op's input layouts (elementwise x [rows, width], a
/// row-broadcast bias [width], a packed gate|up [rows, 2 * width]), the contract's scalars set to 1.0f, output sizes
/// from the op's formats and `layout`. width must be a multiple of the op's block size.
QuantCallSpec make_quant_call(const ref::QuantOpSpec& op, ref::QuantContract contract, int64_t rows, int64_t width,
                              int32_t dtype, ref::ScaleLayout layout);

/// The ABI call for `spec` once each buffer's data starts at buffer_data[k], codes at `codes` and scales at `scales`;
/// null and misaligned probes applied. The error fields are left for Plugin::call.
fuseproof_call_t abi_quant_call(const QuantCallSpec& spec, const std::vector<uint8_t*>& buffer_data, uint8_t* codes,
                                uint8_t* scales, void* stream);

/// "rows=R,width=W,dtype=D,layout=linear,global_scale=0x3F800000,x+0,codes+0,scales+0" (probes named): the call's
/// arguments for a record and a heartbeat.
std::string describe_quant_call(const QuantCallSpec& s);

/// The code of element (r, c) read from a codes tensor of the op's element format (the E2M1 nibble, or the byte).
uint8_t code_at(const ref::QuantOpSpec& op, const uint8_t* codes, int64_t width, int64_t r, int64_t c);
/// The scale of block (r, k) read from a scales tensor in `layout`: the E4M3 byte in `byte` (and its value), or the
/// binary32 value.
ref::QuantScale scale_at(const ref::QuantContractSpec& c, ref::ScaleLayout layout, const uint8_t* scales, int64_t rows,
                         int64_t blocks, int64_t r, int64_t k);

}  // namespace fuseproof::audit
