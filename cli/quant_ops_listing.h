// quant_ops_listing.h: the quantization ops of the op spec (reference/quant_spec.h) for `fuseproof ops`: a block per
// op for people, an array for `--json`.
#pragma once

#include <nlohmann/json.hpp>

namespace fuseproof::cli {

/// The quantization ops, one block each: inputs, activation stage, parameters, the eval record, every contract's
/// steps, specials and source.
void print_quant_ops_text();
/// The same as JSON: the value of `quant_ops` in `fuseproof ops --json`.
nlohmann::json quant_ops_json();

}  // namespace fuseproof::cli
