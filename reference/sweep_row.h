// sweep_row.h: one row of the 2^32 (x, bias) domain of eager's add (65,536 x at one bias), with the proven row
// shortcuts; the threaded driver that sweeps rows in canonical order is common/domain_sweep.h.
#pragma once

#include <cstdint>

#include "dtype.h"
#include "nan_policy.h"

namespace fuseproof::ref {

/// The row of `table[add_round(x, bias)]` (an empty table: add_round alone) for every x at one bias: the row an add of
/// two widened inputs compiles to (op_plan.h). The x
/// ranges of row_shortcuts() are filled without arithmetic (exact by the argument in sweep_row.cpp), the rest is
/// computed element by element as sweep_row_plain does.
void sweep_row(Dtype d, const uint16_t* gelu_table, NanPolicy nan, uint16_t bias, uint16_t* out);

/// One row computed element by element for every x: the definition sweep_row is tested against.
void sweep_row_plain(Dtype d, const uint16_t* gelu_table, NanPolicy nan, uint16_t bias, uint16_t* out);

/// The magnitudes m (x = m or 0x8000 | m) of one row that sweep_row fills without computing:
///   m in [0, small_end)             add_round(x, bias) = bias  (|x| too small to move the sum off the bias)
///   m in [large_begin, Inf pattern) add_round(x, bias) = x     (the bias too small to move the sum off x)
/// NaN bias: both empty. +-Inf bias: small_end = Inf pattern (every finite x gives the bias). +-0 bias: large_begin = 1.
struct RowShortcuts {
  uint16_t small_end;
  uint16_t large_begin;
};

/// The shortcuts of `bias`. `widen` > 0 moves both thresholds that many binades past the proven ones (test-only: the
/// negative control that shows the comparison with sweep_row_plain can fail); 0 is what sweep_row uses.
RowShortcuts row_shortcuts(Dtype d, uint16_t bias, int widen = 0);

/// sweep_row with row_shortcuts(d, bias, widen) (test-only; widen 0 is sweep_row).
void sweep_row_widened(Dtype d, const uint16_t* gelu_table, NanPolicy nan, uint16_t bias, uint16_t* out, int widen);

}  // namespace fuseproof::ref
