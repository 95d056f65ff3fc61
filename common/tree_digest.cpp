// tree_digest.cpp: per-bias rows hashed by worker threads, then one SHA-256 over the row digests in bias order.
#include "common/tree_digest.h"

#include "common/parallel_for.h"

namespace fuseproof {

namespace {

constexpr size_t kRowBytes = 65536 * 2;

/// The tree over rows of `row_bytes` bytes each, each row written by `row` into sweep_domain's row buffer.
std::string tree_of(const RowFn& row, SweepOptions options, size_t row_bytes) {
  const uint32_t first = options.bias_first;
  std::vector<std::string> rows(options.bias_count);
  options.in_order = false;
  options.biases_per_block = 1;
  sweep_domain(row, [&](uint32_t b0, uint32_t, const uint16_t* out) { rows[b0 - first] = Sha256::of(out, row_bytes); },
               options);
  return tree_of_row_digests(rows);
}

}  // namespace

std::string tree_of_row_digests(const std::vector<std::string>& row_hex) {
  Sha256 tree;
  for (const std::string& r : row_hex) tree.update(r.data(), r.size());
  return tree.hex();
}

std::string sweep_tree_digest(const RowFn& row, SweepOptions options) { return tree_of(row, options, kRowBytes); }

std::string sweep_tree_digest_bytes(const ByteRowFn& row, SweepOptions options, size_t bytes_per_output) {
  const size_t row_bytes = size_t(65536) * bytes_per_output;
  const unsigned workers = options.threads ? options.threads : worker_count();
  std::vector<std::vector<uint8_t>> scratch(workers);
  std::vector<std::string> rows(options.bias_count);
  // Rows differ in cost (a NaN row is a fill, a normal row a lookup per element): claimed one at a time.
  parallel_items(
      options.bias_count,
      [&](unsigned w, size_t i) {
        std::vector<uint8_t>& buf = scratch[w];
        buf.resize(row_bytes);
        row(uint16_t(options.bias_first + i), buf.data());
        rows[i] = Sha256::of(buf.data(), row_bytes);
      },
      workers);
  return tree_of_row_digests(rows);
}

void DomainDigests::update(const uint16_t* rows, uint32_t n) {
  if (want_tree_) rows_.assign(n, std::string());
  // Item 0 is the whole block's flat stream (claimed first, the longest), items 1..n the row digests.
  const size_t flat_items = want_flat_ ? 1 : 0;
  const size_t bytes = row_elems_ * 2;
  parallel_items((want_tree_ ? n : 0) + flat_items, [&](unsigned, size_t i) {
    if (i >= flat_items) rows_[i - flat_items] = Sha256::of(rows + (i - flat_items) * 65536, bytes);
    else if (bytes == kRowBytes) flat_.update(rows, size_t(n) * kRowBytes);
    else
      for (uint32_t r = 0; r < n; ++r) flat_.update(rows + size_t(r) * 65536, bytes);
  });
  for (const std::string& r : rows_) tree_.update(r.data(), r.size());
  rows_.clear();
}

}  // namespace fuseproof
