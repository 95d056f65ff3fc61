// tree_digest.cpp: per-bias rows hashed by worker threads, then one SHA-256 over the row digests in bias order.
#include "common/tree_digest.h"

#include <algorithm>
#include <atomic>
#include <thread>

namespace fuseproof {

namespace {

/// r(b): the lower-case hex SHA-256 of one row's 65,536 outputs (little-endian uint16, as the flat stream).
std::string row_digest(const uint16_t* row) { return Sha256::of(row, 65536 * 2); }

}  // namespace

std::string sweep_tree_digest(ref::Dtype d, const std::vector<uint16_t>& gelu_table, ref::NanPolicy nan,
                              const ref::SweepOptions& options) {
  const uint32_t first = options.bias_first, count = options.bias_count;
  std::vector<std::string> rows(count);
  std::atomic<uint32_t> next{0};
  const uint16_t* table = gelu_table.empty() ? nullptr : gelu_table.data();
  auto work = [&] {
    std::vector<uint16_t> out(65536);
    // Biases are taken one at a time: rows differ in cost (sweep_row's shortcuts cover more of some rows, none of a
    // NaN bias's), so a static split would idle a thread.
    for (uint32_t i = next++; i < count; i = next++) {
      ref::sweep_row(d, table, nan, uint16_t(first + i), out.data());
      rows[i] = row_digest(out.data());
    }
  };
  const unsigned n = std::max(1u, options.threads ? options.threads : std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < n; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  Sha256 tree;
  for (const std::string& r : rows) tree.update(r.data(), r.size());
  return tree.hex();
}

void TreeDigestStream::update(const uint16_t* rows, uint32_t n) {
  for (uint32_t r = 0; r < n; ++r) {
    const std::string row = row_digest(rows + size_t(r) * 65536);
    tree_.update(row.data(), row.size());
  }
}

}  // namespace fuseproof
