// video_compare_test.cpp: the comparator: lossless reproducible MP4, exact SSIM 1 / PSNR inf on identical input, PSNR and
// SSIM equal to FFmpeg's psnr and ssim filters (yuv420p, yuv444p, rgb24, mixed formats), LPIPS plumbing, errors for
// mismatched clips, and one-line exit-2 errors for bad files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <map>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

#include "common/remove_tree.h"
#include "comparison_plot.h"
#include "mp4_writer.h"
#include "seeded_generator.h"
#include "common/sha256.h"
#include "run_manifest.h"
#include "video_compare.h"
#include "video_reader.h"
#include "pixel_format_conversion.h"
#include "y4m_writer.h"

namespace fuseproof::e2e {
namespace {

namespace fs = std::filesystem;

/// Smooth moving gradients plus seeded noise: compressible enough, and every frame distinct.
VideoFrames synthetic(int count, int w, int h, uint64_t seed) {
  VideoFrames v{w, h, count, {}};
  v.rgb.resize(v.frame_bytes() * static_cast<size_t>(count));
  SeededGenerator g(seed, "synthetic");
  for (int f = 0; f < count; ++f) {
    for (int y = 0; y < h; ++y) {
      for (int x = 0; x < w; ++x) {
        uint8_t* p = v.frame(f) + (static_cast<size_t>(y) * w + x) * 3;
        const int n = static_cast<int>(g.next_u64() & 7);
        p[0] = static_cast<uint8_t>((x * 4 + f * 3 + n) & 0xFF);
        p[1] = static_cast<uint8_t>((y * 4 + f + n) & 0xFF);
        p[2] = static_cast<uint8_t>(((x + y) * 2 + n) & 0xFF);
      }
    }
  }
  return v;
}

class E2E_Video : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("fuseproof_video_" + std::string(info->name()) + "_" +
                                        std::to_string(static_cast<long>(::getpid())));
    fs::create_directories(dir_);
  }
  void TearDown() override { remove_tree(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  /// Runs fuseproof-video; returns the exit status and fills stderr_lines.
  int run_cli(const std::string& args, std::vector<std::string>* stderr_lines = nullptr) const {
    const std::string err = path("stderr.txt");
    const int rc = std::system((std::string(FUSEPROOF_VIDEO_BIN) + " " + args + " >/dev/null 2>" + err).c_str());
    if (stderr_lines) {
      stderr_lines->clear();
      std::ifstream in(err);
      for (std::string l; std::getline(in, l);) stderr_lines->push_back(l);
    }
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  }

  fs::path dir_;
};

TEST_F(E2E_Video, Mp4IsLosslessAndReproducible) {
  const VideoFrames v = synthetic(9, 48, 32, 1);
  write_mp4(path("a.mp4"), v, 16);
  write_mp4(path("b.mp4"), v, 16);
  EXPECT_EQ(Sha256::of_file(path("a.mp4")), Sha256::of_file(path("b.mp4")));
  const DecodedVideo d = read_video(path("a.mp4"));
  EXPECT_EQ(d.frames.count, 9);
  EXPECT_EQ(d.pixel_format, "gbrp");
  EXPECT_EQ(d.planes.pixel_format, "gbrp");
  EXPECT_EQ(d.metrics_conversion, "none");
  EXPECT_EQ(frame_sha256(d.frames), frame_sha256(v));
  // No version strings or x264 option strings in the container.
  std::ifstream in(path("a.mp4"), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(bytes.find("x264 - core"), std::string::npos);
  EXPECT_EQ(bytes.find("Lavf5"), std::string::npos);
}

TEST_F(E2E_Video, IdenticalInputsGiveExactlySsimOneAndPsnrInf) {
  const VideoFrames v = synthetic(5, 40, 24, 2);
  write_mp4(path("a.mp4"), v, 16);
  const DecodedVideo a = read_video(path("a.mp4"));
  const VideoComparison c = compare_videos(a, a, "a", "a");
  EXPECT_TRUE(c.frames_identical);
  for (const FrameComparison& f : c.per_frame) {
    EXPECT_EQ(f.metrics.ssim_all, 1.0);
    for (int p = 0; p < 3; ++p) EXPECT_EQ(f.metrics.ssim[static_cast<size_t>(p)], 1.0);
    EXPECT_TRUE(std::isinf(f.metrics.psnr_all) && f.metrics.psnr_all > 0);
  }
  EXPECT_EQ(c.ssim_all_min, 1.0);
  EXPECT_EQ(to_json(c)["psnr_all_min"], "inf");
  EXPECT_EQ(to_json(c)["psnr_r_mean"], "inf");
  EXPECT_EQ(to_json(c)["lpips"], "not computed");
  EXPECT_NE(to_markdown(c).find("| PSNR All min / mean (dB) | inf / inf |"), std::string::npos) << to_markdown(c);
  CompareOptions rgb;
  rgb.rgb_domain = true;
  const VideoComparison r = compare_videos(a, a, "a", "a", rgb);
  EXPECT_EQ(r.rgb_domain_ssim_min, 1.0);
  EXPECT_EQ(to_json(r)["rgb_domain_psnr_min"], "inf");
  EXPECT_EQ(run_cli("compare " + path("a.mp4") + " " + path("a.mp4") + " --expect-frames 5"), 0);
}

TEST_F(E2E_Video, DifferentInputsAreReportedAndExitOne) {
  const VideoFrames a = synthetic(5, 40, 24, 3);
  VideoFrames b = a;
  b.frame(3)[100] ^= 0x10;
  write_mp4(path("a.mp4"), a, 16);
  write_mp4(path("b.mp4"), b, 16);
  const VideoComparison c = compare_videos(read_video(path("a.mp4")), read_video(path("b.mp4")), "a", "b");
  EXPECT_EQ(c.identical_frames, 4);
  EXPECT_EQ(c.worst_frame, 3);
  EXPECT_LT(c.ssim_all_min, 1.0);
  // One byte (a G value) off by 16 in 40 * 24 pixels of 3 planes: All MSE = 256 / 2880, G plane MSE = 256 / 960.
  EXPECT_DOUBLE_EQ(c.psnr_all_min, 10.0 * std::log10(255.0 * 255.0 * 2880.0 / 256.0));
  EXPECT_DOUBLE_EQ(c.planes[1].psnr_min, 10.0 * std::log10(255.0 * 255.0 * 960.0 / 256.0));
  EXPECT_EQ(c.planes[1].name, "g");
  EXPECT_TRUE(std::isinf(c.planes[0].psnr_min));  // R untouched
  // The mean is FFmpeg's: PSNR of the MSE averaged over the 5 frames.
  EXPECT_DOUBLE_EQ(c.psnr_all_mean, 10.0 * std::log10(255.0 * 255.0 * 2880.0 * 5 / 256.0));
  EXPECT_EQ(run_cli("compare " + path("a.mp4") + " " + path("b.mp4") + " --json " + path("c.json") + " --plot " +
                    path("c.png")),
            1);
  EXPECT_GT(fs::file_size(path("c.png")), 1000u);
  EXPECT_GT(fs::file_size(path("c.json")), 100u);
}

/// FFmpeg's own figures for two files: per frame (the filters' stats files) and the summary lines they log.
struct FfmpegFigures {
  std::vector<std::map<std::string, double>> psnr_frames;  ///< "psnr_avg", "psnr_y", "mse_y", ...
  std::vector<std::map<std::string, double>> ssim_frames;  ///< "Y", "U", "V" or "R", "G", "B", and "All"
  std::map<std::string, double> psnr_summary;              ///< "y", ..., "average", "min"
  std::map<std::string, double> ssim_summary;              ///< "Y", ..., "All"
};

double parse_value(const std::string& v) {
  return v == "inf" ? std::numeric_limits<double>::infinity() : std::stod(v);
}

/// "k:v k:v (x)" -> {k: v}; tokens without ':' are skipped.
std::map<std::string, double> parse_pairs(const std::string& line) {
  std::map<std::string, double> out;
  std::istringstream in(line);
  for (std::string tok; in >> tok;) {
    const size_t colon = tok.find(':');
    if (colon == std::string::npos || colon + 1 == tok.size()) continue;
    out[tok.substr(0, colon)] = parse_value(tok.substr(colon + 1));
  }
  return out;
}

class E2E_VideoFfmpeg : public E2E_Video {
 protected:
  void SetUp() override {
    if (std::system("ffmpeg -version >/dev/null 2>&1") != 0) GTEST_SKIP() << "ffmpeg binary not on PATH";
    E2E_Video::SetUp();
  }

  /// Runs ffmpeg quietly; fails the test when it fails.
  void ffmpeg(const std::string& args) const {
    const std::string cmd = "ffmpeg -nostdin -hide_banner -v error -y " + args + " 2>" + path("ffmpeg_err.txt");
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }

  /// testsrc2 frames written as `base`, and a noisy, blurred copy as `cand`, both with the encoder arguments `enc`.
  void make_pair(const std::string& base, const std::string& cand, const std::string& enc) const {
    const std::string src = "-f lavfi -i testsrc2=size=96x64:rate=16 -frames:v 6 ";
    ffmpeg(src + enc + " " + path(base));
    ffmpeg(src + "-vf noise=alls=14:allf=t,gblur=sigma=0.7 " + enc + " " + path(cand));
  }

  /// FFmpeg's psnr and ssim filters on the two files; `pre` is an optional filter chain on the baseline.
  FfmpegFigures figures(const std::string& a, const std::string& b, const std::string& pre = "") const {
    FfmpegFigures f;
    for (const std::string filter : {"psnr", "ssim"}) {
      const std::string stats = path(filter + ".stats"), log = path(filter + ".log");
      const std::string graph = pre.empty() ? "[0:v][1:v]" + filter + "=stats_file=" + stats
                                            : "[0:v]" + pre + "[a];[a][1:v]" + filter + "=stats_file=" + stats;
      const std::string cmd = "ffmpeg -nostdin -hide_banner -i " + path(a) + " -i " + path(b) + " -lavfi \"" + graph +
                              "\" -f null - 2>" + log;
      EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
      std::ifstream in(stats);
      for (std::string line; std::getline(in, line);) {
        (filter == "psnr" ? f.psnr_frames : f.ssim_frames).push_back(parse_pairs(line));
      }
      std::ifstream lin(log);
      const std::string key = filter == "psnr" ? "] PSNR " : "] SSIM ";
      for (std::string line; std::getline(lin, line);) {
        const size_t at = line.find(key);
        if (at != std::string::npos) (filter == "psnr" ? f.psnr_summary : f.ssim_summary) = parse_pairs(line.substr(at + key.size()));
      }
    }
    return f;
  }

  /// Every figure of `c` against FFmpeg's: per frame, and min and mean per plane and All.
  static void expect_matches(const VideoComparison& c, const FfmpegFigures& f, const std::string& what) {
    constexpr double kPsnrTol = 0.01, kSsimTol = 0.001;
    const auto near = [&](double ours, double theirs, double tol, const std::string& name) {
      if (std::isinf(ours) || std::isinf(theirs)) {
        EXPECT_EQ(ours, theirs) << what << " " << name;
      } else {
        EXPECT_NEAR(ours, theirs, tol) << what << " " << name;
      }
    };
    ASSERT_EQ(static_cast<int>(f.psnr_frames.size()), c.frames) << what;
    ASSERT_EQ(static_cast<int>(f.ssim_frames.size()), c.frames) << what;
    ASSERT_EQ(c.planes.size(), 3u) << what;
    const auto upper = [](std::string s) {
      for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      return s;
    };
    std::map<std::string, double> psnr_min, ssim_min;
    double ffmpeg_ssim_all_min = 2;
    for (int i = 0; i < c.frames; ++i) {
      const FrameComparison& fc = c.per_frame[static_cast<size_t>(i)];
      const auto& p = f.psnr_frames[static_cast<size_t>(i)];
      const auto& s = f.ssim_frames[static_cast<size_t>(i)];
      const std::string at = "frame " + std::to_string(i) + " ";
      near(fc.metrics.psnr_all, p.at("psnr_avg"), kPsnrTol, at + "psnr All");
      near(fc.metrics.ssim_all, s.at("All"), kSsimTol, at + "ssim All");
      ffmpeg_ssim_all_min = std::min(ffmpeg_ssim_all_min, s.at("All"));
      for (int k = 0; k < 3; ++k) {
        const std::string& n = c.plane_names[static_cast<size_t>(k)];
        near(fc.metrics.psnr[static_cast<size_t>(k)], p.at("psnr_" + n), kPsnrTol, at + "psnr " + n);
        near(fc.metrics.ssim[static_cast<size_t>(k)], s.at(upper(n)), kSsimTol, at + "ssim " + n);
        psnr_min[n] = psnr_min.count(n) ? std::min(psnr_min[n], p.at("psnr_" + n)) : p.at("psnr_" + n);
        ssim_min[n] = ssim_min.count(n) ? std::min(ssim_min[n], s.at(upper(n))) : s.at(upper(n));
      }
    }
    near(c.psnr_all_mean, f.psnr_summary.at("average"), kPsnrTol, "psnr_all_mean");
    near(c.psnr_all_min, f.psnr_summary.at("min"), kPsnrTol, "psnr_all_min");
    near(c.ssim_all_mean, f.ssim_summary.at("All"), kSsimTol, "ssim_all_mean");
    near(c.ssim_all_min, ffmpeg_ssim_all_min, kSsimTol, "ssim_all_min");
    for (const PlaneSummary& p : c.planes) {
      near(p.psnr_mean, f.psnr_summary.at(p.name), kPsnrTol, "psnr_" + p.name + "_mean");
      near(p.psnr_min, psnr_min.at(p.name), kPsnrTol, "psnr_" + p.name + "_min");
      near(p.ssim_mean, f.ssim_summary.at(upper(p.name)), kSsimTol, "ssim_" + p.name + "_mean");
      near(p.ssim_min, ssim_min.at(p.name), kSsimTol, "ssim_" + p.name + "_min");
    }
    // Guard: a distorted copy, so the figures are finite and below 1 (a test of inf == inf proves nothing).
    EXPECT_TRUE(std::isfinite(c.psnr_all_min) && c.psnr_all_min < 40) << what << " " << c.psnr_all_min;
    EXPECT_LT(c.ssim_all_mean, 0.999) << what;
  }

  /// The comparator through the command line, read back from its JSON: the flat keys users script against.
  nlohmann::json cli_json(const std::string& a, const std::string& b, const std::string& extra = "") const {
    EXPECT_EQ(run_cli("compare " + path(a) + " " + path(b) + " --json " + path("c.json") + " " + extra), 1);
    std::ifstream in(path("c.json"));
    return nlohmann::json::parse(in);
  }

  static void expect_json_matches(const nlohmann::json& j, const VideoComparison& c) {
    const auto num = [](const nlohmann::json& v) { return v.is_string() ? std::numeric_limits<double>::infinity() : v.get<double>(); };
    EXPECT_EQ(num(j.at("psnr_all_min")), c.psnr_all_min);
    EXPECT_EQ(num(j.at("psnr_all_mean")), c.psnr_all_mean);
    EXPECT_EQ(j.at("ssim_all_min").get<double>(), c.ssim_all_min);
    EXPECT_EQ(j.at("ssim_all_mean").get<double>(), c.ssim_all_mean);
    for (const PlaneSummary& p : c.planes) {
      EXPECT_EQ(num(j.at("psnr_" + p.name + "_min")), p.psnr_min);
      EXPECT_EQ(num(j.at("psnr_" + p.name + "_mean")), p.psnr_mean);
      EXPECT_EQ(j.at("ssim_" + p.name + "_min").get<double>(), p.ssim_min);
      EXPECT_EQ(j.at("ssim_" + p.name + "_mean").get<double>(), p.ssim_mean);
    }
  }
};

TEST_F(E2E_VideoFfmpeg, PsnrSsimEqualFfmpegFilters_yuv420p) {
  make_pair("a.y4m", "b.y4m", "-pix_fmt yuv420p");
  const DecodedVideo a = read_video(path("a.y4m")), b = read_video(path("b.y4m"));
  ASSERT_EQ(a.planes.pixel_format, "yuv420p");
  const VideoComparison c = compare_videos(a, b, "a", "b");
  EXPECT_EQ(c.conversion, "none");
  const FfmpegFigures f = figures("a.y4m", "b.y4m");
  expect_matches(c, f, "yuv420p");
  expect_json_matches(cli_json("a.y4m", "b.y4m"), c);
  // Negative control: the RGB-domain figures (frames converted to RGB24) are not FFmpeg's on YUV input.
  CompareOptions rgb;
  rgb.rgb_domain = true;
  const VideoComparison r = compare_videos(a, b, "a", "b", rgb);
  EXPECT_GT(std::fabs(r.rgb_domain_psnr_min - f.psnr_summary.at("min")), 0.01);
  EXPECT_GT(std::fabs(r.rgb_domain_ssim_mean - f.ssim_summary.at("All")), 0.001);
}

TEST_F(E2E_VideoFfmpeg, PsnrSsimEqualFfmpegFilters_yuv444p) {
  make_pair("a.mp4", "b.mp4", "-c:v libx264 -preset ultrafast -qp 18 -pix_fmt yuv444p");
  const DecodedVideo a = read_video(path("a.mp4")), b = read_video(path("b.mp4"));
  ASSERT_EQ(a.planes.pixel_format, "yuv444p");
  const VideoComparison c = compare_videos(a, b, "a", "b");
  expect_matches(c, figures("a.mp4", "b.mp4"), "yuv444p");
  expect_json_matches(cli_json("a.mp4", "b.mp4"), c);
}

TEST_F(E2E_VideoFfmpeg, PsnrSsimEqualFfmpegFilters_rgb24) {
  make_pair("a.nut", "b.nut", "-c:v rawvideo -pix_fmt rgb24");
  const DecodedVideo a = read_video(path("a.nut")), b = read_video(path("b.nut"));
  ASSERT_EQ(a.pixel_format, "rgb24");
  ASSERT_EQ(a.planes.pixel_format, "gbrp");
  const VideoComparison c = compare_videos(a, b, "a", "b");
  EXPECT_EQ(c.conversion, "baseline rgb24 -> gbrp (swscale point, repacking); candidate rgb24 -> gbrp (swscale point, "
                          "repacking)");
  // The repacking is exact: the planes hold the RGB24 bytes.
  EXPECT_EQ(gbrp_from_rgb24(a.frames).data, a.planes.data);
  expect_matches(c, figures("a.nut", "b.nut"), "rgb24");
  const nlohmann::json j = cli_json("a.nut", "b.nut");
  expect_json_matches(j, c);
  EXPECT_TRUE(j.contains("psnr_r_min") && j.contains("ssim_b_mean") && !j.contains("psnr_y_min"));
}

TEST_F(E2E_VideoFfmpeg, MixedFormatsAreConvertedAndSaySo_yuv420pVsYuv444p) {
  make_pair("a.y4m", "b.mp4", "-pix_fmt yuv420p");
  ffmpeg("-i " + path("b.mp4") + " -c:v libx264 -preset ultrafast -qp 0 -pix_fmt yuv444p " + path("b444.mp4"));
  const DecodedVideo a = read_video(path("a.y4m")), b = read_video(path("b444.mp4"));
  ASSERT_EQ(a.planes.pixel_format, "yuv420p");
  ASSERT_EQ(b.planes.pixel_format, "yuv444p");
  const VideoComparison c = compare_videos(a, b, "a", "b");
  EXPECT_EQ(c.metrics_pixel_format, "yuv444p");
  EXPECT_EQ(c.conversion, "baseline yuv420p -> yuv444p (swscale " + std::string(kConversionFlags) + ")");
  // The same conversion as an FFmpeg filter gives the same figures.
  expect_matches(c, figures("a.y4m", "b444.mp4", "scale=flags=" + std::string(kConversionFlags) + ",format=yuv444p"),
                 "yuv420p vs yuv444p");
  const nlohmann::json j = cli_json("a.y4m", "b444.mp4");
  EXPECT_EQ(j.at("conversion"), c.conversion);
  EXPECT_EQ(j.at("pixel_format_baseline"), "yuv420p");
  EXPECT_EQ(j.at("pixel_format_candidate"), "yuv444p");
  // --pix-fmt chooses the other way: the candidate's chroma subsampled to 4:2:0.
  EXPECT_EQ(cli_json("a.y4m", "b444.mp4", "--pix-fmt yuv420p").at("metrics_pixel_format"), "yuv420p");
}

TEST_F(E2E_Video, LpipsModelIsRunPerFrameOrSaidNotComputed) {
  const VideoFrames a = synthetic(3, 32, 24, 8), b = synthetic(3, 32, 24, 9);
  write_mp4(path("a.mp4"), a, 16);
  write_mp4(path("b.mp4"), b, 16);
  EXPECT_EQ(run_cli("compare " + path("a.mp4") + " " + path("b.mp4") + " --json " + path("none.json")), 1);
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(path("none.json"))).at("lpips"), "not computed");
  // A stand-in LPIPS network: mean |x - y| over [-1, 1] inputs, scripted with Debian's torch at test time.
  const std::string model = path("l1.pt");
  std::ofstream(path("make_model.py")) << "import sys, torch\n"
                                          "class M(torch.nn.Module):\n"
                                          "    def forward(self, x, y):\n"
                                          "        return (x - y).abs().mean(dim=[1, 2, 3], keepdim=True)\n"
                                          "torch.jit.script(M()).save(sys.argv[1])\n";
  const std::string py = "/usr/bin/python3 " + path("make_model.py") + " " + model + " >/dev/null 2>&1";
  if (std::system(py.c_str()) != 0) GTEST_SKIP() << "/usr/bin/python3 with torch cannot script the stand-in model";
  const int rc = run_cli("compare " + path("a.mp4") + " " + path("b.mp4") + " --lpips-model " + model + " --json " +
                         path("l.json"));
#ifndef FUSEPROOF_VIDEO_WITH_LPIPS
  GTEST_SKIP() << "this build has no libtorch: --lpips-model exits " << rc;
#endif
  ASSERT_EQ(rc, 1);
  const nlohmann::json j = nlohmann::json::parse(std::ifstream(path("l.json")));
  ASSERT_EQ(j.at("lpips"), "computed");
  EXPECT_EQ(j.at("lpips_model"), model);
  double mean = 0, mx = 0;
  for (int f = 0; f < 3; ++f) {
    double sum = 0;
    for (size_t i = 0; i < a.frame_bytes(); ++i) sum += std::fabs(a.frame(f)[i] - b.frame(f)[i]) / 127.5;
    const double expected = sum / static_cast<double>(a.frame_bytes());
    EXPECT_NEAR(j.at("per_frame")[static_cast<size_t>(f)].at("lpips").get<double>(), expected, 1e-5) << "frame " << f;
    mean += expected / 3;
    mx = std::max(mx, expected);
  }
  EXPECT_GT(mx, 0.0);
  EXPECT_NEAR(j.at("lpips_mean").get<double>(), mean, 1e-5);
  EXPECT_NEAR(j.at("lpips_max").get<double>(), mx, 1e-5);
}

TEST_F(E2E_Video, MismatchedClipsAreErrorsNeverTruncated) {
  write_mp4(path("f5.mp4"), synthetic(5, 32, 16, 6), 16);
  write_mp4(path("f4.mp4"), synthetic(4, 32, 16, 6), 16);
  write_mp4(path("s.mp4"), synthetic(5, 48, 16, 6), 16);
  write_y4m(path("y.y4m"), synthetic(5, 32, 16, 6), 16);
  const DecodedVideo f5 = read_video(path("f5.mp4"));
  const auto message = [&](const DecodedVideo& b, int expect) {
    try {
      compare_videos(f5, b, "a", "b", CompareOptions{expect});
    } catch (const VideoError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(read_video(path("f4.mp4")), -1), "frame counts differ: baseline 5, candidate 4");
  EXPECT_EQ(message(read_video(path("s.mp4")), -1), "frame sizes differ: baseline 32x16, candidate 48x16");
  // Different pixel formats are compared after a stated conversion (here to the baseline's gbrp), not refused.
  const VideoComparison mixed = compare_videos(f5, read_video(path("y.y4m")), "a", "b");
  EXPECT_EQ(mixed.metrics_pixel_format, "gbrp");
  EXPECT_EQ(mixed.conversion, "candidate yuv444p -> gbrp (swscale " + std::string(kConversionFlags) + ")");
  EXPECT_EQ(message(f5, 81), "--expect-frames: baseline 'a' has 5 frames, expected 81");
  std::vector<std::string> err;
  EXPECT_EQ(run_cli("compare " + path("f5.mp4") + " " + path("f4.mp4"), &err), 2);
  ASSERT_EQ(err.size(), 1u);
  EXPECT_EQ(err[0], "video compare: frame counts differ: baseline 5, candidate 4");
}

// A missing file is a usage error (2); a file that is there but not a whole video is corrupt data (4).
TEST_F(E2E_Video, BadFilesGiveOneLineAndExitTwoOrFour) {
  write_mp4(path("good.mp4"), synthetic(6, 32, 16, 7), 16);
  std::ifstream in(path("good.mp4"), std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto write = [&](const std::string& name, const std::string& content) {
    std::ofstream(path(name), std::ios::binary) << content;
  };
  write("empty.mp4", "");
  write("text.mp4", "this is not a video\n");
  write("truncated.mp4", bytes.substr(0, bytes.size() / 2));
  std::string corrupt = bytes;
  for (size_t i = 0; i < 64 && i < corrupt.size(); ++i) corrupt[i] = static_cast<char>(0xA5 ^ i);
  write("corrupt_header.mp4", corrupt);
  write_y4m(path("y.y4m"), synthetic(3, 32, 16, 7), 16);
  std::ifstream yin(path("y.y4m"), std::ios::binary);
  const std::string y((std::istreambuf_iterator<char>(yin)), std::istreambuf_iterator<char>());
  write("truncated.y4m", y.substr(0, y.size() - 100));
  for (const char* name : {"missing.mp4", "empty.mp4", "text.mp4", "truncated.mp4", "corrupt_header.mp4",
                           "truncated.y4m"}) {
    std::vector<std::string> err;
    EXPECT_EQ(run_cli("compare " + path("good.mp4") + " " + path(name), &err),
              std::string(name) == "missing.mp4" ? 2 : 4) << name;
    ASSERT_EQ(err.size(), 1u) << name;
    EXPECT_NE(err[0].find(name), std::string::npos) << err[0];
    EXPECT_NE(err[0].back(), '.') << err[0];
  }
  std::vector<std::string> err;
  EXPECT_EQ(run_cli("compare " + path("good.mp4"), &err), 2);  // CLI11 parse error: still exit 2
  EXPECT_EQ(run_cli("compare " + path("good.mp4") + " " + path("good.mp4") + " --pix-fmt rgb48le", &err), 2);
  ASSERT_EQ(err.size(), 1u);
  EXPECT_EQ(err[0], "video compare: pixel format must be 8-bit planar gray, yuv or gbrp for the metrics, got rgb48le");
  EXPECT_EQ(run_cli("compare " + path("good.mp4") + " " + path("good.mp4") + " --lpips-model " + path("none.pt"), &err),
            2);
  ASSERT_EQ(err.size(), 1u);
  EXPECT_NE(err[0].find("none.pt"), std::string::npos) << err[0];
}

}  // namespace
}  // namespace fuseproof::e2e
