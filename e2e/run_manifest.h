// run_manifest.h: the JSON record of one pipeline run directory (run.json): config, device, per-mode frame hashes and files.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "video_frames.h"

namespace fuseproof::e2e {

inline constexpr const char* kRunSchema = "fuseproof.e2e.run/1";
inline constexpr const char* kGoldenSchema = "fuseproof.e2e.golden/1";
/// The pseudo-mode that replays lossless on a pipeline that has been mounted (high) and unmounted again.
inline constexpr const char* kLosslessAfterUnmount = "lossless-after-unmount";

/// One SHA-256 per frame, over that frame's packed RGB24 bytes.
std::vector<std::string> frame_sha256(const VideoFrames& frames);

/// {"frames", "width", "height", "frame_sha256": [...], "rgb24_sha256"}: the identity of a clip's RGB24 pixels.
nlohmann::json describe_frames(const VideoFrames& frames);

/// Reads a JSON file; throws std::runtime_error "cannot read 'p'" or "'p' is not valid JSON: <why>".
nlohmann::json read_json_file(const std::string& path);
/// Writes pretty JSON (2-space indent, trailing newline); throws std::runtime_error naming the path on failure.
void write_json_file(const std::string& path, const nlohmann::json& j);

/// Raw RGB24 frames, frame after frame, no header (the manifest holds the sizes).
void write_rgb24(const std::string& path, const VideoFrames& frames);
/// Reads `path` as `count` frames of width x height RGB24; throws std::runtime_error if the size does not match.
VideoFrames read_rgb24(const std::string& path, int width, int height, int count);

}  // namespace fuseproof::e2e
