// video_compare.h: `video compare` on decoded files: checks, the common pixel format, native-plane and optional metrics.
#pragma once

#include <functional>
#include <string>

#include "frame_comparison.h"
#include "video_reader.h"

namespace fuseproof::e2e {

/// LPIPS distance of two RGB24 frames (width x height); lower is closer.
using LpipsDistance = std::function<double(const uint8_t* a, const uint8_t* b, int width, int height)>;

struct CompareOptions {
  int expect_frames = -1;     ///< >= 0: both clips must have this many frames
  std::string pixel_format;   ///< empty: common_format() of the two clips' metric formats
  bool rgb_domain = false;    ///< also the RGB-domain metrics (OpenCV Gaussian SSIM, RGB PSNR) on the RGB24 frames
  LpipsDistance lpips;        ///< empty: LPIPS "not computed"
  std::string lpips_model;    ///< the model's path, for the report
};

/// Compares two decoded clips. Throws VideoError, naming both values, when frame counts or sizes differ (never
/// truncates), or when expect_frames >= 0 and a clip has another count. Different pixel formats are converted to one
/// (convert_planar), and the report says which and how.
VideoComparison compare_videos(const DecodedVideo& baseline, const DecodedVideo& candidate,
                               const std::string& baseline_path, const std::string& candidate_path,
                               const CompareOptions& options = {});

}  // namespace fuseproof::e2e
