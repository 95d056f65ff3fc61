// video_cli.cpp: argument handling for `fuseproof video`; the maths is in video_compare.cpp and video_metrics.cpp.
#include "video_cli.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "common/atomic_file.h"
#include "common/exit_status.h"
#include "comparison_plot.h"
#ifdef FUSEPROOF_VIDEO_WITH_LPIPS
#include "lpips_model.h"
#endif
#include "mp4_writer.h"
#include "pixel_format_conversion.h"
#include "run_files.h"
#include "run_manifest.h"
#include "common/sha256.h"
#include "video_compare.h"
#include "video_reader.h"
#include "y4m_writer.h"

#include "common/cli_exit.h"

namespace fuseproof::e2e {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& line, int code = kExitUsage) { fail_with(line, code); }

struct CompareArgs {
  std::string baseline, candidate, json, plot, markdown_file, lpips_model, pix_fmt;
  bool markdown = false, rgb_domain = false;
  int expect_frames = -1;
  bool expect_frames_given = false;
};

void compare_command(const CompareArgs& a) {
  try {
    CompareOptions o;
    // -1 is the default ("any count"); a count the user gives must be a real one.
    if (a.expect_frames_given && a.expect_frames < 1)
      fail("video compare: --expect-frames must be >= 1, got " + std::to_string(a.expect_frames));
    o.expect_frames = a.expect_frames;
    o.pixel_format = a.pix_fmt;
    o.rgb_domain = a.rgb_domain;
#ifdef FUSEPROOF_VIDEO_WITH_LPIPS
    std::shared_ptr<LpipsModel> lpips;
    if (!a.lpips_model.empty()) {
      lpips = std::make_shared<LpipsModel>(a.lpips_model);
      o.lpips = [lpips](const uint8_t* x, const uint8_t* y, int w, int h) { return lpips->distance(x, y, w, h); };
      o.lpips_model = a.lpips_model;
    }
#else
    if (!a.lpips_model.empty()) fail("video compare: --lpips-model needs a build with libtorch, this one has none");
#endif
    if (!a.pix_fmt.empty()) planar_layout(a.pix_fmt, 16, 16);  // a bad name is a usage error before any decoding
    const DecodedVideo base = read_video(a.baseline);
    const DecodedVideo cand = read_video(a.candidate);
    const VideoComparison c = compare_videos(base, cand, a.baseline, a.candidate, o);
    if (a.markdown) {
      std::cout << to_markdown(c);
    } else {
      std::cout << to_terminal(c);
    }
    if (!a.markdown_file.empty()) {
      try {
        write_file_atomically(a.markdown_file, to_markdown(c));
      } catch (const std::exception& e) {
        fail(std::string("video compare: --markdown-file: ") + e.what());
      }
    }
    if (!a.json.empty()) write_json_file(a.json, to_json(c));
    if (!a.plot.empty()) write_comparison_plot(a.plot, c, base.frames, cand.frames);
    if (!c.frames_identical) fail("video compare: " + difference_line(c), kExitFail);
  } catch (const CLI::RuntimeError&) {
    throw;
  } catch (const CorruptVideoError& e) {
    fail(std::string("video compare: ") + e.what(), kExitCorrupt);
  } catch (const std::exception& e) {
    fail(std::string("video compare: ") + e.what());
  }
}

