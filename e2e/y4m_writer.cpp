// y4m_writer.cpp: RGB24 -> BT.601 limited-range YCbCr 4:4:4 planes, YUV4MPEG2 framing.
#include "y4m_writer.h"

#include <string>
#include <vector>

#include "common/atomic_file.h"

namespace fuseproof::e2e {
namespace {
// Integer BT.601 studio-swing coefficients (x256); the +32768 offset (128 << 8) keeps the
// shifted value non-negative and adds the chroma offset 128.
inline uint8_t y_of(int r, int g, int b) { return static_cast<uint8_t>(((66 * r + 129 * g + 25 * b + 128) >> 8) + 16); }
inline uint8_t cb_of(int r, int g, int b) {
  return static_cast<uint8_t>((-38 * r - 74 * g + 112 * b + 128 + 32768) >> 8);
}
inline uint8_t cr_of(int r, int g, int b) {
  return static_cast<uint8_t>((112 * r - 94 * g - 18 * b + 128 + 32768) >> 8);
}
}  // namespace

void write_y4m(const std::string& path, const VideoFrames& frames, int fps) {
  AtomicFile f(path);  // a killed run leaves the previous file intact
  f.write("YUV4MPEG2 W" + std::to_string(frames.width) + " H" + std::to_string(frames.height) + " F" +
          std::to_string(fps) + ":1 Ip A1:1 C444\n");
  const size_t plane = static_cast<size_t>(frames.width) * static_cast<size_t>(frames.height);
  std::vector<uint8_t> yuv(3 * plane);
  for (int i = 0; i < frames.count; ++i) {
    const uint8_t* p = frames.frame(i);
    for (size_t k = 0; k < plane; ++k) {
      const int r = p[3 * k], g = p[3 * k + 1], b = p[3 * k + 2];
      yuv[k] = y_of(r, g, b);
      yuv[plane + k] = cb_of(r, g, b);
      yuv[2 * plane + k] = cr_of(r, g, b);
    }
    f.write("FRAME\n");
    f.write(yuv.data(), yuv.size());
  }
  f.commit();
}

}  // namespace fuseproof::e2e
