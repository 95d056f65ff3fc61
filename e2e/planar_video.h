// planar_video.h: a clip of 8-bit planar frames in one pixel format (yuv420p, yuv444p, gbrp, gray, ...): the comparator's input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "video_frames.h"

namespace fuseproof::e2e {

/// `count` frames; each frame is its planes one after another, each plane packed (stride = plane width). Chroma planes
/// are width >> log2_chroma_w rounded up (FFmpeg's AV_CEIL_RSHIFT), likewise for height. RGB clips are gbrp: planes G,
/// B, R, in FFmpeg's order.
struct PlanarVideo {
  std::string pixel_format;  ///< FFmpeg's name: "yuv420p", "yuv444p", "gbrp", "gray", ...
  int width = 0;
  int height = 0;
  int count = 0;
  int planes = 3;            ///< 1 (gray) or 3
  int log2_chroma_w = 0;
  int log2_chroma_h = 0;
  bool rgb = false;          ///< planes are G, B, R
  std::vector<uint8_t> data;

  int plane_width(int p) const { return p == 0 ? width : -((-width) >> log2_chroma_w); }
  int plane_height(int p) const { return p == 0 ? height : -((-height) >> log2_chroma_h); }
  size_t plane_bytes(int p) const { return static_cast<size_t>(plane_width(p)) * static_cast<size_t>(plane_height(p)); }
  size_t plane_offset(int p) const;
  size_t frame_bytes() const { return plane_offset(planes); }
  const uint8_t* plane(int f, int p) const { return data.data() + frame_bytes() * static_cast<size_t>(f) + plane_offset(p); }
  uint8_t* plane(int f, int p) { return data.data() + frame_bytes() * static_cast<size_t>(f) + plane_offset(p); }
  /// Lower-case component name of plane p: "y", "u", "v"; "g", "b", "r"; "y" for gray.
  std::string plane_name(int p) const;
  /// Planes in the order reports list them: Y, U, V or R, G, B.
  std::vector<int> report_order() const;
};

/// The RGB24 clip as gbrp: a lossless repacking (no arithmetic).
PlanarVideo gbrp_from_rgb24(const VideoFrames& frames);

}  // namespace fuseproof::e2e
