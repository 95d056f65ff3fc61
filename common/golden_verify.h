// golden_verify.h: a golden file checked against the SHA-256 its provenance.json records, before anything reads it.
#pragma once

#include <string>

#include "common/exit_status.h"

namespace fuseproof {

/// Checks the file at `path` against `<dir of path>/provenance.json`: its "arch" must name that folder and its
/// `files` (or `files_key` inside it, e.g. "mufu.files") must record this file's SHA-256. Throws MissingDataError
/// (exit 3) when the file or the provenance is missing or unreadable, CorruptDataError (exit 4) when the digest
/// differs, the provenance has no entry for the file, or it describes another architecture. One line each, naming the
/// file and what was expected.
void verify_golden_file(const std::string& path);

/// The same for a file unpacked elsewhere (the MUFU tables in the build tree): its digest is looked up under
/// "mufu"."files" in `provenance_path`, whose "arch" must be `arch`.
void verify_unpacked_golden_file(const std::string& path, const std::string& provenance_path, const std::string& arch);

}  // namespace fuseproof
