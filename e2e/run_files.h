// run_files.h: a run directory read as outside data: run.json's shape checked, every path it names kept inside the
// directory, and every frame file re-hashed against the SHA-256 run.json records before anything judges it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fuseproof::e2e {

/// Mode names (the keys of run.json's "runs", and file names of `video encode`): a lower-case letter or digit, then
/// lower-case letters, digits, '-' and '_', at most 64 bytes ("lossless", "high-eager", "lossless-after-unmount").
bool is_mode_name(const std::string& name);

/// DIR/run.json, read and checked: a JSON object of schema kRunSchema whose "runs" is an object of mode names, each
/// with positive "frames", "width" and "height", "frame_sha256" listing one 64-hex SHA-256 per frame, a 64-hex
/// "rgb24_sha256", and "files" (when present) naming files inside DIR (common/path_inside.h). Throws UsageError (exit
/// 2) when DIR holds no run.json (a missing input file), CorruptDataError (exit 4, one line naming run.json, the field
/// and the value) otherwise.
nlohmann::json read_run_manifest(const std::string& run_dir);

/// runs.<mode>.files.<kind> resolved inside run_dir; nullopt when run.json records no such file. Throws
/// CorruptDataError when the path leaves run_dir. `run` must come from read_run_manifest.
std::optional<std::string> run_file(const std::string& run_dir, const nlohmann::json& run, const std::string& mode,
                                    const std::string& kind);

/// Re-hashes the rgb24 frames of `mode` (which run.json must hold), streamed: size, each frame against
/// "frame_sha256", the whole against "rgb24_sha256". Returns the file's resolved path. MissingDataError when run.json
/// records no rgb24 file for the mode, CorruptDataError as verify_run_files.
std::string verify_mode_frames(const std::string& run_dir, const nlohmann::json& run, const std::string& mode);

/// Re-hashes the frame files of `modes` and of every other mode that records one: the rgb24 file, streamed, frame by
/// frame against "frame_sha256" and whole against "rgb24_sha256"; an MP4 against "mp4_sha256". Each mode of `modes`
/// must record its rgb24 file (MissingDataError, exit 3: the hashes cannot be verified without it). A missing,
/// truncated, longer, unreadable or altered file, or one that is not a regular file, is a CorruptDataError (exit 4)
/// naming the file and what differs. Returns what was verified, for a report ("3 files, 243 frames").
std::string verify_run_files(const std::string& run_dir, const nlohmann::json& run,
                             const std::vector<std::string>& modes);

}  // namespace fuseproof::e2e
