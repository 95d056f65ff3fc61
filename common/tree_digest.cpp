// tree_digest.cpp: per-bias rows hashed by worker threads, then one SHA-256 over the row digests in bias order.
#include "common/tree_digest.h"

namespace fuseproof {

namespace {

/// r(b): the lower-case hex SHA-256 of one row's 65,536 outputs (little-endian uint16, as the flat stream).
std::string row_digest(const uint16_t* row) { return Sha256::of(row, 65536 * 2); }

}  // namespace

std::string sweep_tree_digest(const ref::RowFn& row, ref::SweepOptions options) {
  const uint32_t first = options.bias_first;
  std::vector<std::string> rows(options.bias_count);
  options.in_order = false;
  options.biases_per_block = 1;
  ref::sweep_domain(row, [&](uint32_t b0, uint32_t, const uint16_t* out) { rows[b0 - first] = row_digest(out); },
                    options);
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
