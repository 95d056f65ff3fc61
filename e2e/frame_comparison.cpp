// frame_comparison.cpp: per-frame comparison of planar clips, FFmpeg-style summaries, and the JSON, Markdown and terminal forms.
#include "frame_comparison.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "common/sha256.h"

namespace fuseproof::e2e {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

nlohmann::json psnr_json(double v) { return std::isinf(v) ? nlohmann::json("inf") : nlohmann::json(v); }

std::string size_text(int w, int h) { return std::to_string(w) + "x" + std::to_string(h); }

}  // namespace

std::string format_psnr(double psnr, int digits) { return std::isinf(psnr) ? "inf" : fixed(psnr, digits); }

VideoComparison compare_planar(const PlanarVideo& a, const PlanarVideo& b) {
  if (a.pixel_format != b.pixel_format || a.planes != b.planes || a.rgb != b.rgb ||
      a.log2_chroma_w != b.log2_chroma_w || a.log2_chroma_h != b.log2_chroma_h) {
    throw std::invalid_argument("compare: pixel formats must be equal, got " + a.pixel_format + " and " +
                                b.pixel_format);
  }
  if (a.width != b.width || a.height != b.height) {
    throw std::invalid_argument("compare: frame sizes must be equal, got " + size_text(a.width, a.height) + " and " +
                                size_text(b.width, b.height));
  }
  if (a.count != b.count || a.count < 1) {
    throw std::invalid_argument("compare: frame counts must be equal and positive, got " + std::to_string(a.count) +
                                " and " + std::to_string(b.count));
  }
  VideoComparison c;
  c.metrics_pixel_format = a.pixel_format;
  c.pixel_format_baseline = c.pixel_format_candidate = a.pixel_format;
  c.frames = a.count;
  c.width = a.width;
  c.height = a.height;
  for (int p = 0; p < a.planes; ++p) c.plane_names.push_back(a.plane_name(p));
  std::array<double, 3> mse_sum{}, ssim_sum{};
  std::array<double, 3> psnr_min{kInf, kInf, kInf}, ssim_min{kInf, kInf, kInf};
  double mse_all_sum = 0, ssim_all_sum = 0;
  c.psnr_all_min = c.ssim_all_min = kInf;
  for (int i = 0; i < a.count; ++i) {
    FrameComparison f;
    f.index = i;
    f.sha_baseline = Sha256::of(a.plane(i, 0), a.frame_bytes());
    f.sha_candidate = Sha256::of(b.plane(i, 0), b.frame_bytes());
    f.identical = f.sha_baseline == f.sha_candidate;
    f.metrics = frame_metrics(a, b, i);
    const FrameMetrics& m = f.metrics;
    for (int p = 0; p < a.planes; ++p) {
      const auto k = static_cast<size_t>(p);
      mse_sum[k] += m.mse[k];
      ssim_sum[k] += m.ssim[k];
      psnr_min[k] = std::min(psnr_min[k], m.psnr[k]);
      ssim_min[k] = std::min(ssim_min[k], m.ssim[k]);
    }
    mse_all_sum += m.mse_all;
    ssim_all_sum += m.ssim_all;
    c.psnr_all_min = std::min(c.psnr_all_min, m.psnr_all);
    c.ssim_all_min = std::min(c.ssim_all_min, m.ssim_all);
    c.identical_frames += f.identical;
    const FrameComparison* w = c.per_frame.empty() ? nullptr : &c.per_frame[static_cast<size_t>(c.worst_frame)];
    if (!w || m.ssim_all < w->metrics.ssim_all || (m.ssim_all == w->metrics.ssim_all && m.psnr_all < w->metrics.psnr_all)) {
      c.worst_frame = i;
    }
    c.per_frame.push_back(std::move(f));
  }
  c.frames_identical = c.identical_frames == c.frames;
  c.psnr_all_mean = psnr_of_mse(mse_all_sum / c.frames);
  c.ssim_all_mean = ssim_all_sum / c.frames;
  for (int p : a.report_order()) {
    const auto k = static_cast<size_t>(p);
    c.planes.push_back({a.plane_name(p), psnr_min[k], psnr_of_mse(mse_sum[k] / c.frames), ssim_min[k],
                        ssim_sum[k] / c.frames});
  }
  return c;
}

void summarise_extras(VideoComparison& c) {
  c.rgb_domain = !c.per_frame.empty() && c.per_frame[0].rgb_domain.has_value();
  if (c.rgb_domain) {
    double ssim = 0, luma = 0, psnr = 0;
    c.rgb_domain_ssim_min = c.rgb_domain_ssim_luma_min = c.rgb_domain_psnr_min = kInf;
    for (const FrameComparison& f : c.per_frame) {
      const RgbDomainFrame& r = f.rgb_domain.value();
      ssim += r.ssim_rgb;
      luma += r.ssim_luma;
      psnr += r.psnr;
      c.rgb_domain_ssim_min = std::min(c.rgb_domain_ssim_min, r.ssim_rgb);
      c.rgb_domain_ssim_luma_min = std::min(c.rgb_domain_ssim_luma_min, r.ssim_luma);
      c.rgb_domain_psnr_min = std::min(c.rgb_domain_psnr_min, r.psnr);
    }
    c.rgb_domain_ssim_mean = ssim / c.frames;
    c.rgb_domain_ssim_luma_mean = luma / c.frames;
    c.rgb_domain_psnr_mean = psnr / c.frames;
  }
  if (!c.lpips_model.empty()) {
    double sum = 0;
    c.lpips_max = -kInf;
    for (const FrameComparison& f : c.per_frame) {
      sum += f.lpips.value();
      c.lpips_max = std::max(c.lpips_max, f.lpips.value());
    }
    c.lpips_mean = sum / c.frames;
  }
}

