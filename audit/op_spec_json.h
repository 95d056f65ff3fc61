// op_spec_json.h: the op spec (reference/op_spec.h) as JSON: `fuseproof ops --json`, the Python package's view of
// it, and the golden capture's input (scripts/capture_golden.py --spec).
#pragma once

#include <nlohmann/json.hpp>

#include "reference/op_spec.h"

namespace fuseproof::audit {

/// {"schema": "fuseproof.ops/1", "activations": [...], "ops": [...]}: every op with its inputs, layout, buffers,
/// Python signature and contracts (each with its nodes and digests.json key).
nlohmann::json op_spec_json();

/// One op's entry of op_spec_json().
nlohmann::json op_json(const ref::OpSpec& op);

/// "fn(x, bias) -> out or fn(x, bias, out)": what a Python subject of the op takes, from its buffers.
std::string python_signature(const ref::OpSpec& op);

}  // namespace fuseproof::audit
