// tree_digest.h: the whole 2^32 (x, bias) domain's tree digest: SHA-256 over the 65,536 per-bias row digests,
// computed in parallel (the flat digest of golden/<arch>/digests.json is one sequential SHA-256 stream).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/sha256.h"
#include "reference/domain_sweep.h"

namespace fuseproof {

/// Tree digest of the rows `row` computes (OpPlan::row) over the second inputs options.bias_first .. + bias_count:
/// row digest r(b) = lower-case hex SHA-256 of the 65,536 outputs at second input b (first input 0x0000..0xFFFF,
/// little-endian uint16, as the flat stream), tree = hex SHA-256 of r(first) || r(first+1) || ... (64 ASCII
/// characters each). scripts/capture_golden.py computes the same from eager on the GPU (the `<key>_tree` entries of
/// digests.json). options.threads workers (0 = hardware threads) compute and hash rows in any order.
std::string sweep_tree_digest(const ref::RowFn& row, ref::SweepOptions options = {});

/// One row of 65,536 outputs at row index r, each a fixed number of bytes (the narrow-format casts,
/// reference/format_cast.h: one; rcp.approx.ftz, reference/rcp_approx_model.h: four, little-endian).
using ByteRowFn = std::function<void(uint16_t r, uint8_t* out)>;

/// The same tree over rows of 65,536 * bytes_per_output bytes: r(i) = hex SHA-256 of row i's bytes, tree = hex
/// SHA-256 of r(first) || r(first+1) || ... (rows options.bias_first .. + bias_count); options.threads workers (0 =
/// worker_count(), common/parallel_for.h) compute and hash rows in any order.
std::string sweep_tree_digest_bytes(const ByteRowFn& row, ref::SweepOptions options = {}, size_t bytes_per_output = 1);

/// The same tree digest from rows handed over in bias order, for callers that hold the ordered stream anyway (an
/// --out file, a second backend): one thread, so no faster than the flat digest.
class TreeDigestStream {
 public:
  /// Adds n consecutive rows of 65,536 outputs each.
  void update(const uint16_t* rows, uint32_t n);
  /// The tree digest of the rows added so far; finalises (as Sha256::hex).
  std::string hex() { return tree_.hex(); }

 private:
  Sha256 tree_;
};

}  // namespace fuseproof
