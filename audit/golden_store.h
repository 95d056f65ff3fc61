// golden_store.h: locates golden data (source and unpacked build copies), verifies it against its provenance, and
// reads its digests and tables.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/exit_status.h"
#include "reference/dtype.h"

namespace fuseproof::audit {

/// golden/ in the source tree: $FUSEPROOF_GOLDEN_DIR, else the path configured at build time.
std::string default_golden_dir();
/// Unpacked archives (MUFU tables): $FUSEPROOF_GOLDEN_BUILD_DIR, else the path configured at build time.
std::string default_golden_build_dir();

/// Architectures with captured data (sub-folders of golden/ named sm_*).
std::vector<std::string> golden_archs(const std::string& golden_dir);

/// Checks golden/<arch>/<file> against the SHA-256 that golden/<arch>/provenance.json records for it (and that the
/// provenance is for <arch>). Throws MissingDataError (exit 3) when the file or the provenance is missing or
/// unreadable, CorruptDataError (exit 4) when the digest differs, the provenance has no entry for the file, or it
/// describes another architecture. Messages are one line naming the file and what was expected.
void verify_golden_file(const std::string& golden_dir, const std::string& arch, const std::string& file);

/// The same for the unpacked MUFU tables under golden_build_dir/<arch> (provenance "mufu.files").
void verify_mufu_tables(const std::string& golden_dir, const std::string& golden_build_dir, const std::string& arch);

/// The digest of `op` ("bias_gelu_tanh", "add_round") for dtype d in golden/<arch>/digests.json (verified first);
/// nullopt when the architecture has no digests.json or no such entry; throws CorruptDataError on a file that fails
/// verification or is malformed.
std::optional<std::string> golden_digest(const std::string& golden_dir, const std::string& arch, const std::string& op,
                                         ref::Dtype d);

/// Path of golden/<arch>/gelu_tanh_<dtype>.bin (may not exist).
std::string golden_gelu_table_path(const std::string& golden_dir, const std::string& arch, ref::Dtype d);

/// golden/<arch>/gelu_tanh_<dtype>.bin, verified; MissingDataError when absent, CorruptDataError when it fails
/// verification or is not exactly 65,536 little-endian uint16 entries.
std::vector<uint16_t> read_golden_gelu_table(const std::string& golden_dir, const std::string& arch, ref::Dtype d);

/// True when `path` can be created or truncated for writing (checked before long work starts).
bool can_write(const std::string& path, std::string* why);

}  // namespace fuseproof::audit
