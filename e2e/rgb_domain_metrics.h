// rgb_domain_metrics.h: RGB-domain SSIM (OpenCV's Gaussian recipe) and PSNR over RGB24 frames (`video compare --rgb-domain`).
#pragma once

#include <cstdint>

namespace fuseproof::e2e {

/// SSIM per RGB channel, their mean, and SSIM of BT.601 luma (0.299 R + 0.587 G + 0.114 B, unrounded).
/// 11x11 Gaussian window, sigma 1.5, C1 = (0.01 * 255)^2, C2 = (0.03 * 255)^2, computed in double.
struct SsimResult {
  double r = 0, g = 0, b = 0;
  double rgb = 0;  ///< (r + g + b) / 3
  double luma = 0;
};

SsimResult ssim_rgb24(const uint8_t* a, const uint8_t* b, int width, int height);

/// Sum of squared differences over every byte (all three channels), exact in integers.
uint64_t sse_rgb24(const uint8_t* a, const uint8_t* b, int width, int height);

/// 10 log10(255^2 / MSE), MSE over all RGB channels; +infinity when the frames are identical (not cv::PSNR's 361 dB).
double psnr_from_sse(uint64_t sse, int width, int height);

}  // namespace fuseproof::e2e
