// family_launcher.cpp: the rules of a valid call, then dispatch.
#include "family_launcher.h"

#include <climits>

namespace fuseproof {

namespace {

using kernel::FamilyOp;
using kernel::FamilyFacts;

/// What the rules need to know of an op: its row of the family's facts (kernels/family_ops.h).
const FamilyFacts& facts(FamilyOp op) {
  static constexpr FamilyFacts kUnknown = {"?", false, 0, 0, kernel::Contract::kEager, kernel::Act::kGeluErf, {}};
  return int(op) >= 0 && int(op) < kernel::kFamilyOps ? kernel::kFamilyFacts[int(op)] : kUnknown;
}

bool aligned(const void* p, int vector_elems) { return (reinterpret_cast<uintptr_t>(p) & uintptr_t(2 * vector_elems - 1)) == 0; }

bool overlap(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes) {
  const uintptr_t pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
  return pa < pb + uint64_t(b_bytes) && pb < pa + uint64_t(a_bytes);
}

std::string pair(int64_t a, int64_t b) { return "{" + std::to_string(a) + ", " + std::to_string(b) + "}"; }

}  // namespace

std::string family_can_implement(const FamilyLaunch& l, const fuseproof_call_t& c) {
  const FamilyFacts& f = facts(l.op);
  const std::string op = std::string(f.name) + ": ";
  if (c.struct_size != sizeof(fuseproof_call_t))
    return op + "call struct size must be " + std::to_string(sizeof(fuseproof_call_t)) + ", got " +
           std::to_string(c.struct_size);
  if (c.dtype != FUSEPROOF_DTYPE_BF16 && c.dtype != FUSEPROOF_DTYPE_FP16)
    return op + "dtype code must be 0 (bf16) or 1 (fp16), got " + std::to_string(c.dtype);
  if (c.n_inputs != f.inputs)
    return op + "takes " + std::to_string(f.inputs) + " inputs, got " + std::to_string(c.n_inputs);
  const int64_t rows = c.shape[0], w = c.shape[1];
  if (rows < 1) return op + "rows must be >= 1, got " + std::to_string(rows);
  if (w < 1) return op + "width must be >= 1, got " + std::to_string(w);
  if (w % l.vector_elems != 0)
    return op + "width must be a multiple of " + std::to_string(l.vector_elems) + ", got " + std::to_string(w);
  // group_rows is read only for the ops with group-broadcast inputs (the ABI: every other op ignores it).
  const int64_t groups = f.group_mask ? (c.group_rows >= 1 ? rows / c.group_rows : 0) : rows;
  if (f.group_mask) {
    if (c.group_rows < 1) return op + "group_rows must be >= 1, got " + std::to_string(c.group_rows);
    if (rows % c.group_rows != 0)
      return op + "rows must be a multiple of group_rows (" + std::to_string(c.group_rows) + "), got " +
             std::to_string(rows);
  }
  const int64_t in_row = f.packed ? 2 * w : w;
  if (in_row > INT64_MAX / 2 / rows)
    return op + "rows * width overflows int64 bytes, got " + std::to_string(rows) + " x " + std::to_string(w);
  if (!c.out) return op + "out must not be null";
  for (int i = 0; i < f.inputs; ++i)
    if (!c.inputs[i].data) return op + f.input_names[i] + " must not be null";
  const std::string bytes = std::to_string(2 * l.vector_elems) + " bytes";
  if (!aligned(c.out, l.vector_elems)) return op + "out must be aligned to " + bytes;
  for (int i = 0; i < f.inputs; ++i)
    if (!aligned(c.inputs[i].data, l.vector_elems)) return op + f.input_names[i] + " must be aligned to " + bytes;
  const fuseproof_input_t &a = c.inputs[0], &b = c.inputs[1];
  // Each input's size in bytes, for the overlap rule.
  int64_t in_bytes[3] = {rows * in_row * 2, f.packed ? 0 : w * 2, 0};
  if (f.packed) {
    if (a.stride[0] != 2 * w || a.stride[1] != 1 || b.stride[0] != 2 * w || b.stride[1] != 1)
      return op + "gate and up must be the halves of one [rows, 2 * width] tensor (strides {2 * width, 1}), got " +
             pair(a.stride[0], a.stride[1]) + " and " + pair(b.stride[0], b.stride[1]);
    if (static_cast<const uint16_t*>(b.data) != static_cast<const uint16_t*>(a.data) + w)
      return op + "up must start width elements after gate (the packed layout)";
  } else if (f.inputs == 2) {
    if (a.stride[0] != w || a.stride[1] != 1) return op + "x must be contiguous [rows, width]";
    if (b.stride[0] != 0 || b.stride[1] != 1) return op + "bias must be one [width] row shared by every row";
  } else {
    // Elementwise and group-broadcast inputs alike are row-major with stride {width, 1}; they differ in their rows.
    for (int i = 0; i < f.inputs; ++i) {
      const fuseproof_input_t& in = c.inputs[i];
      const bool grouped = (f.group_mask >> i) & 1u;
      if (in.stride[0] != w || in.stride[1] != 1)
        return op + f.input_names[i] +
               (grouped ? " must be [rows / group_rows, width], one row per group of group_rows rows"
                        : " must be contiguous [rows, width]") +
               " (stride {width, 1} = " + pair(w, 1) + "), got " + pair(in.stride[0], in.stride[1]);
      in_bytes[i] = (grouped ? groups : rows) * w * 2;
    }
  }
  const int64_t out_bytes = rows * w * 2;
  for (int i = 0; i < f.inputs; ++i)
    if (overlap(c.out, out_bytes, c.inputs[i].data, in_bytes[i]))
      return op + "out must not overlap " + (f.inputs == 2 ? std::string("an input") : f.input_names[i]);
  if (l.contract != kernel::Contract::kEager && l.contract != f.other)
    return op + "has no " + kernel::contract_name(l.contract) + " contract";
  return "";
}

std::string family_launch(const FamilyLaunch& l, const fuseproof_call_t& c) {
  if (std::string why = family_can_implement(l, c); !why.empty()) return why;
  if (l.cuda) return detail::family_launch_cuda(l, c);
  detail::family_emulate(l, c);
  return "";
}

}  // namespace fuseproof
