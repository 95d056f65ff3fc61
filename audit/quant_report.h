// quant_report.h: the Markdown of a quantization audit's distances from the op's other contracts (CheckResult::
// contract_distances): how many codes and scales differ, by how many steps, and on exactly which inputs.
#pragma once

#include <string>
#include <vector>

#include "audit/check_result.h"

namespace fuseproof::audit {

/// "### Distance from the other contracts (stages bf16)" then one table row per other contract and, under it, the
/// (value, scale) inputs on which they differ (up to `max_pairs` each, then how many more); "" when the check has no
/// distances. `claimed` names the subject's contract.
std::string contract_distances_markdown(const CheckResult& c, const std::string& claimed, size_t max_pairs = 16);

/// "0: 12, 1: 3, 5: 1" (steps: elements), the first 8 one by one and the rest as one range ("9..126: 4077"); "none"
/// when empty.
std::string steps_text(const std::vector<std::pair<int, uint64_t>>& steps);

}  // namespace fuseproof::audit
