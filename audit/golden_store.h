// golden_store.h: locates golden data (source and unpacked build copies) and reads its digests and provenance.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "reference/dtype.h"

namespace fuseproof::audit {

/// golden/ in the source tree: $FUSEPROOF_GOLDEN_DIR, else the path configured at build time.
std::string default_golden_dir();
/// Unpacked archives (MUFU tables): $FUSEPROOF_GOLDEN_BUILD_DIR, else the path configured at build time.
std::string default_golden_build_dir();

/// Architectures with captured data (sub-folders of golden/ named sm_*).
std::vector<std::string> golden_archs(const std::string& golden_dir);

/// The digest of `op` ("bias_gelu_tanh", "add_round") for dtype d in golden/<arch>/digests.json; nullopt when the
/// architecture or entry is missing; throws std::runtime_error (one line) on an unreadable or malformed file.
std::optional<std::string> golden_digest(const std::string& golden_dir, const std::string& arch, const std::string& op,
                                         ref::Dtype d);

/// Path of golden/<arch>/gelu_tanh_<dtype>.bin (may not exist).
std::string golden_gelu_table_path(const std::string& golden_dir, const std::string& arch, ref::Dtype d);

/// True when `path` can be created or truncated for writing (checked before long work starts).
bool can_write(const std::string& path, std::string* why);

}  // namespace fuseproof::audit
