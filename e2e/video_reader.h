// video_reader.h: decodes any libavformat-readable video (MP4, Y4M, ...) to its native planes and to RGB24, with one-line errors.
#pragma once

#include <stdexcept>
#include <string>

#include "planar_video.h"
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
  PlanarVideo planes;        ///< the decoded frames in the metrics' planar format (see metrics_conversion)
  std::string metrics_conversion = "none";  ///< "none", or how the decoder's format was repacked into planes'
  VideoFrames frames;        ///< the same frames converted to RGB24 (RGB-domain metrics, plot, LPIPS)
  std::string pixel_format;  ///< the decoder's format before RGB24 conversion ("gbrp", "yuv444p", ...)
  std::string codec;         ///< "h264", "rawvideo", ...
  std::string container;     ///< libavformat's demuxer name
  std::string container_sha256;
};

/// Decodes every frame single-threaded. The native planes are the decoder's own when it outputs an 8-bit planar
/// format (yuv420p, yuv444p, gbrp, ...); 8-bit packed formats are repacked by swscale (rgb24 -> gbrp, nv12 -> yuv420p);
/// deeper formats are refused. RGB24 by swscale (bit-exact flags; gbrp -> rgb24 is a repacking, so a lossless MP4 gives
/// back its exact pixels). Throws VideoError.
DecodedVideo read_video(const std::string& path);

}  // namespace fuseproof::e2e
