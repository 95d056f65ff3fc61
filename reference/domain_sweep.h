// domain_sweep.h: the whole 2^32 domain of a 2-input 16-bit op, computed in canonical order by one driver that takes
// a row function, and the proven row shortcuts of eager's add.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "dtype.h"
#include "nan_policy.h"

namespace fuseproof::ref {

/// Canonical order: for the second input's bits 0x0000..0xFFFF (outer: bias, up), for the first input's bits
/// 0x0000..0xFFFF (inner: x, gate); outputs are uint16 written little-endian, 2^32 of them (8 GiB) per dtype.
inline constexpr uint64_t kDomainSize = uint64_t(1) << 32;

struct SweepOptions {
  unsigned threads = 0;              ///< workers computing blocks; 0 = std::thread::hardware_concurrency()
  uint32_t biases_per_block = 256;   ///< rows of 65,536 outputs per block handed to the consumer
  uint32_t bias_first = 0;           ///< sweep second inputs [bias_first, bias_first + bias_count)
  uint32_t bias_count = 65536;
  /// true: `consume` runs on the calling thread, blocks in canonical order (a stream: the flat digest, a file);
  /// false: on the workers, concurrently and in any order (each block on its own: the tree digest's row digests).
  bool in_order = true;
};

/// Called in canonical order on the calling thread: `out` holds bias_count rows of 65,536 outputs.
using SweepConsumer = std::function<void(uint32_t bias_first, uint32_t bias_count, const uint16_t* out)>;

/// One row: out[first] for all 65,536 first-input patterns at one second input (OpPlan::row).
using RowFn = std::function<void(uint16_t second, uint16_t* out)>;

/// The one domain driver: rows computed by options.threads workers and handed to `consume` (options.in_order).
void sweep_domain(const RowFn& row, const SweepConsumer& consume, const SweepOptions& options = {});

/// The row of `table[add_round(x, bias)]` (an empty table: add_round alone) for every x at one bias: the row an add of
/// two widened inputs compiles to (op_plan.h). The x
/// ranges of row_shortcuts() are filled without arithmetic (exact by the argument in domain_sweep.cpp), the rest is
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
