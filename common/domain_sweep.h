// domain_sweep.h: the one domain driver: the whole 2^32 domain of a 2-input 16-bit op (or any range of its rows),
// computed block by block by workers from a row or block function and handed to a consumer in canonical order or as
// blocks complete. The row functions themselves are the oracle's (reference/sweep_row.h, OpPlan::row).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

namespace fuseproof {

/// Canonical order: for the second input's bits 0x0000..0xFFFF (outer: bias, up), for the first input's bits
/// 0x0000..0xFFFF (inner: x, gate); outputs are uint16 written little-endian, 2^32 of them (8 GiB) per dtype.
inline constexpr uint64_t kDomainSize = uint64_t(1) << 32;

struct SweepOptions {
  unsigned threads = 0;              ///< workers computing blocks; 0 = worker_count() (common/parallel_for.h)
  uint32_t biases_per_block = 256;   ///< rows of 65,536 outputs per block handed to the consumer
  uint32_t bias_first = 0;           ///< sweep row indices [bias_first, bias_first + bias_count)
  uint32_t bias_count = 65536;
  /// true: `consume` runs on the calling thread, blocks in canonical order (a stream: the flat digest, a file, a
  /// subject's calls); false: on the workers, concurrently and in any order (each block on its own: row digests).
  bool in_order = true;
  /// Set by the consumer to end the sweep early: no block is handed over after the one that set it.
  const std::atomic<bool>* stop = nullptr;
};

/// Called with `out` holding bias_count rows of 65,536 outputs, row i at out + i * 65536.
using SweepConsumer = std::function<void(uint32_t bias_first, uint32_t bias_count, const uint16_t* out)>;

/// One row: out[first] for all 65,536 first-input patterns at row index `second` (OpPlan::row, ref::sweep_row).
using RowFn = std::function<void(uint16_t second, uint16_t* out)>;

/// rows [first, first + count) into out (row i at out + i * 65536): a backend that computes a block at once.
using BlockFn = std::function<void(uint32_t first, uint32_t count, uint16_t* out)>;

/// The one domain driver: blocks computed by options.threads workers and handed to `consume` (options.in_order).
/// The first exception of a block function or of the consumer is rethrown once every worker has stopped.
void sweep_blocks(const BlockFn& block, const SweepConsumer& consume, const SweepOptions& options = {});

/// sweep_blocks over a row function, one row after another within a block.
void sweep_domain(const RowFn& row, const SweepConsumer& consume, const SweepOptions& options = {});

}  // namespace fuseproof
