// tree_digest.cpp: per-bias rows hashed by worker threads, then one SHA-256 over the row digests in bias order.
#include "common/tree_digest.h"

#include "common/parallel_for.h"

namespace fuseproof {

namespace {

/// r(b): the lower-case hex SHA-256 of one row's 65,536 outputs (little-endian uint16, as the flat stream).
std::string row_digest(const uint16_t* row) { return Sha256::of(row, 65536 * 2); }

/// The tree over rows of `row_bytes` bytes each, each row written by `row` into sweep_domain's row buffer.
std::string tree_of(const ref::RowFn& row, ref::SweepOptions options, size_t row_bytes) {
  const uint32_t first = options.bias_first;
  std::vector<std::string> rows(options.bias_count);
  options.in_order = false;
  options.biases_per_block = 1;
  ref::sweep_domain(
      row, [&](uint32_t b0, uint32_t, const uint16_t* out) { rows[b0 - first] = Sha256::of(out, row_bytes); },
      options);
  Sha256 tree;
  for (const std::string& r : rows) tree.update(r.data(), r.size());
  return tree.hex();
}

}  // namespace

std::string sweep_tree_digest(const ref::RowFn& row, ref::SweepOptions options) {
  return tree_of(row, options, 65536 * 2);
}

std::string sweep_tree_digest_bytes(const ByteRowFn& row, ref::SweepOptions options, size_t bytes_per_output) {
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
