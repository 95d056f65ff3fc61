// sha256.h: SHA-256 hex digests of memory, files and per-frame RGB24 pixels (OpenSSL EVP).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "video_frames.h"

namespace fuseproof::e2e {

/// Lower-case hex SHA-256 of a byte range.
std::string sha256_hex(const void* data, size_t size);
/// Lower-case hex SHA-256 of a file's bytes; throws std::runtime_error naming the path when it cannot be read.
std::string sha256_file_hex(const std::string& path);
/// One digest per frame, over that frame's packed RGB24 bytes.
std::vector<std::string> frame_sha256(const VideoFrames& frames);

}  // namespace fuseproof::e2e
