// comparison_plot.cpp: two line panels and a baseline | candidate | |difference| strip, drawn with OpenCV.
#include "comparison_plot.h"

#include <opencv2/core.hpp>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "common/atomic_file.h"

namespace fuseproof::e2e {
namespace {

constexpr int kWidth = 960;
constexpr int kPanel = 220;
constexpr int kMargin = 60;
const cv::Scalar kInk(40, 40, 40), kGrid(220, 220, 220), kSsim(180, 90, 20), kPsnr(30, 120, 220);

std::string fmt(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

void text(cv::Mat& img, const std::string& s, cv::Point at, double scale = 0.45, cv::Scalar color = kInk) {
  cv::putText(img, s, at, cv::FONT_HERSHEY_SIMPLEX, scale, color, 1, cv::LINE_AA);
}

/// One line panel at y0; value(i) may be +inf (drawn at the top, labelled).
void panel(cv::Mat& img, int y0, const std::string& title, int n, const std::function<double(int)>& value,
           double lo, double hi, cv::Scalar color, int digits) {
  const cv::Rect box(kMargin, y0 + 25, kWidth - 2 * kMargin, kPanel - 50);
  cv::rectangle(img, box, kInk, 1);
  text(img, title, {kMargin, y0 + 18}, 0.55);
  for (int k = 0; k <= 4; ++k) {
    const int y = box.y + box.height - k * box.height / 4;
    cv::line(img, {box.x, y}, {box.x + box.width, y}, kGrid, 1);
    text(img, fmt(lo + (hi - lo) * k / 4, digits), {4, y + 4}, 0.35);
  }
  const auto px = [&](int i) { return box.x + (n <= 1 ? 0 : i * box.width / (n - 1)); };
  const auto py = [&](double v) {
    const double t = std::isinf(v) ? 1.0 : (hi > lo ? (v - lo) / (hi - lo) : 1.0);
    return box.y + box.height - static_cast<int>(std::lround(std::clamp(t, 0.0, 1.0) * box.height));
  };
  bool any_inf = false;
  for (int i = 0; i < n; ++i) {
    const double v = value(i);
    any_inf |= std::isinf(v);
    if (i > 0) cv::line(img, {px(i - 1), py(value(i - 1))}, {px(i), py(v)}, color, 2, cv::LINE_AA);
    cv::circle(img, {px(i), py(v)}, 2, color, cv::FILLED, cv::LINE_AA);
  }
  text(img, "frame 0 .. " + std::to_string(n - 1), {box.x + box.width - 110, box.y + box.height + 18}, 0.4);
  if (any_inf) text(img, "top edge = inf (identical frame)", {box.x + 6, box.y + 14}, 0.4, color);
}

}  // namespace

void write_comparison_plot(const std::string& path, const VideoComparison& c, const VideoFrames& baseline,
                           const VideoFrames& candidate) {
  const int n = c.frames;
  const FrameComparison& worst = c.per_frame.at(static_cast<size_t>(c.worst_frame));
  // Frame strip: baseline | candidate | heat map of max-channel |difference|, scaled to fit the width.
  const int cell_w = (kWidth - 4 * 10) / 3;
  const int cell_h = std::max(1, cell_w * c.height / c.width);
  cv::Mat img(2 * kPanel + cell_h + 90, kWidth, CV_8UC3, cv::Scalar(255, 255, 255));

  double ssim_lo = c.ssim_all_min;
  if (!(ssim_lo < 1.0)) ssim_lo = 0.99;
  ssim_lo = std::floor(ssim_lo * 1000.0) / 1000.0;
  panel(img, 0, "SSIM All per frame (FFmpeg ssim; min " + fmt(c.ssim_all_min, 6) + ", mean " + fmt(c.ssim_all_mean, 6) + ")", n,
        [&](int i) { return c.per_frame[static_cast<size_t>(i)].metrics.ssim_all; }, ssim_lo, 1.0, kSsim, 3);
  double p_lo = 1e300, p_hi = -1e300;
  for (const FrameComparison& f : c.per_frame) {
    if (!std::isinf(f.metrics.psnr_all)) {
      p_lo = std::min(p_lo, f.metrics.psnr_all);
      p_hi = std::max(p_hi, f.metrics.psnr_all);
    }
  }
  if (p_lo > p_hi) p_lo = 40, p_hi = 60;  // every frame identical: an arbitrary finite scale under the inf line
  p_lo = std::floor(p_lo - 1.0);
  p_hi = std::ceil(p_hi + 1.0);
  panel(img, kPanel, "PSNR All per frame, dB (min " + format_psnr(c.psnr_all_min) + ", mean " + format_psnr(c.psnr_all_mean) + ")",
        n, [&](int i) { return c.per_frame[static_cast<size_t>(i)].metrics.psnr_all; }, p_lo, p_hi, kPsnr, 1);

  const cv::Mat a(c.height, c.width, CV_8UC3, const_cast<uint8_t*>(baseline.frame(c.worst_frame)));
  const cv::Mat b(c.height, c.width, CV_8UC3, const_cast<uint8_t*>(candidate.frame(c.worst_frame)));
  cv::Mat diff, diff1, heat, a_bgr, b_bgr;
  cv::absdiff(a, b, diff);
  cv::Mat ch[3];
  cv::split(diff, ch);
  diff1 = cv::max(ch[0], cv::max(ch[1], ch[2]));
  double dmax = 0;
  cv::minMaxLoc(diff1, nullptr, &dmax);
  diff1.convertTo(diff1, CV_8U, dmax > 0 ? 255.0 / dmax : 0.0);
  cv::applyColorMap(diff1, heat, cv::COLORMAP_INFERNO);
  cv::cvtColor(a, a_bgr, cv::COLOR_RGB2BGR);
  cv::cvtColor(b, b_bgr, cv::COLOR_RGB2BGR);
  const int y0 = 2 * kPanel + 10;
  text(img, "worst frame " + std::to_string(c.worst_frame) + ": SSIM " + fmt(worst.metrics.ssim_all, 6) + ", PSNR " +
                format_psnr(worst.metrics.psnr_all) + " dB; heat map: max-channel |difference|, full scale = " +
                std::to_string(static_cast<int>(dmax)) + " levels",
       {10, y0 + 14}, 0.45);
  const cv::Mat* cells[3] = {&a_bgr, &b_bgr, &heat};
  const char* labels[3] = {"baseline", "candidate", "|difference|"};
  for (int k = 0; k < 3; ++k) {
    cv::Mat big;
    cv::resize(*cells[k], big, cv::Size(cell_w, cell_h), 0, 0, cv::INTER_NEAREST);
    const int x = 10 + k * (cell_w + 10);
    big.copyTo(img(cv::Rect(x, y0 + 30, cell_w, cell_h)));
    text(img, labels[k], {x, y0 + 30 + cell_h + 18}, 0.45);
  }
  text(img, c.baseline + "  vs  " + c.candidate, {10, img.rows - 8}, 0.4);
  try {
    std::vector<uchar> png;
    if (!cv::imencode(".png", img, png)) throw std::runtime_error("plot: cannot encode '" + path + "' as PNG");
    write_file_atomically(path, std::string_view(reinterpret_cast<const char*>(png.data()), png.size()));
  } catch (const cv::Exception& e) {
    throw std::runtime_error("plot: cannot write '" + path + "': " + e.msg);
  }
}

}  // namespace fuseproof::e2e
