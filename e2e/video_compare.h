// video_compare.h: `video compare` maths and reports: container and per-frame SHA-256, per-frame SSIM and PSNR, min/mean.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "video_metrics.h"
#include "video_reader.h"

namespace fuseproof::e2e {

struct FrameComparison {
  int index = 0;
  std::string sha_baseline, sha_candidate;  ///< SHA-256 of the decoded RGB24 pixels
  bool identical = false;
  SsimResult ssim;
  uint64_t sse = 0;
  double psnr = 0;  ///< +infinity when identical
};

struct VideoComparison {
  std::string baseline, candidate;  ///< paths
  std::string container_sha_baseline, container_sha_candidate;
  std::string pixel_format, codec_baseline, codec_candidate;
  int frames = 0, width = 0, height = 0;
  std::vector<FrameComparison> per_frame;
  int identical_frames = 0;
  bool frames_identical = false;  ///< every decoded frame's SHA-256 equal: the identity gate (exit 0)
  bool container_equal = false;
  double ssim_min = 0, ssim_mean = 0, ssim_luma_min = 0, ssim_luma_mean = 0;
  double psnr_min = 0, psnr_mean = 0;  ///< mean of per-frame PSNR: +infinity if any frame is identical
  double psnr_of_mean_mse = 0;         ///< FFmpeg's "average": PSNR of the MSE over all frames
  int worst_frame = 0;                 ///< lowest RGB SSIM (ties: lowest PSNR, then lowest index)
};

/// Compares two decoded clips. Throws VideoError, naming both values, when frame counts, sizes or pixel formats
/// differ (never truncates), or when expect_frames >= 0 and a clip has another count.
VideoComparison compare_videos(const DecodedVideo& baseline, const DecodedVideo& candidate,
                               const std::string& baseline_path, const std::string& candidate_path,
                               int expect_frames = -1);

/// JSON report; PSNR values that are infinite are written as the string "inf" (JSON has no infinity).
nlohmann::json to_json(const VideoComparison& c, bool per_frame = true);
/// A Markdown table for a pull request: SHA-256 equal, frames, SSIM min/mean, PSNR min/mean.
std::string to_markdown(const VideoComparison& c);
/// A few lines for the terminal.
std::string to_terminal(const VideoComparison& c);
/// "inf" or the value with `digits` decimals.
std::string format_psnr(double psnr, int digits = 2);

}  // namespace fuseproof::e2e