void encode_command(const std::string& run_dir, const std::string& modes_csv, bool y4m) {
  try {
    const std::string manifest = (fs::path(run_dir) / "run.json").string();
    // Mode names are checked there: a mode names the files written below, inside run_dir.
    nlohmann::json run = read_run_manifest(run_dir);
    const nlohmann::json fps_value = run.value("config", nlohmann::json::object()).value("fps", nlohmann::json());
    if (!fps_value.is_number_integer() || fps_value.get<int64_t>() < 1 || fps_value.get<int64_t>() > 1000)
      throw CorruptDataError("'" + manifest + "': config.fps must be an integer in [1, 1000], got " + fps_value.dump());
    const int fps = fps_value.get<int>();
    // Every mode asked for must be one the run has: a name that matches nothing would encode nothing and pass.
    std::string known;
    for (const auto& [mode, m] : run.at("runs").items()) known += (known.empty() ? "" : ", ") + mode;
    for (size_t b = 0; !modes_csv.empty() && b <= modes_csv.size();) {
      const size_t e = std::min(modes_csv.find(',', b), modes_csv.size());
      const std::string mode = modes_csv.substr(b, e - b);
      if (!run.at("runs").contains(mode))
        throw UsageError("--modes: '" + mode + "' is not a mode of this run (" + known + ")");
      b = e + 1;
    }
    for (auto& [mode, m] : run.at("runs").items()) {
      if (!modes_csv.empty() && ("," + modes_csv + ",").find("," + mode + ",") == std::string::npos) continue;
      if (!run_file(run_dir, run, mode, "rgb24")) continue;
      const std::string raw = verify_mode_frames(run_dir, run, mode);
      const VideoFrames f = read_rgb24(raw, m.at("width").get<int>(), m.at("height").get<int>(), m.at("frames").get<int>());
      // Read a second time: the file must still be the one just verified.
      if (Sha256::of(f.rgb.data(), f.rgb.size()) != m.at("rgb24_sha256").get<std::string>())
        throw CorruptDataError("'" + raw + "' changed while it was read: it no longer matches rgb24_sha256 in " + manifest);
      const std::string mp4 = (fs::path(run_dir) / (mode + ".mp4")).string();
      m["mp4_encoder"] = write_mp4(mp4, f, fps);
      m["mp4_sha256"] = Sha256::of_file(mp4);
      m["files"]["mp4"] = mode + ".mp4";
      if (y4m) {
        write_y4m((fs::path(run_dir) / (mode + ".y4m")).string(), f, fps);
        m["files"]["y4m"] = mode + ".y4m";
      }
      std::cout << mode << ".mp4 sha256 " << m["mp4_sha256"].get<std::string>() << '\n';
    }
    write_json_file(manifest, run);
  } catch (const CLI::RuntimeError&) {
    throw;
  } catch (const std::exception& e) {
    fail(std::string("video encode: ") + e.what(), exit_status_of(e));
  }
}

}  // namespace

void add_video_commands(CLI::App& app) {
  auto ca = std::make_shared<CompareArgs>();
  CLI::App* compare = app.add_subcommand(
      "compare",
      "Compare two videos: container and per-frame SHA-256, PSNR and SSIM per plane and All as FFmpeg's psnr and ssim "
      "filters compute them (0 identical, 1 different, 2 error, 4 a truncated "
      "or corrupt video)");
  compare->add_option("BASELINE", ca->baseline, "baseline video (MP4, Y4M, ...)")->required();
  compare->add_option("CANDIDATE", ca->candidate, "candidate video")->required();
  CLI::Option* expect_frames =
      compare->add_option("--expect-frames", ca->expect_frames, "fail (exit 2) unless both have this many frames (>= 1)");
  compare->add_option("--json", ca->json, "write the full report, per frame, as JSON")->check(output_file_option());
  compare->add_flag("--markdown", ca->markdown, "print a Markdown table for a pull request instead of the summary");
  compare->add_option("--markdown-file", ca->markdown_file, "also write the Markdown table to this file")->check(output_file_option());
  compare->add_option("--pix-fmt", ca->pix_fmt,
                      "compare in this 8-bit planar format (default: the clips' own, or the finer of two YUV formats)");
  compare->add_flag("--rgb-domain", ca->rgb_domain,
                    "also the RGB-domain metrics: OpenCV Gaussian SSIM and PSNR on frames converted to RGB24");
  compare->add_option("--lpips-model", ca->lpips_model,
                      "TorchScript LPIPS network, forward(x, y) on [1,3,H,W] RGB in [-1,1]; without it LPIPS is not computed");
  compare->add_option("--plot", ca->plot, "write a PNG: per-frame SSIM and PSNR, worst frame's difference heat map")->check(output_file_option());
  compare->callback([ca, expect_frames] {
    ca->expect_frames_given = expect_frames->count() > 0;
    const OutputClaims claims = claim_output_paths(
        {{"--json", ca->json}, {"--markdown-file", ca->markdown_file}, {"--plot", ca->plot}});
    compare_command(*ca);
  });

  auto ea = std::make_shared<std::pair<std::string, std::string>>();
  auto ey = std::make_shared<bool>(false);
  CLI::App* encode = app.add_subcommand(
      "encode", "Encode a run directory's RGB24 frames (e.g. from a GPU without FFmpeg) to lossless MP4; updates run.json");
  encode->add_option("--run-dir", ea->first, "directory written by `fuseproof e2e run`")->required();
  encode->add_option("--modes", ea->second, "comma list of modes to encode (default: every mode with rgb24 frames)");
  encode->add_flag("--y4m", *ey, "also write Y4M");
  encode->callback([ea, ey] { encode_command(ea->first, ea->second, *ey); });
}

void add_video_subcommand(CLI::App& app) {
  CLI::App* video = app.add_subcommand("video", "Video comparator (SHA-256, SSIM, PSNR) and lossless MP4 encoder");
  video->require_subcommand(1);
  add_video_commands(*video);
}

}  // namespace fuseproof::e2e
