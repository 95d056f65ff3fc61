// tree_digest.cpp: per-bias rows hashed by worker threads, then one SHA-256 over the row digests in bias order.
#include "common/tree_digest.h"

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

std::string sweep_tree_digest_bytes(const ByteRowFn& row, ref::SweepOptions options) {
  // The byte row goes into the first half of sweep_domain's 65,536-uint16 row buffer (char access may alias it).
  const ref::RowFn wide = [&row](uint16_t r, uint16_t* out) { row(r, reinterpret_cast<uint8_t*>(out)); };
  return tree_of(wide, options, 65536);
}

void TreeDigestStream::update(const uint16_t* rows, uint32_t n) {
  for (uint32_t r = 0; r < n; ++r) {
    const std::string row = row_digest(rows + size_t(r) * 65536);
    tree_.update(row.data(), row.size());
  }
}

}  // namespace fuseproof
