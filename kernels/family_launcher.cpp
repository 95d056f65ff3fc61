// family_launcher.cpp: the rules of a valid call, then dispatch.
#include "family_launcher.h"

#include <climits>

namespace fuseproof {

namespace {

const char* name_of(kernel::FamilyOp op) {
  switch (op) {
    case kernel::FamilyOp::kBiasGeluErf: return kernel::FamilyTraits<kernel::FamilyOp::kBiasGeluErf>::kName;
    case kernel::FamilyOp::kSiluAndMul: return kernel::FamilyTraits<kernel::FamilyOp::kSiluAndMul>::kName;
    case kernel::FamilyOp::kGeluTanhAndMul: return kernel::FamilyTraits<kernel::FamilyOp::kGeluTanhAndMul>::kName;
    case kernel::FamilyOp::kGeluAndMul: return kernel::FamilyTraits<kernel::FamilyOp::kGeluAndMul>::kName;
  }
  return "?";
}

bool packed(kernel::FamilyOp op) { return op != kernel::FamilyOp::kBiasGeluErf; }

bool aligned(const void* p, int vector_elems) { return (reinterpret_cast<uintptr_t>(p) & uintptr_t(2 * vector_elems - 1)) == 0; }

bool overlap(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes) {
  const uintptr_t pa = reinterpret_cast<uintptr_t>(a), pb = reinterpret_cast<uintptr_t>(b);
  return pa < pb + uint64_t(b_bytes) && pb < pa + uint64_t(a_bytes);
}

}  // namespace

std::string family_can_implement(const FamilyLaunch& l, const fuseproof_call_t& c) {
  const std::string op = std::string(name_of(l.op)) + ": ";
  if (c.struct_size != sizeof(fuseproof_call_t))
    return op + "call struct size must be " + std::to_string(sizeof(fuseproof_call_t)) + ", got " +
           std::to_string(c.struct_size);
  if (c.dtype != FUSEPROOF_DTYPE_BF16 && c.dtype != FUSEPROOF_DTYPE_FP16)
    return op + "dtype code must be 0 (bf16) or 1 (fp16), got " + std::to_string(c.dtype);
  if (c.n_inputs != 2) return op + "takes 2 inputs, got " + std::to_string(c.n_inputs);
  const int64_t rows = c.shape[0], w = c.shape[1];
  if (rows < 1) return op + "rows must be >= 1, got " + std::to_string(rows);
  if (w < 1) return op + "width must be >= 1, got " + std::to_string(w);
  if (w % l.vector_elems != 0)
    return op + "width must be a multiple of " + std::to_string(l.vector_elems) + ", got " + std::to_string(w);
  const int64_t in_row = packed(l.op) ? 2 * w : w;
  if (in_row > INT64_MAX / 2 / rows)
    return op + "rows * width overflows int64 bytes, got " + std::to_string(rows) + " x " + std::to_string(w);
  if (!c.out) return op + "out must not be null";
  for (int i = 0; i < 2; ++i)
    if (!c.inputs[i].data) return op + "input " + std::to_string(i) + " must not be null";
  const std::string bytes = std::to_string(2 * l.vector_elems) + " bytes";
  if (!aligned(c.out, l.vector_elems)) return op + "out must be aligned to " + bytes;
  for (int i = 0; i < 2; ++i)
    if (!aligned(c.inputs[i].data, l.vector_elems)) return op + "input " + std::to_string(i) + " must be aligned to " + bytes;
  const fuseproof_input_t &a = c.inputs[0], &b = c.inputs[1];
  if (packed(l.op)) {
    if (a.stride[0] != 2 * w || a.stride[1] != 1 || b.stride[0] != 2 * w || b.stride[1] != 1)
      return op + "gate and up must be the halves of one [rows, 2 * width] tensor (strides {2 * width, 1}), got " +
             "{" + std::to_string(a.stride[0]) + ", " + std::to_string(a.stride[1]) + "} and {" +
             std::to_string(b.stride[0]) + ", " + std::to_string(b.stride[1]) + "}";
    if (static_cast<const uint16_t*>(b.data) != static_cast<const uint16_t*>(a.data) + w)
      return op + "up must start width elements after gate (the packed layout)";
  } else {
    if (a.stride[0] != w || a.stride[1] != 1) return op + "x must be contiguous [rows, width]";
    if (b.stride[0] != 0 || b.stride[1] != 1) return op + "bias must be one [width] row shared by every row";
  }
  const int64_t out_bytes = rows * w * 2;
  if (overlap(c.out, out_bytes, a.data, rows * in_row * 2) || overlap(c.out, out_bytes, b.data, packed(l.op) ? 0 : w * 2))
    return op + "out must not overlap an input";
  if (l.fp32 && !packed(l.op)) return op + "has no fp32 contract";
  return "";
}

std::string family_launch(const FamilyLaunch& l, const fuseproof_call_t& c) {
  if (std::string why = family_can_implement(l, c); !why.empty()) return why;
  if (l.cuda) return detail::family_launch_cuda(l, c);
  detail::family_emulate(l, c);
  return "";
}

}  // namespace fuseproof
