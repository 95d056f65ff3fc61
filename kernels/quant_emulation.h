// quant_emulation.h: the quantization kernels' cells (quant_ops.h) run on the host over a validated call, split over
// the host's threads; for the built-in emulation and the host mutants.
#pragma once

#include "common/parallel_for.h"
#include "fuseproof_kernel_abi.h"
#include "quant_ops.h"

namespace fuseproof::detail {

/// Every scale cell of the call (the swizzled layout's padding cells included), rows of cells split over the host's
/// threads as the device's grid splits them; every cell is independent. rcp-approx is not instantiated on the host:
/// its reciprocal is the device's rcp.approx.ftz.f32, which the host does not have.
template <kernel::QuantOp Op, kernel::QuantContract C, kernel::QuantFault F = kernel::QuantFault::kNone>
void quant_emulate_op(const kernel::QuantArgs& a, int32_t dtype) {
  const int64_t rows = kernel::quant_scale_rows(a.layout, a.rows), cols = kernel::quant_scale_cols(a.layout, a.blocks);
  fuseproof::parallel_for(size_t(rows), [&](unsigned, size_t lo, size_t hi) {
    for (int64_t r = int64_t(lo); r < int64_t(hi); ++r)
      for (int64_t k = 0; k < cols; ++k) {
        if (dtype == FUSEPROOF_DTYPE_BF16) kernel::quant_cell<Op, kernel::Half::kBf16, C, F>(a, r, k);
        else kernel::quant_cell<Op, kernel::Half::kFp16, C, F>(a, r, k);
      }
  });
}

}  // namespace fuseproof::detail
