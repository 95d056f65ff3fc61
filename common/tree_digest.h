// tree_digest.h: the whole 2^32 (x, bias) domain's digests: the tree digest (SHA-256 over the 65,536 per-bias row
// digests, computed in parallel) and the flat one of golden/<arch>/digests.json (one sequential SHA-256 stream).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/domain_sweep.h"
#include "common/sha256.h"

namespace fuseproof {

/// Tree digest of the rows `row` computes (OpPlan::row) over the second inputs options.bias_first .. + bias_count:
/// row digest r(b) = lower-case hex SHA-256 of the 65,536 outputs at second input b (first input 0x0000..0xFFFF,
/// little-endian uint16, as the flat stream), tree = hex SHA-256 of r(first) || r(first+1) || ... (64 ASCII
/// characters each). scripts/capture_golden.py computes the same from eager on the GPU (the `<key>_tree` entries of
/// digests.json). options.threads workers (0 = worker_count()) compute and hash rows in any order.
std::string sweep_tree_digest(const RowFn& row, SweepOptions options = {});

/// One row of 65,536 outputs at row index r, each a fixed number of bytes (the narrow-format casts,
/// reference/format_cast.h: one; rcp.approx.ftz, reference/rcp_approx_model.h: four, little-endian).
using ByteRowFn = std::function<void(uint16_t r, uint8_t* out)>;

/// The same tree over rows of 65,536 * bytes_per_output bytes: r(i) = hex SHA-256 of row i's bytes, tree = hex
/// SHA-256 of r(first) || r(first+1) || ... (rows options.bias_first .. + bias_count); options.threads workers (0 =
/// worker_count(), common/parallel_for.h) compute and hash rows in any order.
std::string sweep_tree_digest_bytes(const ByteRowFn& row, SweepOptions options = {}, size_t bytes_per_output = 1);

/// The tree digest of row digests given in row order: hex SHA-256 of r(0) || r(1) || ... (64 ASCII characters each),
/// the tree of sweep_tree_digest and of a rounding stage's rows (golden "<key>.stage<k>_tree").
std::string tree_of_row_digests(const std::vector<std::string>& row_hex);

/// The flat and the tree digest of rows handed over in bias order, for callers that hold the ordered stream anyway
/// (the domain class, an --out file, a second backend, `fuseproof stages --digests`). Each update hashes its rows on
/// every worker while one of them carries the flat stream on, so the flat digest alone sets the pace (one thread's
/// SHA-256 rate).
class DomainDigests {
 public:
  /// Which of the two digests to compute (a digest not computed has no hex). Each row's first `row_elems` outputs
  /// count (a rounding stage's row holds as many pairs as its first operand has values); rows lie 65,536 apart.
  DomainDigests(bool flat, bool tree, size_t row_elems = 65536)
      : want_flat_(flat), want_tree_(tree), row_elems_(row_elems) {}
  /// Adds n consecutive rows, 65,536 outputs apart (little-endian uint16), row_elems of each.
  void update(const uint16_t* rows, uint32_t n);
  /// The digests of the rows added so far; each finalises (as Sha256::hex).
  std::string flat_hex() { return flat_.hex(); }
  std::string tree_hex() { return tree_.hex(); }

 private:
  bool want_flat_, want_tree_;
  size_t row_elems_;
  Sha256 flat_, tree_;
  std::vector<std::string> rows_;
};

}  // namespace fuseproof