nlohmann::json to_json(const VideoComparison& c, bool per_frame) {
  nlohmann::json j = {{"schema", "fuseproof.video.compare/2"},
                      {"baseline", c.baseline},
                      {"candidate", c.candidate},
                      {"container_sha256_baseline", c.container_sha_baseline},
                      {"container_sha256_candidate", c.container_sha_candidate},
                      {"container_sha256_equal", c.container_equal},
                      {"frames", c.frames},
                      {"width", c.width},
                      {"height", c.height},
                      {"pixel_format_baseline", c.pixel_format_baseline},
                      {"pixel_format_candidate", c.pixel_format_candidate},
                      {"metrics_pixel_format", c.metrics_pixel_format},
                      {"conversion", c.conversion},
                      {"metrics", "FFmpeg psnr and ssim filters on the native planes; *_mean of PSNR is FFmpeg's "
                                  "summary (PSNR of the mean MSE)"},
                      {"identical_frames", c.identical_frames},
                      {"frames_identical", c.frames_identical},
                      {"psnr_all_min", psnr_json(c.psnr_all_min)},
                      {"psnr_all_mean", psnr_json(c.psnr_all_mean)},
                      {"ssim_all_min", c.ssim_all_min},
                      {"ssim_all_mean", c.ssim_all_mean},
                      {"worst_frame", c.worst_frame}};
  for (const PlaneSummary& p : c.planes) {
    j["psnr_" + p.name + "_min"] = psnr_json(p.psnr_min);
    j["psnr_" + p.name + "_mean"] = psnr_json(p.psnr_mean);
    j["ssim_" + p.name + "_min"] = p.ssim_min;
    j["ssim_" + p.name + "_mean"] = p.ssim_mean;
  }
  if (c.rgb_domain) {
    j["rgb_domain_ssim_min"] = c.rgb_domain_ssim_min;
    j["rgb_domain_ssim_mean"] = c.rgb_domain_ssim_mean;
    j["rgb_domain_ssim_luma_min"] = c.rgb_domain_ssim_luma_min;
    j["rgb_domain_ssim_luma_mean"] = c.rgb_domain_ssim_luma_mean;
    j["rgb_domain_psnr_min"] = psnr_json(c.rgb_domain_psnr_min);
    j["rgb_domain_psnr_mean"] = psnr_json(c.rgb_domain_psnr_mean);
  }
  if (c.lpips_model.empty()) {
    j["lpips"] = "not computed";
  } else {
    j["lpips"] = "computed";
    j["lpips_model"] = c.lpips_model;
    j["lpips_mean"] = c.lpips_mean;
    j["lpips_max"] = c.lpips_max;
  }
  if (per_frame) {
    nlohmann::json frames = nlohmann::json::array();
    for (const FrameComparison& f : c.per_frame) {
      nlohmann::json x = {{"frame", f.index},
                          {"identical", f.identical},
                          {"sha256_baseline", f.sha_baseline},
                          {"sha256_candidate", f.sha_candidate},
                          {"mse_all", f.metrics.mse_all},
                          {"psnr_all", psnr_json(f.metrics.psnr_all)},
                          {"ssim_all", f.metrics.ssim_all}};
      for (int p = 0; p < f.metrics.planes; ++p) {
        const std::string& n = c.plane_names[static_cast<size_t>(p)];
        const auto k = static_cast<size_t>(p);
        x["mse_" + n] = f.metrics.mse[k];
        x["psnr_" + n] = psnr_json(f.metrics.psnr[k]);
        x["ssim_" + n] = f.metrics.ssim[k];
      }
      if (f.rgb_domain) {
        x["rgb_domain_ssim"] = f.rgb_domain->ssim_rgb;
        x["rgb_domain_ssim_r"] = f.rgb_domain->ssim_r;
        x["rgb_domain_ssim_g"] = f.rgb_domain->ssim_g;
        x["rgb_domain_ssim_b"] = f.rgb_domain->ssim_b;
        x["rgb_domain_ssim_luma"] = f.rgb_domain->ssim_luma;
        x["rgb_domain_psnr"] = psnr_json(f.rgb_domain->psnr);
      }
      if (f.lpips) x["lpips"] = *f.lpips;
      frames.push_back(x);
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
  o << "| Frames identical (SHA-256 of the " << c.metrics_pixel_format << " planes) | " << c.identical_frames << " / "
    << c.frames << (c.frames_identical ? " (all)" : "") << " |\n";
  o << "| Frames | " << c.frames << " (" << c.width << "x" << c.height << "; decoded " << c.pixel_format_baseline
    << " / " << c.pixel_format_candidate << "; metrics on " << c.metrics_pixel_format << ", conversion: "
    << c.conversion << ") |\n";
  o << "| PSNR All min / mean (dB) | " << format_psnr(c.psnr_all_min) << " / " << format_psnr(c.psnr_all_mean) << " |\n";
  for (const PlaneSummary& p : c.planes) {
    o << "| PSNR " << p.name << " min / mean (dB) | " << format_psnr(p.psnr_min) << " / " << format_psnr(p.psnr_mean)
      << " |\n";
  }
  o << "| SSIM All min / mean | " << fixed(c.ssim_all_min, 6) << " / " << fixed(c.ssim_all_mean, 6) << " |\n";
  for (const PlaneSummary& p : c.planes) {
    o << "| SSIM " << p.name << " min / mean | " << fixed(p.ssim_min, 6) << " / " << fixed(p.ssim_mean, 6) << " |\n";
  }
  if (c.rgb_domain) {
    o << "| RGB-domain SSIM (OpenCV Gaussian) min / mean | " << fixed(c.rgb_domain_ssim_min, 6) << " / "
      << fixed(c.rgb_domain_ssim_mean, 6) << " |\n";
    o << "| RGB-domain PSNR min / mean of frames (dB) | " << format_psnr(c.rgb_domain_psnr_min) << " / "
      << format_psnr(c.rgb_domain_psnr_mean) << " |\n";
  }
  o << "| LPIPS mean / max | "
    << (c.lpips_model.empty() ? std::string("not computed (no --lpips-model)")
                              : fixed(c.lpips_mean, 6) + " / " + fixed(c.lpips_max, 6))
    << " |\n";
  const FrameMetrics& w = c.per_frame[static_cast<size_t>(c.worst_frame)].metrics;
  o << "| Worst frame | " << c.worst_frame << " (SSIM All " << fixed(w.ssim_all, 6) << ", PSNR All "
    << format_psnr(w.psnr_all) << " dB) |\n";
  return o.str();
}

std::string to_terminal(const VideoComparison& c) {
  std::ostringstream o;
  o << "baseline:  " << c.baseline << "\ncandidate: " << c.candidate << '\n';
  o << "container sha256: " << (c.container_equal ? "equal " : "differ ") << c.container_sha_baseline.substr(0, 16)
    << (c.container_equal ? "" : " vs " + c.container_sha_candidate.substr(0, 16)) << '\n';
  o << "frames: " << c.frames << " x " << c.width << "x" << c.height << "; decoded " << c.pixel_format_baseline << " / "
    << c.pixel_format_candidate << "; metrics on " << c.metrics_pixel_format << " (conversion: " << c.conversion
    << "); identical (sha256): " << c.identical_frames << "/" << c.frames << '\n';
  o << "psnr min/mean: All " << format_psnr(c.psnr_all_min) << " / " << format_psnr(c.psnr_all_mean);
  for (const PlaneSummary& p : c.planes) o << ", " << p.name << " " << format_psnr(p.psnr_min) << " / " << format_psnr(p.psnr_mean);
  o << " dB\nssim min/mean: All " << fixed(c.ssim_all_min, 6) << " / " << fixed(c.ssim_all_mean, 6);
  for (const PlaneSummary& p : c.planes) o << ", " << p.name << " " << fixed(p.ssim_min, 6) << " / " << fixed(p.ssim_mean, 6);
  o << '\n';
  if (c.rgb_domain) {
    o << "rgb-domain (OpenCV Gaussian SSIM, RGB PSNR): ssim min/mean " << fixed(c.rgb_domain_ssim_min, 6) << " / "
      << fixed(c.rgb_domain_ssim_mean, 6) << ", psnr min/mean " << format_psnr(c.rgb_domain_psnr_min) << " / "
      << format_psnr(c.rgb_domain_psnr_mean) << " dB\n";
  }
  o << "lpips: "
    << (c.lpips_model.empty() ? std::string("not computed (no --lpips-model)")
                              : "mean " + fixed(c.lpips_mean, 6) + ", max " + fixed(c.lpips_max, 6) + " (" +
                                    c.lpips_model + ")")
    << '\n';
  o << (c.frames_identical ? "IDENTICAL" : "DIFFERENT") << '\n';
  return o.str();
}

std::string difference_line(const VideoComparison& c) {
  size_t first = 0;
  while (first < c.per_frame.size() && c.per_frame[first].identical) ++first;
  return "'" + c.baseline + "' and '" + c.candidate + "' differ in " + std::to_string(c.frames - c.identical_frames) +
         " of " + std::to_string(c.frames) + " frames (first: frame " + std::to_string(first) + ", SSIM All min " +
         fixed(c.ssim_all_min, 6) + ")";
}

}  // namespace fuseproof::e2e
