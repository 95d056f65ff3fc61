// video_metrics.h: PSNR and SSIM on native planes, computed the way FFmpeg's psnr and ssim filters compute them.
#pragma once

#include <array>
#include <cstdint>

#include "planar_video.h"

namespace fuseproof::e2e {

/// Sum of squared differences of two w x h planes (stride w), exact in integers (libavfilter/vf_psnr.c).
uint64_t sse_plane(const uint8_t* a, const uint8_t* b, int w, int h);

/// 10 log10(255^2 / mse); +infinity when mse is 0 (FFmpeg prints "inf" too).
double psnr_of_mse(double mse);

/// SSIM of two w x h planes (stride w) as libavfilter/vf_ssim.c computes it for 8 bits (x264's algorithm): integer
/// sums over 4x4 blocks, SSIM of every overlapping 8x8 window (2x2 blocks, stride 4) with C1 = round(0.01^2 255^2 64)
/// and C2 = round(0.03^2 255^2 64 63) in float, averaged over the (w/4 - 1)(h/4 - 1) windows; trailing w % 4 columns
/// and h % 4 rows are not seen. Needs w, h >= 8 (throws std::invalid_argument otherwise).
double ssim_plane(const uint8_t* a, const uint8_t* b, int w, int h);

/// One frame's metrics, per plane in plane order (PlanarVideo::plane_name), and combined as FFmpeg combines them
/// ("All"): each plane weighted by its share of the frame's pixels (vf_psnr planeweight, vf_ssim coefs), so
/// mse_all = sum of plane SSE / all pixels, psnr_all = psnr_of_mse(mse_all), ssim_all = sum of share x plane SSIM.
struct FrameMetrics {
  int planes = 3;
  std::array<uint64_t, 3> sse{};
  std::array<double, 3> mse{}, psnr{}, ssim{};
  double mse_all = 0, psnr_all = 0, ssim_all = 0;
};

/// Frame `f` of two clips of the same pixel format and size (the caller checks).
FrameMetrics frame_metrics(const PlanarVideo& a, const PlanarVideo& b, int f);

}  // namespace fuseproof::e2e
