// y4m_writer.h: writes RGB24 frames as a raw YUV4MPEG2 (Y4M) 4:4:4 file, with no dependency beyond the standard library.
#pragma once

#include <string>

#include "video_frames.h"

namespace fuseproof::e2e {

/// Writes `frames` as Y4M "C444" (BT.601 limited range, integer conversion: the same bytes on every machine).
/// The RGB -> YCbCr step is lossy; identity gates use the RGB24 frames or the lossless MP4, not the Y4M.
/// Throws std::runtime_error naming the path on an I/O failure.
void write_y4m(const std::string& path, const VideoFrames& frames, int fps);

}  // namespace fuseproof::e2e
