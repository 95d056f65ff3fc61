// video_compare.cpp: frame-by-frame comparison and its JSON, Markdown and terminal forms.
#include "video_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "sha256.h"

namespace fuseproof::e2e {
namespace {

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

nlohmann::json psnr_json(double v) { return std::isinf(v) ? nlohmann::json("inf") : nlohmann::json(v); }

}  // namespace

std::string format_psnr(double psnr, int digits) { return std::isinf(psnr) ? "inf" : fixed(psnr, digits); }

VideoComparison compare_videos(const DecodedVideo& a, const DecodedVideo& b, const std::string& a_path,
                               const std::string& b_path, int expect_frames) {
  const VideoFrames& fa = a.frames;
  const VideoFrames& fb = b.frames;
  if (expect_frames >= 0) {
    for (const auto* v : {&a, &b}) {
      if (v->frames.count != expect_frames) {
        throw VideoError("--expect-frames: " + std::string(v == &a ? "baseline '" + a_path : "candidate '" + b_path) +
                         "' has " + std::to_string(v->frames.count) + " frames, expected " +
                         std::to_string(expect_frames));
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
  if (a.pixel_format != b.pixel_format) {
    throw VideoError("pixel formats differ: baseline " + a.pixel_format + ", candidate " + b.pixel_format);
  }
  VideoComparison c;
  c.baseline = a_path;
  c.candidate = b_path;
  c.container_sha_baseline = a.container_sha256;
  c.container_sha_candidate = b.container_sha256;
  c.container_equal = a.container_sha256 == b.container_sha256;
  c.pixel_format = a.pixel_format;
  c.codec_baseline = a.codec;
  c.codec_candidate = b.codec;
  c.frames = fa.count;
  c.width = fa.width;
  c.height = fa.height;
  c.ssim_min = c.ssim_luma_min = c.psnr_min = std::numeric_limits<double>::infinity();
  double ssim_sum = 0, luma_sum = 0, psnr_sum = 0;
  uint64_t sse_total = 0;
  for (int i = 0; i < fa.count; ++i) {
    FrameComparison f;
    f.index = i;
    f.sha_baseline = sha256_hex(fa.frame(i), fa.frame_bytes());
    f.sha_candidate = sha256_hex(fb.frame(i), fb.frame_bytes());
    f.identical = f.sha_baseline == f.sha_candidate;
    f.ssim = ssim_rgb24(fa.frame(i), fb.frame(i), fa.width, fa.height);
    f.sse = sse_rgb24(fa.frame(i), fb.frame(i), fa.width, fa.height);
    f.psnr = psnr_from_sse(f.sse, fa.width, fa.height);
    c.identical_frames += f.identical;
    ssim_sum += f.ssim.rgb;
    luma_sum += f.ssim.luma;
    psnr_sum += f.psnr;
    sse_total += f.sse;
    c.ssim_min = std::min(c.ssim_min, f.ssim.rgb);
    c.ssim_luma_min = std::min(c.ssim_luma_min, f.ssim.luma);
    c.psnr_min = std::min(c.psnr_min, f.psnr);
    const FrameComparison* w = c.per_frame.empty() ? nullptr : &c.per_frame[static_cast<size_t>(c.worst_frame)];
    if (!w || f.ssim.rgb < w->ssim.rgb || (f.ssim.rgb == w->ssim.rgb && f.psnr < w->psnr)) c.worst_frame = i;
    c.per_frame.push_back(f);
  }
  c.frames_identical = c.identical_frames == c.frames;
  c.ssim_mean = ssim_sum / c.frames;
  c.ssim_luma_mean = luma_sum / c.frames;
  c.psnr_mean = psnr_sum / c.frames;
  // sse_total / frames is the mean per-frame SSE: the same normalisation as one frame.
  c.psnr_of_mean_mse = sse_total == 0 ? std::numeric_limits<double>::infinity()
                                      : 10.0 * std::log10(255.0 * 255.0 * 3.0 * c.width * c.height * c.frames /
                                                          static_cast<double>(sse_total));
  return c;
}

nlohmann::json to_json(const VideoComparison& c, bool per_frame) {
  nlohmann::json j = {{"schema", "fuseproof.video.compare/1"},
                      {"baseline", c.baseline},
                      {"candidate", c.candidate},
                      {"container_sha256_baseline", c.container_sha_baseline},
                      {"container_sha256_candidate", c.container_sha_candidate},
                      {"container_sha256_equal", c.container_equal},
                      {"frames", c.frames},
                      {"width", c.width},
                      {"height", c.height},
                      {"pixel_format", c.pixel_format},
                      {"identical_frames", c.identical_frames},
                      {"frames_identical", c.frames_identical},
                      {"ssim_min", c.ssim_min},
                      {"ssim_mean", c.ssim_mean},
                      {"ssim_luma_min", c.ssim_luma_min},
                      {"ssim_luma_mean", c.ssim_luma_mean},
                      {"psnr_min", psnr_json(c.psnr_min)},
                      {"psnr_mean", psnr_json(c.psnr_mean)},
                      {"psnr_of_mean_mse", psnr_json(c.psnr_of_mean_mse)},
                      {"worst_frame", c.worst_frame}};
  if (per_frame) {
    nlohmann::json frames = nlohmann::json::array();
    for (const FrameComparison& f : c.per_frame) {
      frames.push_back({{"frame", f.index},
                        {"identical", f.identical},
                        {"sha256_baseline", f.sha_baseline},
                        {"sha256_candidate", f.sha_candidate},
                        {"ssim", f.ssim.rgb},
                        {"ssim_r", f.ssim.r},
                        {"ssim_g", f.ssim.g},
                        {"ssim_b", f.ssim.b},
                        {"ssim_luma", f.ssim.luma},
                        {"psnr", psnr_json(f.psnr)}});
    }
    j["per_frame"] = frames;
  }
  return j;
}

std::string to_markdown(const VideoComparison& c) {
  std::ostringstream o;
  const auto sha = [](const std::string& s) { return "`" + s.substr(0, 12) + "`"; };
  o << "| Check | Result |\n|---|---|\n";
  o << "| Container SHA-256 equal | " << (c.container_equal ? "yes " + sha(c.container_sha_baseline)
                                                            : "no (" + sha(c.container_sha_baseline) + " vs " +
                                                                  sha(c.container_sha_candidate) + ")")
    << " |\n";
  o << "| Decoded RGB24 frames identical (SHA-256) | " << c.identical_frames << " / " << c.frames
    << (c.frames_identical ? " (all)" : "") << " |\n";
  o << "| Frames | " << c.frames << " (" << c.width << "x" << c.height << ", " << c.pixel_format << ") |\n";
  o << "| SSIM min / mean | " << fixed(c.ssim_min, 6) << " / " << fixed(c.ssim_mean, 6) << " |\n";
  o << "| SSIM luma min / mean | " << fixed(c.ssim_luma_min, 6) << " / " << fixed(c.ssim_luma_mean, 6) << " |\n";
  o << "| PSNR min / mean (dB) | " << format_psnr(c.psnr_min) << " / " << format_psnr(c.psnr_mean) << " |\n";
  o << "| Worst frame | " << c.worst_frame << " (SSIM " << fixed(c.per_frame[static_cast<size_t>(c.worst_frame)].ssim.rgb, 6)
    << ", PSNR " << format_psnr(c.per_frame[static_cast<size_t>(c.worst_frame)].psnr) << " dB) |\n";
  return o.str();
}

std::string to_terminal(const VideoComparison& c) {
  std::ostringstream o;
  o << "baseline:  " << c.baseline << "\ncandidate: " << c.candidate << '\n';
  o << "container sha256: " << (c.container_equal ? "equal " : "differ ") << c.container_sha_baseline.substr(0, 16)
    << (c.container_equal ? "" : " vs " + c.container_sha_candidate.substr(0, 16)) << '\n';
  o << "frames: " << c.frames << " x " << c.width << "x" << c.height << " " << c.pixel_format
    << "; identical (rgb24 sha256): " << c.identical_frames << "/" << c.frames << '\n';
  o << "ssim min/mean: " << fixed(c.ssim_min, 6) << " / " << fixed(c.ssim_mean, 6) << "  (luma "
    << fixed(c.ssim_luma_min, 6) << " / " << fixed(c.ssim_luma_mean, 6) << ")\n";
  o << "psnr min/mean: " << format_psnr(c.psnr_min) << " / " << format_psnr(c.psnr_mean) << " dB\n";
  o << (c.frames_identical ? "IDENTICAL" : "DIFFERENT") << '\n';
  return o.str();
}

}  // namespace fuseproof::e2e
