// rgb_domain_metrics.cpp: RGB-domain SSIM after OpenCV's documented getMSSIM recipe (in CV_64F), and exact-integer PSNR.
#include "rgb_domain_metrics.h"

#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <cmath>
#include <limits>

namespace fuseproof::e2e {
namespace {

constexpr double kC1 = (0.01 * 255) * (0.01 * 255);
constexpr double kC2 = (0.03 * 255) * (0.03 * 255);
const cv::Size kWindow(11, 11);
constexpr double kSigma = 1.5;

/// Mean SSIM of two single-channel CV_64F images.
double ssim_plane(const cv::Mat& i1, const cv::Mat& i2) {
  cv::Mat mu1, mu2;
  cv::GaussianBlur(i1, mu1, kWindow, kSigma);
  cv::GaussianBlur(i2, mu2, kWindow, kSigma);
  const cv::Mat mu1_2 = mu1.mul(mu1), mu2_2 = mu2.mul(mu2), mu1_mu2 = mu1.mul(mu2);
  cv::Mat s1, s2, s12;
  cv::GaussianBlur(i1.mul(i1), s1, kWindow, kSigma);
  cv::GaussianBlur(i2.mul(i2), s2, kWindow, kSigma);
  cv::GaussianBlur(i1.mul(i2), s12, kWindow, kSigma);
  s1 -= mu1_2;
  s2 -= mu2_2;
  s12 -= mu1_mu2;
  const cv::Mat t3 = (2 * mu1_mu2 + kC1).mul(2 * s12 + kC2);
  const cv::Mat t1 = (mu1_2 + mu2_2 + kC1).mul(s1 + s2 + kC2);
  cv::Mat map;
  cv::divide(t3, t1, map);
  return cv::mean(map)[0];
}

}  // namespace

SsimResult ssim_rgb24(const uint8_t* a, const uint8_t* b, int width, int height) {
  const cv::Mat ma(height, width, CV_8UC3, const_cast<uint8_t*>(a));
  const cv::Mat mb(height, width, CV_8UC3, const_cast<uint8_t*>(b));
  cv::Mat fa, fb;
  ma.convertTo(fa, CV_64F);
  mb.convertTo(fb, CV_64F);
  cv::Mat ca[3], cb[3];
  cv::split(fa, ca);
  cv::split(fb, cb);
  SsimResult r;
  r.r = ssim_plane(ca[0], cb[0]);
  r.g = ssim_plane(ca[1], cb[1]);
  r.b = ssim_plane(ca[2], cb[2]);
  r.rgb = (r.r + r.g + r.b) / 3.0;
  const cv::Mat la = 0.299 * ca[0] + 0.587 * ca[1] + 0.114 * ca[2];
  const cv::Mat lb = 0.299 * cb[0] + 0.587 * cb[1] + 0.114 * cb[2];
  r.luma = ssim_plane(la, lb);
  return r;
}

uint64_t sse_rgb24(const uint8_t* a, const uint8_t* b, int width, int height) {
  const size_t n = static_cast<size_t>(width) * static_cast<size_t>(height) * 3;
  uint64_t sse = 0;
  for (size_t i = 0; i < n; ++i) {
    const int d = static_cast<int>(a[i]) - static_cast<int>(b[i]);
    sse += static_cast<uint64_t>(d * d);
  }
  return sse;
}

double psnr_from_sse(uint64_t sse, int width, int height) {
  if (sse == 0) return std::numeric_limits<double>::infinity();
  const double mse = static_cast<double>(sse) / (static_cast<double>(width) * height * 3);
  return 10.0 * std::log10(255.0 * 255.0 / mse);
}

}  // namespace fuseproof::e2e
