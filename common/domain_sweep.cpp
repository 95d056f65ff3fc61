// domain_sweep.cpp: parallel, order-preserving sweep of the 2^32 domain on common/parallel_for.h's workers.
#include "common/domain_sweep.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "common/parallel_for.h"

namespace fuseproof {

namespace {

bool stopped(const SweepOptions& o) { return o.stop && o.stop->load(std::memory_order_relaxed); }

/// Blocks claimed one at a time by each worker, which computes and consumes them: rows differ in cost (the add
/// shortcuts cover more of some rows, none of a NaN bias's), so a static split would idle a thread.
void sweep_unordered(const BlockFn& block, const SweepConsumer& consume, const SweepOptions& options, uint32_t per_block,
                     uint32_t blocks, unsigned workers) {
  const uint32_t end = options.bias_first + options.bias_count;
  std::vector<std::vector<uint16_t>> out(workers);
  parallel_items(blocks, [&](unsigned w, size_t k) {
    if (stopped(options)) return;
    const uint32_t b0 = options.bias_first + uint32_t(k) * per_block, n = std::min(per_block, end - b0);
    out[w].resize(size_t(per_block) * 65536);
    block(b0, n, out[w].data());
    consume(b0, n, out[w].data());
  }, workers);
}

}  // namespace

void sweep_blocks(const BlockFn& block, const SweepConsumer& consume, const SweepOptions& options) {
  const uint32_t per_block = std::max<uint32_t>(1, options.biases_per_block);
  const uint32_t end = options.bias_first + options.bias_count;
  const uint32_t blocks = (options.bias_count + per_block - 1) / per_block;
  if (blocks == 0) return;
  const unsigned workers = std::min<unsigned>(options.threads ? options.threads : worker_count(), blocks);
  if (!options.in_order) return sweep_unordered(block, consume, options, per_block, blocks, workers);
  // A ring of 2 * workers buffers: the workers fill blocks ahead while the caller (worker 0 of run_workers, one more
  // than the producers) consumes them in order.
  const uint32_t ring = 2 * workers;
  std::vector<std::vector<uint16_t>> buffers(ring, std::vector<uint16_t>(size_t(per_block) * 65536));
  std::vector<int64_t> ready(ring, -1);  // block index held by each slot, -1 when free
  std::mutex mu;
  std::condition_variable cv;
  uint32_t next = 0, consumed = 0;
  bool done = false;  // a failure or the end: producers waiting for a slot stop
  const auto finish = [&] {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
    cv.notify_all();
  };
  const auto produce = [&] {
    for (;;) {
      uint32_t k, slot;
      {
        std::unique_lock<std::mutex> lock(mu);
        if (done || next >= blocks) return;
        k = next++;
        slot = k % ring;
        cv.wait(lock, [&] { return done || (ready[slot] == -1 && k < consumed + ring); });
        if (done) return;
      }
      const uint32_t b0 = options.bias_first + k * per_block;
      block(b0, std::min(per_block, end - b0), buffers[slot].data());
      {
        std::lock_guard<std::mutex> lock(mu);
        ready[slot] = k;
      }
      cv.notify_all();
    }
  };
  const auto consume_all = [&] {
    for (uint32_t k = 0; k < blocks; ++k) {
      const uint32_t slot = k % ring;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return ready[slot] == int64_t(k) || done; });
        if (done) return;  // a producer failed: run_workers rethrows its exception
      }
      const uint32_t b0 = options.bias_first + k * per_block;
      consume(b0, std::min(per_block, end - b0), buffers[slot].data());
      {
        std::lock_guard<std::mutex> lock(mu);
        ready[slot] = -1;
        ++consumed;
      }
      cv.notify_all();
      if (stopped(options)) return;
    }
  };
  run_workers(workers + 1, [&](unsigned w) {
    try {
      w == 0 ? consume_all() : produce();
    } catch (...) {
      finish();
      throw;
    }
    if (w == 0) finish();
  });
}

void sweep_domain(const RowFn& row, const SweepConsumer& consume, const SweepOptions& options) {
  sweep_blocks(
      [&row](uint32_t first, uint32_t count, uint16_t* out) {
        for (uint32_t i = 0; i < count; ++i) row(uint16_t(first + i), out + size_t(i) * 65536);
      },
      consume, options);
}

}  // namespace fuseproof
