// tree_digest.h: the whole 2^32 (x, bias) domain's tree digest: SHA-256 over the 65,536 per-bias row digests,
// computed in parallel (the flat digest of golden/<arch>/digests.json is one sequential SHA-256 stream).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "reference/domain_sweep.h"

namespace fuseproof {

/// Tree digest of out = gelu_table[add_round(d, x, bias, nan)] (add_round alone when gelu_table is empty) over the
/// biases options.bias_first .. + bias_count: row digest r(b) = lower-case hex SHA-256 of the 65,536 outputs at bias
/// b (x bits 0x0000..0xFFFF, little-endian uint16, as the flat stream), tree = hex SHA-256 of r(first) || r(first+1)
/// || ... (64 ASCII characters each). scripts/capture_golden.py computes the same from eager on the GPU
/// ("bias_gelu_tanh_tree", "add_round_tree" in digests.json). options.threads workers (0 = hardware threads).
std::string sweep_tree_digest(ref::Dtype d, const std::vector<uint16_t>& gelu_table, ref::NanPolicy nan,
                              const ref::SweepOptions& options = {});

}  // namespace fuseproof
