// comparison_plot.h: a PNG with per-frame SSIM and PSNR curves and the worst frame's difference heat map (OpenCV).
#pragma once

#include <string>

#include "video_compare.h"
#include "video_frames.h"

namespace fuseproof::e2e {

/// Writes `path` (PNG). Infinite PSNR is drawn at the top of its panel and labelled "inf". Throws std::runtime_error.
void write_comparison_plot(const std::string& path, const VideoComparison& c, const VideoFrames& baseline,
                           const VideoFrames& candidate);

}  // namespace fuseproof::e2e
