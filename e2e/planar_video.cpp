// planar_video.cpp: plane geometry and names, and the RGB24 -> gbrp repacking.
#include "planar_video.h"

namespace fuseproof::e2e {

size_t PlanarVideo::plane_offset(int p) const {
  size_t off = 0;
  for (int i = 0; i < p; ++i) off += plane_bytes(i);
  return off;
}

std::string PlanarVideo::plane_name(int p) const {
  static const char* kYuv[] = {"y", "u", "v"};
  static const char* kGbr[] = {"g", "b", "r"};
  return (rgb ? kGbr : kYuv)[p];
}

std::vector<int> PlanarVideo::report_order() const {
  if (planes == 1) return {0};
  if (rgb) return {2, 0, 1};
  return {0, 1, 2};
}

PlanarVideo gbrp_from_rgb24(const VideoFrames& frames) {
  PlanarVideo v;
  v.pixel_format = "gbrp";
  v.width = frames.width;
  v.height = frames.height;
  v.count = frames.count;
  v.rgb = true;
  v.data.resize(v.frame_bytes() * static_cast<size_t>(v.count));
  const size_t n = static_cast<size_t>(v.width) * static_cast<size_t>(v.height);
  for (int f = 0; f < v.count; ++f) {
    const uint8_t* src = frames.frame(f);
    uint8_t* g = v.plane(f, 0);
    uint8_t* b = v.plane(f, 1);
    uint8_t* r = v.plane(f, 2);
    for (size_t i = 0; i < n; ++i) {
      r[i] = src[3 * i];
      g[i] = src[3 * i + 1];
      b[i] = src[3 * i + 2];
    }
  }
  return v;
}

}  // namespace fuseproof::e2e
