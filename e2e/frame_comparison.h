// frame_comparison.h: two planar clips compared frame by frame (SHA-256, FFmpeg-style PSNR/SSIM), summarised and reported.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "planar_video.h"
#include "video_metrics.h"

namespace fuseproof::e2e {

/// RGB-domain metrics of one frame (`video compare --rgb-domain`): the decoded frames converted to RGB24, SSIM by
/// OpenCV's Gaussian recipe per channel, their mean and BT.601 luma, PSNR over all RGB bytes. Not FFmpeg's numbers.
struct RgbDomainFrame {
  double ssim_r = 0, ssim_g = 0, ssim_b = 0, ssim_rgb = 0, ssim_luma = 0;
  double psnr = 0;
};

struct FrameComparison {
  int index = 0;
  std::string sha_baseline, sha_candidate;  ///< SHA-256 of the frame's compared planes
  bool identical = false;
  FrameMetrics metrics;                     ///< native-plane PSNR and SSIM, FFmpeg's way
  std::optional<RgbDomainFrame> rgb_domain;
  std::optional<double> lpips;
};

/// One component's summary over the clip. psnr_mean is FFmpeg's summary figure: the PSNR of the plane's MSE averaged
/// over frames (not the mean of per-frame PSNR, which is infinite as soon as one frame is identical).
struct PlaneSummary {
  std::string name;  ///< "y", "u", "v" or "r", "g", "b"
  double psnr_min = 0, psnr_mean = 0, ssim_min = 0, ssim_mean = 0;
};

struct VideoComparison {
  std::string baseline, candidate;                      ///< paths or run-directory names
  std::string container_sha_baseline, container_sha_candidate;
  bool container_equal = false;
  std::string pixel_format_baseline, pixel_format_candidate;  ///< as decoded
  std::string codec_baseline, codec_candidate;
  std::string metrics_pixel_format;  ///< the planes the metrics and frame hashes are computed on
  std::string conversion = "none";   ///< how the clips were brought to metrics_pixel_format
  int frames = 0, width = 0, height = 0;
  std::vector<FrameComparison> per_frame;
  int identical_frames = 0;
  bool frames_identical = false;  ///< every compared frame's SHA-256 equal: the identity gate (exit 0)
  std::vector<std::string> plane_names;  ///< plane order (FrameMetrics): "y", "u", "v" or "g", "b", "r"
  std::vector<PlaneSummary> planes;      ///< report order: Y, U, V or R, G, B
  double psnr_all_min = 0, psnr_all_mean = 0;  ///< FFmpeg's psnr "min" and "average"
  double ssim_all_min = 0, ssim_all_mean = 0;  ///< FFmpeg's ssim "All": per-frame minimum and mean
  int worst_frame = 0;  ///< lowest ssim_all (ties: lowest psnr_all, then lowest index)
  bool rgb_domain = false;
  double rgb_domain_ssim_min = 0, rgb_domain_ssim_mean = 0, rgb_domain_ssim_luma_min = 0, rgb_domain_ssim_luma_mean = 0;
  double rgb_domain_psnr_min = 0, rgb_domain_psnr_mean = 0;
  std::string lpips_model;  ///< empty: LPIPS not computed
  double lpips_mean = 0, lpips_max = 0;
};

/// Compares two clips of one pixel format, size and frame count (throws std::invalid_argument otherwise): per-frame
/// SHA-256 of the planes, FFmpeg-style PSNR and SSIM per plane and "All", and their summaries. The caller fills the
/// paths, container hashes, formats, conversion and the optional RGB-domain and LPIPS parts (then call summarise_extras).
VideoComparison compare_planar(const PlanarVideo& baseline, const PlanarVideo& candidate);
/// Fills the RGB-domain and LPIPS summaries from per_frame (after the caller set them per frame).
void summarise_extras(VideoComparison& c);

/// JSON report (schema fuseproof.video.compare/2): flat keys psnr_all_min, psnr_all_mean, ssim_all_min, ssim_all_mean
/// and psnr_<plane>_min ... per plane; infinite PSNR is the string "inf" (JSON has no infinity).
nlohmann::json to_json(const VideoComparison& c, bool per_frame = true);
/// A Markdown table for a pull request.
std::string to_markdown(const VideoComparison& c);
/// A few lines for the terminal.
std::string to_terminal(const VideoComparison& c);
/// The one stderr line of a comparison that found a difference: "'a' and 'b' differ in 3 of 81 frames (first: frame
/// 7, SSIM All min 0.998123)".
std::string difference_line(const VideoComparison& c);
/// "inf" or the value with `digits` decimals.
std::string format_psnr(double psnr, int digits = 2);

}  // namespace fuseproof::e2e
