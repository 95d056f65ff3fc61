// golden_digests.h: the one reader of golden/<arch>/digests.json (SHA-256 of an op's outputs over the 2^32 domain).
#pragma once

#include <optional>
#include <string>

#include "common/exit_status.h"
#include "reference/dtype.h"

namespace fuseproof {

/// The digest of `op` ("bias_gelu_tanh", "add_round") for dtype d in the digests.json at `path`; nullopt when the
/// file or the entry is missing; verifies the file against its provenance.json first (golden_verify.h). Throws
/// MissingDataError (exit 3) when it cannot be read, CorruptDataError (exit 4) when it fails the provenance check,
/// is not a JSON object, or the entry is not a 64-digit hex SHA-256 (one line each).
std::optional<std::string> read_golden_digest(const std::string& path, const std::string& op, ref::Dtype d);

/// As read_golden_digest, but a missing file or entry is a MissingDataError too (for callers that cannot go on).
std::string require_golden_digest(const std::string& path, const std::string& op, ref::Dtype d);

}  // namespace fuseproof
