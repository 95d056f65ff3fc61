// wan_pipeline_test.cpp: the e2e gates on the small config (CPU): fused == eager (bf16 and fp16), unmount restores
// lossless and skip_bias_add, only NVFP4 linears are marked and mounted, rejected calls fall back to eager with the
// reason, the measured high-vs-high-eager comparison, and the negative controls that show the gates can fail.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <set>

#include <sys/wait.h>
#include <unistd.h>

#include "common/remove_tree.h"
#include "common/sha256.h"
#include "frame_comparison.h"
#include "run_manifest.h"
#include "wan_pipeline.h"
#ifdef FUSEPROOF_E2E_WITH_VIDEO
#include "mp4_writer.h"
#include "video_compare.h"
#include "video_reader.h"
#endif

namespace fuseproof::e2e {
namespace {

VideoFrames run_mode(WanPipeline& p, Quality q) {
  apply_quality(p, q);
  return p.run();
}

/// The first differing byte, as "frame f (y, x, c): 0xAA vs 0xBB", or "" when equal.
std::string first_difference(const VideoFrames& a, const VideoFrames& b) {
  if (a.count != b.count || a.width != b.width || a.height != b.height) return "shapes differ";
  for (size_t i = 0; i < a.rgb.size(); ++i) {
    if (a.rgb[i] == b.rgb[i]) continue;
    const size_t f = i / a.frame_bytes(), r = i % a.frame_bytes();
    char buf[128];
    std::snprintf(buf, sizeof buf, "frame %zu (y %zu, x %zu, c %zu): 0x%02X vs 0x%02X", f, r / 3 / a.width,
                  r / 3 % a.width, r % 3, a.rgb[i], b.rgb[i]);
    return buf;
  }
  return "";
}

/// Guard (CUTLASS testbed): frames that are constant would make every identity gate pass trivially.
void expect_nontrivial(const VideoFrames& v) {
  ASSERT_EQ(v.count, 81);
  const std::set<uint8_t> levels(v.rgb.begin(), v.rgb.end());
  EXPECT_GT(levels.size(), 64u) << "frames use only " << levels.size() << " levels";
  EXPECT_NE(std::memcmp(v.frame(0), v.frame(40), v.frame_bytes()), 0) << "frames 0 and 40 are equal: no motion";
}

TEST(E2E_Pipeline, SmallConfigGives81FramesOfWanShape) {
  const PipelineConfig c = small_config();
  EXPECT_EQ(c.latent_frames, 21);
  EXPECT_EQ(c.output_frames(), 81);
  WanPipeline p(c, ComputeDevice::kCpu);
  const VideoFrames v = run_mode(p, Quality::kLossless);
  EXPECT_EQ(v.width, 64);
  EXPECT_EQ(v.height, 64);
  expect_nontrivial(v);
}

TEST(E2E_Pipeline, HighEqualsHighEager_BitIdentical) {
  WanPipeline p(small_config(), ComputeDevice::kCpu);
  const std::vector<MountStatus> mounts = apply_quality(p, Quality::kHigh);
  int mounted = 0;
  for (const SiteInfo& s : p.sites()) mounted += s.mounted;
  EXPECT_EQ(mounted, small_config().blocks) << "every FFN site must be fused in high";
  const VideoFrames high = p.run();
  const VideoFrames eager = run_mode(p, Quality::kHighEager);
  expect_nontrivial(high);
  EXPECT_EQ(first_difference(high, eager), "");
  EXPECT_EQ(frame_sha256(high), frame_sha256(eager));
}

TEST(E2E_Pipeline, LosslessVsHigh_NegativeControl) {
  WanPipeline p(small_config(), ComputeDevice::kCpu);
  const VideoFrames lossless = run_mode(p, Quality::kLossless);
  const VideoFrames high = run_mode(p, Quality::kHigh);
  const std::vector<std::string> a = frame_sha256(lossless), b = frame_sha256(high);
  int differ = 0;
  for (size_t i = 0; i < a.size(); ++i) differ += a[i] != b[i];
  EXPECT_EQ(differ, 81) << "NVFP4 fc_in must change every frame";
}

TEST(E2E_Pipeline, MountRunUnmountRun_ReproducesLossless) {
  WanPipeline p(small_config(), ComputeDevice::kCpu);
  const VideoFrames before = run_mode(p, Quality::kLossless);
  const VideoFrames high = run_mode(p, Quality::kHigh);  // mount
  p.unmount_all();                                       // unmount the fusion, NVFP4 stays: high-eager
  const VideoFrames eager = p.run();
  p.set_fc_in_nvfp4(false);                              // back to the bf16 checkpoint
  const VideoFrames after = p.run();
  EXPECT_EQ(first_difference(before, after), "");
  EXPECT_EQ(first_difference(high, eager), "");
  EXPECT_NE(first_difference(before, high), "");
}

TEST(E2E_Pipeline, MutatedSiteOp_ChangesFrames) {
  WanPipeline p(small_config(), ComputeDevice::kCpu);
  const VideoFrames high = run_mode(p, Quality::kHigh);
  // The kernel, then the lowest mantissa bit flipped in every output element of blocks.1: a 1-ulp rounding bug
  // (e.g. truncation instead of round-to-nearest) at one site. A single flipped element can be absorbed by later bf16
  // roundings and the 8-bit frames; a systematic 1-ulp error must not be.
  const FusedBiasGelu kernel = kernel_bias_gelu_tanh();
  const FusedBiasGelu mutant = [kernel](const TensorView& out, const TensorView& x, const TensorView& bias) {
    const LaunchStatus s = kernel(out, x, bias);
    if (s.ok) {
      auto* o = static_cast<uint16_t*>(out.data);
      for (int64_t i = 0; i < out.sizes[0] * out.sizes[1]; ++i) o[i] ^= 0x0001;
    }
    return s;
  };
  p.unmount("blocks.1.ffn");
  ASSERT_TRUE(p.mount("blocks.1.ffn", mutant).ok);
  const VideoFrames mutated = p.run();
  EXPECT_NE(first_difference(high, mutated), "") << "a 1-ulp change at a fusion site did not reach the frames";
  // And a mounted op that is plain wrong (bias dropped) is caught too.
  const FusedBiasGelu no_bias = [kernel](const TensorView& out, const TensorView& x, const TensorView& bias) {
    std::vector<uint16_t> zeros(static_cast<size_t>(bias.sizes[0]), 0);
    TensorView zb = bias;
    zb.data = zeros.data();
    return kernel(out, x, zb);
  };
  p.unmount("blocks.1.ffn");
  ASSERT_TRUE(p.mount("blocks.1.ffn", no_bias).ok);
  EXPECT_NE(first_difference(high, p.run()), "");
}

TEST(E2E_Pipeline, IneligibleSitesAreRejectedWithAReasonAndStayEager) {
  PipelineConfig c = small_config();
  c.fc_in_bias = {true, false};
  WanPipeline p(c, ComputeDevice::kCpu);
  MountStatus s = p.mount("blocks.0.ffn");
  EXPECT_EQ(s.message, "mount blocks.0.ffn: fc_in is not NVFP4");
  p.set_fc_in_nvfp4(true);
  EXPECT_EQ(p.mount("blocks.1.ffn").message, "mount blocks.1.ffn: fc_in has no bias");
  EXPECT_EQ(p.mount("time_embedding").message, "mount time_embedding: site is not a fused-GELU target");
  EXPECT_EQ(p.mount("blocks.9.ffn").message, "mount blocks.9.ffn: no such site");
  EXPECT_TRUE(p.mount("blocks.0.ffn").ok);
  for (const SiteInfo& i : p.sites()) EXPECT_EQ(i.mounted, i.name == "blocks.0.ffn") << i.name;
  // The rejected sites run eager, so the partly fused pipeline still equals its eager twin.
  const VideoFrames fused = p.run();
  p.unmount_all();
  EXPECT_EQ(first_difference(fused, p.run()), "");
  // Switching back to bf16 unmounts: the site no longer qualifies.
  EXPECT_TRUE(p.mount("blocks.0.ffn").ok);
  p.set_fc_in_nvfp4(false);
  for (const SiteInfo& i : p.sites()) EXPECT_FALSE(i.mounted) << i.name;
}

TEST(E2E_Pipeline, SeededWeightsGiveTheSameFramesInAFreshPipeline) {
  WanPipeline a(small_config(), ComputeDevice::kCpu);
  WanPipeline b(small_config(), ComputeDevice::kCpu);
  EXPECT_EQ(first_difference(run_mode(a, Quality::kHigh), run_mode(b, Quality::kHigh)), "");
  PipelineConfig other = small_config();
  other.seed += 1;
  WanPipeline c(other, ComputeDevice::kCpu);
  EXPECT_NE(first_difference(run_mode(a, Quality::kHigh), run_mode(c, Quality::kHigh)), "");
}

TEST(E2E_Pipeline, MountSetsSkipBiasAddAndUnmountRestoresIt) {
  WanPipeline p(small_config(), ComputeDevice::kCpu);
  apply_quality(p, Quality::kHighEager);
  const auto skip_of = [&](const std::string& linear) {
    for (const LinearInfo& l : p.linears()) {
      if (l.name == linear) return l.skip_bias_add;
    }
    ADD_FAILURE() << "no linear " << linear;
    return false;
  };
  for (const LinearInfo& l : p.linears()) EXPECT_FALSE(l.skip_bias_add) << l.name;
  const VideoFrames eager = p.run();
  ASSERT_TRUE(p.mount("blocks.0.ffn").ok);
  EXPECT_TRUE(skip_of("blocks.0.ffn.fc_in"));
  EXPECT_FALSE(skip_of("blocks.1.ffn.fc_in"));
  for (const SiteInfo& s : p.sites()) EXPECT_EQ(s.fc_in_skip_bias_add, s.name == "blocks.0.ffn") << s.name;
  // The op now adds the bias: the linear must not add it as well (a kernel given a zero bias shows the linear did not).
  EXPECT_EQ(first_difference(p.run(), eager), "");
  p.unmount("blocks.0.ffn");
  EXPECT_FALSE(skip_of("blocks.0.ffn.fc_in"));
  EXPECT_EQ(first_difference(p.run(), eager), "");
  // Negative control: skip_bias_add left set after unmount (the bias never added) changes the frames; shown by
  // mounting an op that ignores the bias it is given.
  const FusedBiasGelu kernel = kernel_bias_gelu_tanh();
  ASSERT_TRUE(p.mount("blocks.0.ffn", [kernel](const TensorView& out, const TensorView& x, const TensorView& bias) {
                 std::vector<uint16_t> zeros(static_cast<size_t>(bias.sizes[0]), 0);
                 TensorView zb = bias;
                 zb.data = zeros.data();
                 return kernel(out, x, zb);
               }).ok);
  EXPECT_NE(first_difference(p.run(), eager), "");
  p.unmount_all();
  for (const LinearInfo& l : p.linears()) EXPECT_FALSE(l.skip_bias_add) << l.name;
}

TEST(E2E_Pipeline, OnlyNvfp4LinearsAreMarked_AnExcludedLinearIsNeverMounted) {
  PipelineConfig c = small_config();
  c.nvfp4_exclude = {"blocks.1.ffn.fc_in"};
  WanPipeline p(c, ComputeDevice::kCpu);
  const std::vector<MountStatus> mounts = apply_quality(p, Quality::kHigh);
  std::vector<std::string> rejected;
  for (const MountStatus& m : mounts) {
    if (!m.ok) rejected.push_back(m.message);
  }
  EXPECT_EQ(rejected, (std::vector<std::string>{"mount blocks.1.ffn: fc_in is excluded from NVFP4 (nvfp4_exclude)",
                                                "mount time_embedding: site is not a fused-GELU target"}));
  for (const LinearInfo& l : p.linears()) {
    EXPECT_EQ(l.nvfp4, l.name == "blocks.0.ffn.fc_in") << l.name;
    EXPECT_EQ(l.skip_bias_add, l.name == "blocks.0.ffn.fc_in") << l.name;
  }
  EXPECT_EQ(p.mount("blocks.1.ffn").message, "mount blocks.1.ffn: fc_in is excluded from NVFP4 (nvfp4_exclude)");
  for (const SiteInfo& s : p.sites()) EXPECT_EQ(s.mounted, s.name == "blocks.0.ffn") << s.name;
  const VideoFrames high = p.run();
  EXPECT_EQ(first_difference(high, run_mode(p, Quality::kHighEager)), "");
  run_mode(p, Quality::kLossless);
  for (const LinearInfo& l : p.linears()) EXPECT_FALSE(l.nvfp4) << l.name;
  // The exclusion had an effect: without it blocks.1 runs NVFP4 and the frames differ.
  WanPipeline all(small_config(), ComputeDevice::kCpu);
  EXPECT_NE(first_difference(high, run_mode(all, Quality::kHigh)), "");
  PipelineConfig bad = small_config();
  bad.nvfp4_exclude = {"head"};
  EXPECT_THROW(WanPipeline(bad, ComputeDevice::kCpu), std::invalid_argument);
}

TEST(E2E_Pipeline, CallTheOpCannotTakeFallsBackToEagerWithTheReason) {
  WanPipeline p(small_config(), ComputeDevice::kCpu);
  const VideoFrames eager = run_mode(p, Quality::kHighEager);
  const FusedBiasGelu kernel = kernel_bias_gelu_tanh();
  // An op for bf16 on CUDA only, as a kernel built for one dtype and device would say.
  const FusedBiasGelu cuda_only = [kernel](const TensorView& out, const TensorView& x, const TensorView& bias) {
    if (x.device.kind != DeviceKind::kCuda) return LaunchStatus{false, "x: device must be cuda, got cpu"};
    return kernel(out, x, bias);
  };
  ASSERT_TRUE(p.mount("blocks.0.ffn", cuda_only).ok);
  ASSERT_TRUE(p.mount("blocks.1.ffn", [](const TensorView&, const TensorView&, const TensorView&) -> LaunchStatus {
                 throw std::runtime_error("x: dtype must be fp16, got bf16");
               }).ok);
  VideoFrames frames;
  ASSERT_NO_THROW(frames = p.run());
  EXPECT_EQ(first_difference(frames, eager), "");
  for (const SiteInfo& s : p.sites()) {
    if (s.name == "blocks.0.ffn") {
      EXPECT_EQ(s.fallback_calls, small_config().steps);
      EXPECT_EQ(s.fallback_reason, "x: device must be cuda, got cpu");
    } else if (s.name == "blocks.1.ffn") {
      EXPECT_EQ(s.fallback_calls, small_config().steps);
      EXPECT_EQ(s.fallback_reason, "x: dtype must be fp16, got bf16");
    } else {
      EXPECT_EQ(s.fallback_calls, 0) << s.name;
    }
  }
  // The kernel itself takes every call: no fallback in high.
  apply_quality(p, Quality::kHigh);
  p.run();
  for (const SiteInfo& s : p.sites()) EXPECT_EQ(s.fallback_calls, 0) << s.name << ": " << s.fallback_reason;
}

TEST(E2E_Pipeline, Fp16RunBesideBf16_CpuEagerGeluIsNotCudaEager) {
  PipelineConfig c = small_config();
  c.dtype = "fp16";
  WanPipeline p(c, ComputeDevice::kCpu);
  const VideoFrames high = run_mode(p, Quality::kHigh);
  int mounted = 0;
  for (const SiteInfo& s : p.sites()) {
    mounted += s.mounted;
    EXPECT_EQ(s.fallback_calls, 0) << s.name << ": " << s.fallback_reason;
  }
  EXPECT_EQ(mounted, c.blocks) << "the kernel takes fp16: every FFN site is fused";
  const VideoFrames eager = run_mode(p, Quality::kHighEager);
  const VideoFrames lossless = run_mode(p, Quality::kLossless);
  expect_nontrivial(high);
  EXPECT_NE(first_difference(lossless, high), "");
  WanPipeline b(small_config(), ComputeDevice::kCpu);
  EXPECT_NE(first_difference(high, run_mode(b, Quality::kHigh)), "") << "the dtype had no effect";
  // On the CPU, eager fp16 GELU is libtorch's float GELU (SLEEF tanhf) rounded to fp16, while the kernel's emulation
  // models CUDA eager (CUDA's tanhf): fp16's 10 mantissa bits expose their last-bit differences where bf16's 7 absorb
  // them. So high == high-eager in fp16 is a CUDA claim (the GPU nightly gates it); here the gap is measured.
  const VideoComparison gap = compare_planar(gbrp_from_rgb24(eager), gbrp_from_rgb24(high));
  std::printf("fp16 on CPU, high vs high-eager: %d of 81 frames identical, PSNR All min %.2f dB, SSIM All min %.6f\n",
              gap.identical_frames, gap.psnr_all_min, gap.ssim_all_min);
  const VideoComparison control = compare_planar(gbrp_from_rgb24(lossless), gbrp_from_rgb24(high));
  EXPECT_GT(gap.psnr_all_min, control.psnr_all_min) << "the CPU tanh gap must be far smaller than NVFP4's effect";
}

/// Runs fuseproof-e2e; returns its exit status.
int run_e2e(const std::string& args) {
  const int rc = std::system((std::string(FUSEPROOF_E2E_BIN) + " " + args + " >/dev/null 2>&1").c_str());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(E2E_Pipeline, NightlyMeasuresHighVsHighEagerThroughTheComparator) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("fuseproof_e2e_compare_" + std::to_string(static_cast<long>(::getpid())));
  const std::string d = dir.string();
  ASSERT_EQ(run_e2e("run --config small --modes lossless,high,high-eager --formats rgb24 --out " + d), 0);
  ASSERT_EQ(run_e2e("compare --run-dir " + d + " --json " + d + "/same.json"), 0);
  const nlohmann::json same = read_json_file(d + "/same.json");
  EXPECT_EQ(same.at("frames_identical"), true);
  EXPECT_EQ(same.at("psnr_all_min"), "inf");
  EXPECT_EQ(same.at("ssim_all_min"), 1.0);
  EXPECT_EQ(same.at("ssim_r_min"), 1.0);
  EXPECT_EQ(same.at("identical_frames"), 81);
  // Negative control: the same command on lossless vs high measures a difference and exits 1.
  ASSERT_EQ(run_e2e("compare --run-dir " + d + " --baseline lossless --candidate high --json " + d + "/diff.json"), 1);
  const nlohmann::json diff = read_json_file(d + "/diff.json");
  EXPECT_LT(diff.at("ssim_all_min").get<double>(), 1.0);
  EXPECT_TRUE(diff.at("psnr_all_min").is_number());
  EXPECT_EQ(run_e2e("compare --run-dir " + d + " --candidate nosuchmode"), 2);
  remove_tree(dir);
}

#ifdef FUSEPROOF_E2E_WITH_VIDEO
TEST(E2E_Pipeline, HighVsHighEager_SameMp4AndComparatorSaysIdentical) {
  WanPipeline p(small_config(), ComputeDevice::kCpu);
  const VideoFrames high = run_mode(p, Quality::kHigh);
  const VideoFrames eager = run_mode(p, Quality::kHighEager);
  const VideoFrames lossless = run_mode(p, Quality::kLossless);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("fuseproof_e2e_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                     "_" + std::to_string(reinterpret_cast<uintptr_t>(&p)));
  std::filesystem::create_directories(dir);
  const std::string h = (dir / "high.mp4").string(), e = (dir / "high-eager.mp4").string(),
                    l = (dir / "lossless.mp4").string();
  write_mp4(h, high, 16);
  write_mp4(e, eager, 16);
  write_mp4(l, lossless, 16);
  EXPECT_EQ(Sha256::of_file(h), Sha256::of_file(e));
  const DecodedVideo dh = read_video(h), de = read_video(e), dl = read_video(l);
  EXPECT_EQ(frame_sha256(dh.frames), frame_sha256(high)) << "the MP4 is lossless: decoded pixels equal the frames";
  const VideoComparison same = compare_videos(dh, de, h, e, CompareOptions{81});
  EXPECT_TRUE(same.frames_identical);
  EXPECT_TRUE(same.container_equal);
  EXPECT_EQ(same.ssim_all_min, 1.0);
  EXPECT_TRUE(std::isinf(same.psnr_all_min) && same.psnr_all_min > 0);
  const VideoComparison diff = compare_videos(dl, dh, l, h, CompareOptions{81});  // negative control
  EXPECT_FALSE(diff.frames_identical);
  EXPECT_FALSE(diff.container_equal);
  EXPECT_LT(diff.ssim_all_min, 1.0);
  EXPECT_TRUE(std::isfinite(diff.psnr_all_min));
  EXPECT_EQ(diff.identical_frames, 0);
  // The GPU nightly measures on RGB24 frames without FFmpeg (gbrp planes): the same figures as on the decoded MP4s.
  const VideoComparison raw = compare_planar(gbrp_from_rgb24(lossless), gbrp_from_rgb24(high));
  EXPECT_EQ(raw.psnr_all_min, diff.psnr_all_min);
  EXPECT_EQ(raw.psnr_all_mean, diff.psnr_all_mean);
  EXPECT_EQ(raw.ssim_all_min, diff.ssim_all_min);
  EXPECT_EQ(raw.ssim_all_mean, diff.ssim_all_mean);
  remove_tree(dir);
}
#endif

}  // namespace
}  // namespace fuseproof::e2e
