// quant_launcher.cpp: the rules of a valid quantization call, then dispatch.
#include "quant_launcher.h"

#include <climits>

namespace fuseproof {

namespace {

using kernel::QuantContract;
using kernel::QuantInputs;
using kernel::QuantOp;
using kernel::QuantFacts;

/// What the rules need to know of an op: its row of the quantization ops' facts (kernels/quant_ops.h).
const QuantFacts& facts(QuantOp op) {
  static constexpr QuantFacts kUnknown = {"?", 1, false, QuantInputs::kX};
  return int(op) >= 0 && int(op) < kernel::kQuantOps ? kernel::kQuantFacts[int(op)] : kUnknown;
}

bool aligned(const void* p, uintptr_t bytes) { return (reinterpret_cast<uintptr_t>(p) & (bytes - 1)) == 0; }

std::string pair(int64_t a, int64_t b) { return "{" + std::to_string(a) + ", " + std::to_string(b) + "}"; }

}  // namespace

const char* quant_op_name(QuantOp op) { return facts(op).name; }

std::string quant_can_implement(const QuantLaunch& l, const fuseproof_call_t& c) {
  const QuantFacts f = facts(l.op);
  const std::string op = std::string(f.name) + ": ";
  // A quantization op reads scales, scale_layout, n_scalars and scalars: the version-4 struct, whole.
  if (c.struct_size < sizeof(fuseproof_call_t))
    return op + "call struct size must be at least " + std::to_string(sizeof(fuseproof_call_t)) +
           " (the version-4 call), got " + std::to_string(c.struct_size);
  if (c.dtype != FUSEPROOF_DTYPE_BF16 && c.dtype != FUSEPROOF_DTYPE_FP16)
    return op + "dtype code must be 0 (bf16) or 1 (fp16), got " + std::to_string(c.dtype);
  const int n_inputs = f.inputs == QuantInputs::kX ? 1 : 2;
  if (c.n_inputs != n_inputs)
    return op + "takes " + std::to_string(n_inputs) + " input" + (n_inputs > 1 ? "s" : "") + ", got " +
           std::to_string(c.n_inputs);
  const int64_t rows = c.shape[0], w = c.shape[1];
  if (rows < 1) return op + "rows must be >= 1, got " + std::to_string(rows);
  if (w < 1) return op + "width must be >= 1, got " + std::to_string(w);
  // The block sizes (16, 128) are multiples of vector_bytes / 2 = 8, so one rule covers both.
  if (w % f.block != 0)
    return op + "width must be a multiple of " + std::to_string(f.block) + ", got " + std::to_string(w);
  const int64_t in_row = f.inputs == QuantInputs::kPackedGateUp ? 2 * w : w;
  if (in_row > INT64_MAX / 2 / rows)
    return op + "rows * width overflows int64 bytes, got " + std::to_string(rows) + " x " + std::to_string(w);
  if (c.scale_layout != FUSEPROOF_SCALE_LINEAR && !(f.e2m1 && c.scale_layout == FUSEPROOF_SCALE_SWIZZLED_128X4))
    return op + "scale_layout must be " +
           (f.e2m1 ? "0 (linear) or 1 (swizzled 128x4)" : std::string("0 (linear)")) + ", got " +
           std::to_string(c.scale_layout);
  const int scalars = kernel::quant_contract_scalars(l.contract);
  if (c.n_scalars != scalars)
    return op + "n_scalars must be " + std::to_string(scalars) + " for contract " +
           kernel::quant_contract_name(l.contract) + ", got " + std::to_string(c.n_scalars);
  const char* in_name[2] = {f.inputs == QuantInputs::kPackedGateUp ? "gate" : "x",
                            f.inputs == QuantInputs::kPackedGateUp ? "up" : "bias"};
  if (!c.out) return op + "out (the codes) must not be null";
  if (!c.scales) return op + "scales must not be null";
  for (int i = 0; i < n_inputs; ++i)
    if (!c.inputs[i].data) return op + in_name[i] + " must not be null";
  if (!aligned(c.out, kernel::kQuantVectorBytes)) return op + "out (the codes) must be aligned to 16 bytes";
  if (!aligned(c.scales, 4)) return op + "scales must be aligned to 4 bytes";
  for (int i = 0; i < n_inputs; ++i)
    if (!aligned(c.inputs[i].data, kernel::kQuantVectorBytes)) return op + in_name[i] + " must be aligned to 16 bytes";
  const fuseproof_input_t &a = c.inputs[0], &b = c.inputs[1];
  if (f.inputs == QuantInputs::kPackedGateUp) {
    if (a.stride[0] != 2 * w || a.stride[1] != 1 || b.stride[0] != 2 * w || b.stride[1] != 1)
      return op + "gate and up must be the halves of one [rows, 2 * width] tensor (strides {2 * width, 1}), got " +
             pair(a.stride[0], a.stride[1]) + " and " + pair(b.stride[0], b.stride[1]);
    if (static_cast<const uint16_t*>(b.data) != static_cast<const uint16_t*>(a.data) + w)
      return op + "up must start width elements after gate (the packed layout)";
  } else {
    if (a.stride[0] != w || a.stride[1] != 1)
      return op + "x must be contiguous [rows, width] (stride {width, 1} = " + pair(w, 1) + "), got " +
             pair(a.stride[0], a.stride[1]);
    if (f.inputs == QuantInputs::kXBias && (b.stride[0] != 0 || b.stride[1] != 1))
      return op + "bias must be one [width] row shared by every row (stride {0, 1}), got " +
             pair(b.stride[0], b.stride[1]);
  }
  if (kernel::quant_contract_is_nvfp4(l.contract) != f.e2m1)
    return op + "has no " + kernel::quant_contract_name(l.contract) + " contract";
  if (!l.cuda && l.contract == QuantContract::kRcpApprox)
    return op + "contract rcp-approx needs the device's rcp.approx.ftz.f32; the CPU emulation does not compute it";
  return "";
}

kernel::QuantArgs quant_args(const QuantLaunch& l, const fuseproof_call_t& c) {
  const int block = facts(l.op).block;
  const bool bias = facts(l.op).inputs == QuantInputs::kXBias;
  return {static_cast<const uint16_t*>(c.inputs[0].data),
          bias ? static_cast<const uint16_t*>(c.inputs[1].data) : nullptr,
          static_cast<uint8_t*>(c.out),
          static_cast<uint8_t*>(c.scales),
          c.shape[0],
          c.shape[1],
          c.shape[1] / block,
          static_cast<kernel::QuantLayout>(c.scale_layout),
          kernel::quant_contract_scalars(l.contract) ? c.scalars[0] : 0.0f};
}

std::string quant_launch(const QuantLaunch& l, const fuseproof_call_t& c) {
  if (std::string why = quant_can_implement(l, c); !why.empty()) return why;
  if (l.cuda) return detail::quant_launch_cuda(l, c);
  detail::quant_emulate(l, c);
  return "";
}

}  // namespace fuseproof
