// video_reader.h: decodes any libavformat-readable video (MP4, Y4M, ...) to RGB24 frames, with one-line errors.
#pragma once

#include <stdexcept>
#include <string>

#include "video_frames.h"

namespace fuseproof::e2e {

/// A bad input: missing, empty, truncated, not a video, corrupt. what() is one line naming the file.
class VideoError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The file exists but is not a whole, decodable video (empty, truncated, corrupt, not a video): `video compare`
/// exits 4 (common/exit_status.h), not 2.
class CorruptVideoError : public VideoError {
 public:
  using VideoError::VideoError;
};

struct DecodedVideo {
  VideoFrames frames;
  std::string pixel_format;  ///< the decoder's format before RGB24 conversion ("gbrp", "yuv444p", ...)
  std::string codec;         ///< "h264", "rawvideo", ...
  std::string container;     ///< libavformat's demuxer name
  std::string container_sha256;
};

/// Decodes every frame single-threaded and converts to RGB24 with swscale (bit-exact flags; gbrp -> rgb24 is a
/// repacking, so a lossless MP4 gives back its exact pixels). Throws VideoError.
DecodedVideo read_video(const std::string& path);

}  // namespace fuseproof::e2e
