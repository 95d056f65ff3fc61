// video_compare_test.cpp: the comparator: lossless reproducible MP4, exact SSIM 1 / PSNR inf on identical input, PSNR
// agreement with FFmpeg's psnr filter, errors for mismatched clips, and one-line exit-2 errors for bad files.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <sys/wait.h>
#include <unistd.h>

#include "comparison_plot.h"
#include "mp4_writer.h"
#include "seeded_generator.h"
#include "sha256.h"
#include "video_compare.h"
#include "video_reader.h"
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
  void TearDown() override { fs::remove_all(dir_); }
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
  EXPECT_EQ(sha256_file_hex(path("a.mp4")), sha256_file_hex(path("b.mp4")));
  const DecodedVideo d = read_video(path("a.mp4"));
  EXPECT_EQ(d.frames.count, 9);
  EXPECT_EQ(d.pixel_format, "gbrp");
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
    EXPECT_EQ(f.ssim.rgb, 1.0);
    EXPECT_EQ(f.ssim.luma, 1.0);
    EXPECT_TRUE(std::isinf(f.psnr) && f.psnr > 0);
  }
  EXPECT_EQ(c.ssim_min, 1.0);
  EXPECT_EQ(to_json(c)["psnr_min"], "inf");
  EXPECT_NE(to_markdown(c).find("| PSNR min / mean (dB) | inf / inf |"), std::string::npos) << to_markdown(c);
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
  EXPECT_LT(c.ssim_min, 1.0);
  // One byte off by 16 in 40 * 24 * 3: MSE = 256 / 2880.
  EXPECT_DOUBLE_EQ(c.psnr_min, 10.0 * std::log10(255.0 * 255.0 * 2880.0 / 256.0));
  EXPECT_TRUE(std::isinf(c.psnr_mean));
  EXPECT_EQ(run_cli("compare " + path("a.mp4") + " " + path("b.mp4") + " --json " + path("c.json") + " --plot " +
                    path("c.png")),
            1);
  EXPECT_GT(fs::file_size(path("c.png")), 1000u);
  EXPECT_GT(fs::file_size(path("c.json")), 100u);
}

TEST_F(E2E_Video, PsnrMatchesFfmpegPsnrFilterOnRgb24) {
  if (std::system("ffmpeg -version >/dev/null 2>&1") != 0) GTEST_SKIP() << "ffmpeg binary not on PATH";
  const VideoFrames a = synthetic(6, 64, 48, 4);
  VideoFrames b = synthetic(6, 64, 48, 5);  // other noise: ~35-45 dB
  write_mp4(path("a.mp4"), a, 16);
  write_mp4(path("b.mp4"), b, 16);
  const std::string stats = path("psnr.log");
  const std::string cmd = "ffmpeg -nostdin -v error -i " + path("a.mp4") + " -i " + path("b.mp4") +
                          " -lavfi \"[0:v]format=rgb24[a];[1:v]format=rgb24[b];[a][b]psnr=stats_file=" + stats +
                          "\" -f null - 2>/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const VideoComparison c = compare_videos(read_video(path("a.mp4")), read_video(path("b.mp4")), "a", "b");
  std::ifstream in(stats);
  const std::regex re("psnr_avg:([0-9.]+|inf)");
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(line, m, re)) << line;
    ASSERT_LT(n, c.frames);
    const double ours = c.per_frame[static_cast<size_t>(n)].psnr;
    EXPECT_NEAR(ours, std::stod(m[1]), 0.01) << "frame " << n << ": " << line;
    ++n;
  }
  EXPECT_EQ(n, c.frames);
}

TEST_F(E2E_Video, MismatchedClipsAreErrorsNeverTruncated) {
  write_mp4(path("f5.mp4"), synthetic(5, 32, 16, 6), 16);
  write_mp4(path("f4.mp4"), synthetic(4, 32, 16, 6), 16);
  write_mp4(path("s.mp4"), synthetic(5, 48, 16, 6), 16);
  write_y4m(path("y.y4m"), synthetic(5, 32, 16, 6), 16);
  const DecodedVideo f5 = read_video(path("f5.mp4"));
  const auto message = [&](const DecodedVideo& b, int expect) {
    try {
      compare_videos(f5, b, "a", "b", expect);
    } catch (const VideoError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(read_video(path("f4.mp4")), -1), "frame counts differ: baseline 5, candidate 4");
  EXPECT_EQ(message(read_video(path("s.mp4")), -1), "frame sizes differ: baseline 32x16, candidate 48x16");
  EXPECT_EQ(message(read_video(path("y.y4m")), -1), "pixel formats differ: baseline gbrp, candidate yuv444p");
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
}

}  // namespace
}  // namespace fuseproof::e2e
