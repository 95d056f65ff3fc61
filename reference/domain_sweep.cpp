// domain_sweep.cpp: parallel, order-preserving sweep of the 2^32 domain.
#include "domain_sweep.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "half_codec.h"

namespace fuseproof::ref {

namespace {

/// Every pattern widened once (exact, from half_to_f32), so the inner loop is a load, an add and a rounding.
template <Dtype D>
const std::vector<float>& widened() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t i = 0; i < 65536; ++i) t[i] = half_to_f32(D, uint16_t(i));
    return t;
  }();
  return table;
}

template <Dtype D, bool kTable>
void row_impl(const uint16_t* table, NanPolicy nan, uint16_t bias, uint16_t* out) {
  const float* wide = widened<D>().data();
  const float fb = wide[bias];
  for (uint32_t x = 0; x < 65536; ++x) {
    const uint16_t r = f32_to_half(D, wide[x] + fb, nan);
    out[x] = kTable ? table[r] : r;
  }
}

}  // namespace

void sweep_row(Dtype d, const uint16_t* gelu_table, NanPolicy nan, uint16_t bias, uint16_t* out) {
  if (d == Dtype::kBf16) {
    gelu_table ? row_impl<Dtype::kBf16, true>(gelu_table, nan, bias, out)
               : row_impl<Dtype::kBf16, false>(nullptr, nan, bias, out);
  } else {
    gelu_table ? row_impl<Dtype::kFp16, true>(gelu_table, nan, bias, out)
               : row_impl<Dtype::kFp16, false>(nullptr, nan, bias, out);
  }
}

void sweep_bias_gelu(Dtype d, const std::vector<uint16_t>& gelu_table, NanPolicy nan, const SweepConsumer& consume,
                     const SweepOptions& options) {
  const uint16_t* table = gelu_table.empty() ? nullptr : gelu_table.data();
  const uint32_t per_block = std::max<uint32_t>(1, options.biases_per_block);
  const uint32_t end = options.bias_first + options.bias_count;
  const uint32_t blocks = (options.bias_count + per_block - 1) / per_block;
  unsigned workers = options.threads ? options.threads : std::max(1u, std::thread::hardware_concurrency());
  workers = std::min<unsigned>(workers, std::max<uint32_t>(1, blocks));
  // A ring of 2 * workers buffers: workers fill blocks ahead while the caller consumes them in order.
  const uint32_t ring = 2 * workers;
  std::vector<std::vector<uint16_t>> buffers(ring, std::vector<uint16_t>(size_t(per_block) * 65536));
  std::vector<int64_t> ready(ring, -1);  // block index held by each slot, -1 when free
  std::mutex mu;
  std::condition_variable cv;
  std::atomic<uint32_t> next{0};
  uint32_t consumed = 0;
  bool failed = false;

  auto work = [&] {
    for (;;) {
      const uint32_t k = next.fetch_add(1);
      if (k >= blocks) return;
      const uint32_t slot = k % ring;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return failed || (ready[slot] == -1 && k < consumed + ring); });
        if (failed) return;
      }
      const uint32_t b0 = options.bias_first + k * per_block;
      const uint32_t n = std::min(per_block, end - b0);
      for (uint32_t i = 0; i < n; ++i) sweep_row(d, table, nan, uint16_t(b0 + i), buffers[slot].data() + size_t(i) * 65536);
      {
        std::lock_guard<std::mutex> lock(mu);
        ready[slot] = k;
      }
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < workers; ++i) pool.emplace_back(work);
  std::exception_ptr error;
  for (uint32_t k = 0; k < blocks; ++k) {
    const uint32_t slot = k % ring;
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return ready[slot] == int64_t(k); });
    }
    const uint32_t b0 = options.bias_first + k * per_block;
    try {
      consume(b0, std::min(per_block, end - b0), buffers[slot].data());
    } catch (...) {
      error = std::current_exception();
      std::lock_guard<std::mutex> lock(mu);
      failed = true;
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      ready[slot] = -1;
      ++consumed;
    }
    cv.notify_all();
    if (error) break;
  }
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace fuseproof::ref
