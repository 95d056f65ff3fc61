// video_metrics.cpp: FFmpeg's PSNR (vf_psnr.c) and x264-style SSIM (vf_ssim.c) for 8-bit planes, re-implemented.
#include "video_metrics.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace fuseproof::e2e {
namespace {

/// Sums of a, b, a^2 + b^2 and a b over one 4x4 block.
struct BlockSums {
  int64_t s1 = 0, s2 = 0, ss = 0, s12 = 0;
};

/// SSIM of one 8x8 window from its summed 4x4 sums (64 pixels), FFmpeg's ssim_end1 in float.
float ssim_window(int64_t s1, int64_t s2, int64_t ss, int64_t s12) {
  constexpr int64_t kC1 = static_cast<int64_t>(.01 * .01 * 255 * 255 * 64 + .5);       // 416
  constexpr int64_t kC2 = static_cast<int64_t>(.03 * .03 * 255 * 255 * 64 * 63 + .5);  // 235963
  const int64_t vars = ss * 64 - s1 * s1 - s2 * s2;
  const int64_t covar = s12 * 64 - s1 * s2;
  return static_cast<float>(2 * s1 * s2 + kC1) * static_cast<float>(2 * covar + kC2) /
         (static_cast<float>(s1 * s1 + s2 * s2 + kC1) * static_cast<float>(vars + kC2));
}

/// The 4x4 block sums of block row `by` of the plane.
void block_row(const uint8_t* a, const uint8_t* b, int w, int by, int blocks, std::vector<BlockSums>& out) {
  for (int bx = 0; bx < blocks; ++bx) {
    BlockSums s;
    for (int y = 0; y < 4; ++y) {
      const size_t row = static_cast<size_t>(4 * by + y) * static_cast<size_t>(w) + static_cast<size_t>(4 * bx);
      for (int x = 0; x < 4; ++x) {
        const int va = a[row + static_cast<size_t>(x)], vb = b[row + static_cast<size_t>(x)];
        s.s1 += va;
        s.s2 += vb;
        s.ss += va * va + vb * vb;
        s.s12 += va * vb;
      }
    }
    out[static_cast<size_t>(bx)] = s;
  }
}

}  // namespace

uint64_t sse_plane(const uint8_t* a, const uint8_t* b, int w, int h) {
  const size_t n = static_cast<size_t>(w) * static_cast<size_t>(h);
  uint64_t sse = 0;
  for (size_t i = 0; i < n; ++i) {
    const int d = static_cast<int>(a[i]) - static_cast<int>(b[i]);
    sse += static_cast<uint64_t>(d * d);
  }
  return sse;
}

double psnr_of_mse(double mse) {
  if (mse == 0) return std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(255.0 * 255.0 / mse);
}

double ssim_plane(const uint8_t* a, const uint8_t* b, int w, int h) {
  if (w < 8 || h < 8) {
    throw std::invalid_argument("ssim: every plane must be at least 8x8, got " + std::to_string(w) + "x" +
                                std::to_string(h));
  }
  const int bw = w / 4, bh = h / 4;
  std::vector<BlockSums> upper(static_cast<size_t>(bw)), lower(static_cast<size_t>(bw));
  block_row(a, b, w, 0, bw, upper);
  double sum = 0;
  for (int by = 1; by < bh; ++by) {
    block_row(a, b, w, by, bw, lower);
    // FFmpeg sums one window row in float, then adds it to the plane's total.
    float line = 0;
    for (int x = 0; x + 1 < bw; ++x) {
      const BlockSums& p = upper[static_cast<size_t>(x)];
      const BlockSums& q = upper[static_cast<size_t>(x + 1)];
      const BlockSums& r = lower[static_cast<size_t>(x)];
      const BlockSums& t = lower[static_cast<size_t>(x + 1)];
      line += ssim_window(p.s1 + q.s1 + r.s1 + t.s1, p.s2 + q.s2 + r.s2 + t.s2, p.ss + q.ss + r.ss + t.ss,
                          p.s12 + q.s12 + r.s12 + t.s12);
    }
    sum += line;
    upper.swap(lower);
  }
  return sum / (static_cast<double>(bh - 1) * static_cast<double>(bw - 1));
}

FrameMetrics frame_metrics(const PlanarVideo& a, const PlanarVideo& b, int f) {
  FrameMetrics m;
  m.planes = a.planes;
  // FFmpeg weighs each plane by its share of the pixels; summing size x value and dividing once is the same sum, and
  // gives exactly 1 (SSIM) and 0 (MSE) for identical frames.
  double pixels = 0, sse_all = 0, ssim_weighted = 0;
  for (int p = 0; p < a.planes; ++p) {
    const auto i = static_cast<size_t>(p);
    const int w = a.plane_width(p), h = a.plane_height(p);
    const double n = static_cast<double>(w) * h;
    m.sse[i] = sse_plane(a.plane(f, p), b.plane(f, p), w, h);
    m.mse[i] = static_cast<double>(m.sse[i]) / n;
    m.psnr[i] = psnr_of_mse(m.mse[i]);
    m.ssim[i] = ssim_plane(a.plane(f, p), b.plane(f, p), w, h);
    pixels += n;
    sse_all += static_cast<double>(m.sse[i]);
    ssim_weighted += n * m.ssim[i];
  }
  m.mse_all = sse_all / pixels;
  m.ssim_all = ssim_weighted / pixels;
  m.psnr_all = psnr_of_mse(m.mse_all);
  return m;
}

}  // namespace fuseproof::e2e
