// video_frames.h: a clip of 8-bit RGB24 frames in memory: the pipeline's output, and the decoded RGB24 view of a compared file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fuseproof::e2e {

/// `count` frames of height x width packed RGB24, frame-major: rgb[((f * height + y) * width + x) * 3 + c].
struct VideoFrames {
  int width = 0;
  int height = 0;
  int count = 0;
  std::vector<uint8_t> rgb;

  size_t frame_bytes() const { return static_cast<size_t>(width) * static_cast<size_t>(height) * 3; }
  const uint8_t* frame(int f) const { return rgb.data() + frame_bytes() * static_cast<size_t>(f); }
  uint8_t* frame(int f) { return rgb.data() + frame_bytes() * static_cast<size_t>(f); }
};

}  // namespace fuseproof::e2e
