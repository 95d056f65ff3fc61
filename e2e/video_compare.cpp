// video_compare.cpp: the decoded-file comparison: size and count checks, conversion to one format, optional metrics.
#include "video_compare.h"

#include <stdexcept>

#include "pixel_format_conversion.h"
#include "rgb_domain_metrics.h"

namespace fuseproof::e2e {

VideoComparison compare_videos(const DecodedVideo& a, const DecodedVideo& b, const std::string& a_path,
                               const std::string& b_path, const CompareOptions& o) {
  const VideoFrames& fa = a.frames;
  const VideoFrames& fb = b.frames;
  if (o.expect_frames >= 0) {
    for (const auto* v : {&a, &b}) {
      if (v->frames.count != o.expect_frames) {
        throw VideoError("--expect-frames: " + std::string(v == &a ? "baseline '" + a_path : "candidate '" + b_path) +
                         "' has " + std::to_string(v->frames.count) + " frames, expected " +
                         std::to_string(o.expect_frames));
      }
    }
  }
  if (fa.count != fb.count) {
    throw VideoError("frame counts differ: baseline " + std::to_string(fa.count) + ", candidate " +
                     std::to_string(fb.count));
  }
  if (fa.width != fb.width || fa.height != fb.height) {
    throw VideoError("frame sizes differ: baseline " + std::to_string(fa.width) + "x" + std::to_string(fa.height) +
                     ", candidate " + std::to_string(fb.width) + "x" + std::to_string(fb.height));
  }
  VideoComparison c;
  std::string conversion;
  try {
    const std::string target =
        o.pixel_format.empty() ? common_format(a.planes.pixel_format, b.planes.pixel_format) : o.pixel_format;
    const auto bring = [&](const DecodedVideo& v) {
      std::string step = v.metrics_conversion == "none" ? "" : v.metrics_conversion;
      if (v.planes.pixel_format == target) return std::make_pair(v.planes, step);
      step += std::string(step.empty() ? "" : ", then ") + v.planes.pixel_format + " -> " + target + " (swscale " +
              kConversionFlags + ")";
      return std::make_pair(convert_planar(v.planes, target), step);
    };
    const auto [pa, sa] = bring(a);
    const auto [pb, sb] = bring(b);
    c = compare_planar(pa, pb);
    if (!sa.empty()) conversion += "baseline " + sa;
    if (!sb.empty()) conversion += std::string(conversion.empty() ? "" : "; ") + "candidate " + sb;
  } catch (const std::invalid_argument& e) {
    throw VideoError(e.what());
  }
  c.baseline = a_path;
  c.candidate = b_path;
  c.container_sha_baseline = a.container_sha256;
  c.container_sha_candidate = b.container_sha256;
  c.container_equal = a.container_sha256 == b.container_sha256;
  c.pixel_format_baseline = a.pixel_format;
  c.pixel_format_candidate = b.pixel_format;
  c.codec_baseline = a.codec;
  c.codec_candidate = b.codec;
  c.conversion = conversion.empty() ? "none" : conversion;
  for (FrameComparison& f : c.per_frame) {
    const uint8_t* x = fa.frame(f.index);
    const uint8_t* y = fb.frame(f.index);
    if (o.rgb_domain) {
      const SsimResult s = ssim_rgb24(x, y, fa.width, fa.height);
      f.rgb_domain = RgbDomainFrame{s.r, s.g, s.b, s.rgb, s.luma,
                                    psnr_from_sse(sse_rgb24(x, y, fa.width, fa.height), fa.width, fa.height)};
    }
    if (o.lpips) f.lpips = o.lpips(x, y, fa.width, fa.height);
  }
  if (o.lpips) c.lpips_model = o.lpips_model.empty() ? "(unnamed)" : o.lpips_model;
  summarise_extras(c);
  return c;
}

}  // namespace fuseproof::e2e
