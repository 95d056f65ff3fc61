// fc_out_nvfp4_pipeline_test.cpp: fc_out_nvfp4_input (small, CPU): high's one fused bias + GELU + NVFP4 call per FFN
// site equals high-eager's eager bias + GELU then nvfp4_quant frame for frame; the mount/unmount/reject rules, a
// refused call running the unfused composition with the reason, `fuseproof-e2e sites`, and the negative controls (one
// site's scale bytes perturbed, a global scale other than the pipeline's).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "golden_check.h"
#include "run_manifest.h"
#include "seeded_generator.h"
#include "wan_pipeline.h"

namespace fuseproof::e2e {
namespace {

using kernel::QuantContract;

PipelineConfig fp4_config() {
  PipelineConfig c = small_config();
  c.fc_out_nvfp4_input = true;
  return c;
}

VideoFrames run_mode(WanPipeline& p, Quality q) {
  apply_quality(p, q);
  return p.run();
}

int frames_differing(const VideoFrames& a, const VideoFrames& b) {
  const std::vector<std::string> ha = frame_sha256(a), hb = frame_sha256(b);
  int n = 0;
  for (size_t i = 0; i < ha.size() && i < hb.size(); ++i) n += ha[i] != hb[i];
  return n + static_cast<int>(ha.size() > hb.size() ? ha.size() - hb.size() : hb.size() - ha.size());
}

/// A run manifest as `fuseproof-e2e run` writes it, with high's fallbacks as `p` recorded them (for check_run).
nlohmann::json manifest(const PipelineConfig& c, const VideoFrames& lossless, const VideoFrames& high,
                        const std::vector<SiteInfo>& high_sites, const VideoFrames& high_eager,
                        const VideoFrames& after_unmount) {
  nlohmann::json run = {{"schema", kRunSchema}, {"config", to_json(c)}, {"device", "cpu"}, {"runs", nlohmann::json::object()}};
  run["runs"]["lossless"] = describe_frames(lossless);
  nlohmann::json h = describe_frames(high);
  h["mounted"] = nlohmann::json::array();
  h["fallbacks"] = nlohmann::json::array();
  for (const SiteInfo& s : high_sites) {
    if (s.mounted) h["mounted"].push_back(s.name);
    if (s.fallback_calls > 0)
      h["fallbacks"].push_back({{"site", s.name}, {"calls", s.fallback_calls}, {"reason", s.fallback_reason}});
  }
  run["runs"]["high"] = h;
  run["runs"]["high-eager"] = describe_frames(high_eager);
  run["runs"][kLosslessAfterUnmount] = describe_frames(after_unmount);
  return run;
}

/// The built-in fused op, then `edit` on its host scale bytes (a CPU-only mutant).
FusedBiasGeluNvfp4 with_scales_edited(std::function<void(int8_t* scales, int64_t n)> edit) {
  return [edit](const TensorView& codes, const TensorView& scales, const TensorView& x, const TensorView& bias,
                float g) {
    const LaunchStatus st = kernel_bias_gelu_tanh_nvfp4()(codes, scales, x, bias, g);
    if (st.ok) edit(static_cast<int8_t*>(scales.data), scales.sizes[0] * scales.sizes[1]);
    return st;
  };
}

TEST(E2E_FcOutNvfp4, ConfigNamesTheKnobOnlyWhenSet) {
  for (const PipelineConfig& c : {small_config(), default_config(), small_dit_config(), default_dit_config()}) {
    EXPECT_FALSE(c.fc_out_nvfp4_input) << c.name;
    EXPECT_FALSE(to_json(c).contains("fc_out_nvfp4_input")) << c.name;
    EXPECT_FALSE(to_json(c).contains("fc_out_input_global_scale")) << c.name;
  }
  const nlohmann::json j = to_json(fp4_config());
  EXPECT_EQ(j.at("fc_out_nvfp4_input"), true);
  EXPECT_EQ(j.at("fc_out_input_global_scale"), 128.0);
  PipelineConfig bad = fp4_config();
  bad.fc_out_input_global_scale = 0.0f;
  try {
    validate(bad);
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "pipeline config: fc_out_input_global_scale must be a positive finite float, got 0");
  }
  bad = fp4_config();
  bad.ffn_dim = 264;
  try {
    validate(bad);
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "pipeline config: ffn_dim must be a multiple of 16 for NVFP4 fc_out input blocks, got 264");
  }
  bad.fc_out_nvfp4_input = false;
  EXPECT_NO_THROW(validate(bad)) << "the rule is the knob's";
}

TEST(E2E_FcOutNvfp4, HighEqualsHighEager_EveryFrameSha256) {
  const PipelineConfig c = fp4_config();
  WanPipeline p(c, ComputeDevice::kCpu);
  const VideoFrames lossless = run_mode(p, Quality::kLossless);
  for (const SiteInfo& s : p.sites()) EXPECT_FALSE(s.fc_out_nvfp4_input) << s.name << ": lossless quantizes nothing";
  for (const MountStatus& m : apply_quality(p, Quality::kHigh)) {
    if (m.message.rfind("mount time_embedding:", 0) != 0) EXPECT_TRUE(m.ok) << m.message;
  }
  int mounted = 0;
  for (const SiteInfo& s : p.sites()) {
    mounted += s.mounted;
    EXPECT_EQ(s.fc_out_nvfp4_input, s.gelu_target) << s.name;
  }
  ASSERT_EQ(mounted, c.blocks);
  const VideoFrames high = p.run();
  const std::vector<SiteInfo> high_sites = p.sites();
  for (const SiteInfo& s : high_sites) EXPECT_EQ(s.fallback_calls, 0) << s.name << ": " << s.fallback_reason;
  const VideoFrames eager = run_mode(p, Quality::kHighEager);
  const VideoFrames after = run_mode(p, Quality::kLossless);
  ASSERT_EQ(high.count, 81);
  EXPECT_EQ(frame_sha256(high), frame_sha256(eager));
  // Guards: the frames move, and quantizing fc_out's input is a computation of its own (every frame differs from the
  // same pipeline's high without the knob), so the identity above is not the knob-off one again.
  EXPECT_NE(frame_sha256(high)[0], frame_sha256(high)[40]);
  WanPipeline plain(small_config(), ComputeDevice::kCpu);
  EXPECT_EQ(frames_differing(high, run_mode(plain, Quality::kHigh)), 81);
  const CheckReport r = check_run(manifest(c, lossless, high, high_sites, eager, after), nullptr);
  EXPECT_EQ(r.outcome, CheckOutcome::kPass) << testing::PrintToString(r.lines);
  bool named = false;
  for (const std::string& line : r.lines)
    named |= line.find("PASS high == high-eager (fused bias+GELU+NVFP4 quantization is lossless)") == 0;
  EXPECT_TRUE(named) << testing::PrintToString(r.lines);
}

TEST(E2E_FcOutNvfp4, StaticGlobalScaleLeavesNoBlockScaleSaturated) {
  // The static global scale 128 claims a calibrated activation amax of 21 (448 x 6 / 128): no block of the run may
  // reach the E4M3 clamp 448 (0x7E), else the scale would be clipping activations.
  WanPipeline p(fp4_config(), ComputeDevice::kCpu);
  apply_quality(p, Quality::kHigh);
  int largest = 0, saturated = 0;
  int64_t blocks = 0;
  for (const char* site : {"blocks.0.ffn", "blocks.1.ffn"}) {
    ASSERT_TRUE(p.mount(site, with_scales_edited([&](int8_t* s, int64_t n) {
                  for (int64_t i = 0; i < n; ++i) {
                    const int b = static_cast<uint8_t>(s[i]);
                    largest = std::max(largest, b & 0x7F);
                    saturated += (b & 0x7F) == 0x7E;
                  }
                  blocks += n;
                })).ok);
  }
  p.run();
  ASSERT_GT(blocks, 0);
  EXPECT_EQ(saturated, 0);
  EXPECT_LT(largest, 0x7E);
  std::printf("fc_out input: %lld blocks, largest E4M3 scale byte 0x%02X, %d at the clamp\n",
              static_cast<long long>(blocks), largest, saturated);
}

TEST(E2E_FcOutNvfp4, MountRulesRejectWithAReason_UnmountRestoresEager) {
  PipelineConfig c = fp4_config();
  WanPipeline p(c, ComputeDevice::kCpu);
  apply_quality(p, Quality::kLossless);
  EXPECT_EQ(p.mount("blocks.0.ffn", kernel_bias_gelu_tanh_nvfp4()).message, "mount blocks.0.ffn: fc_in is not NVFP4");
  apply_quality(p, Quality::kHighEager);
  EXPECT_EQ(p.mount("blocks.0.ffn", kernel_bias_gelu_tanh()).message,
            "mount blocks.0.ffn: fc_out takes NVFP4 input (fc_out_nvfp4_input): the op must quantize");
  EXPECT_EQ(p.mount("time_embedding", kernel_bias_gelu_tanh_nvfp4()).message,
            "mount time_embedding: site is not a fused-GELU target");
  EXPECT_EQ(p.mount("blocks.2.ffn", kernel_bias_gelu_tanh_nvfp4()).message, "mount blocks.2.ffn: no such site");
  EXPECT_EQ(p.mount("blocks.0.ffn", FusedBiasGeluNvfp4{}).message, "mount blocks.0.ffn: no op given");
  for (const SiteInfo& s : p.sites()) EXPECT_FALSE(s.mounted) << s.name << ": a rejected mount left it mounted";
  const VideoFrames eager = p.run();

  // Mount both sites (fc_in leaves its bias to the op), unmount: the unfused composition again, bit for bit.
  for (const char* site : {"blocks.0.ffn", "blocks.1.ffn"}) ASSERT_TRUE(p.mount(site).ok) << site;
  for (const SiteInfo& s : p.sites()) EXPECT_EQ(s.fc_in_skip_bias_add, s.mounted) << s.name;
  p.unmount_all();
  for (const SiteInfo& s : p.sites()) EXPECT_FALSE(s.fc_in_skip_bias_add) << s.name;
  EXPECT_EQ(frame_sha256(p.run()), frame_sha256(eager));

  // Knob off: a quantizing op has no place; an excluded fc_in keeps its site eager and its fc_out input in T.
  WanPipeline wan(small_config(), ComputeDevice::kCpu);
  apply_quality(wan, Quality::kHighEager);
  EXPECT_EQ(wan.mount("blocks.0.ffn", kernel_bias_gelu_tanh_nvfp4()).message,
            "mount blocks.0.ffn: fc_out does not take NVFP4 input (fc_out_nvfp4_input off)");
  for (const SiteInfo& s : wan.sites()) EXPECT_FALSE(s.fc_out_nvfp4_input) << s.name;
  c.nvfp4_exclude = {"blocks.1.ffn.fc_in"};
  WanPipeline excluded(c, ComputeDevice::kCpu);
  apply_quality(excluded, Quality::kHigh);
  EXPECT_EQ(excluded.mount("blocks.1.ffn", kernel_bias_gelu_tanh_nvfp4()).message,
            "mount blocks.1.ffn: fc_in is excluded from NVFP4 (nvfp4_exclude)");
  for (const SiteInfo& s : excluded.sites()) {
    if (s.name == "blocks.0.ffn") EXPECT_TRUE(s.mounted && s.fc_out_nvfp4_input);
    if (s.name == "blocks.1.ffn") EXPECT_FALSE(s.mounted || s.fc_out_nvfp4_input);
  }
}

TEST(E2E_FcOutNvfp4, CallTheOpCannotTakeRunsTheUnfusedComposition_CheckSaysIncomplete) {
  const PipelineConfig c = fp4_config();
  WanPipeline p(c, ComputeDevice::kCpu);
  const VideoFrames lossless = run_mode(p, Quality::kLossless);
  const VideoFrames eager = run_mode(p, Quality::kHighEager);
  apply_quality(p, Quality::kHigh);
  // rcp-approx is the device's rcp.approx.ftz.f32: the CPU emulation refuses every call of it.
  ASSERT_TRUE(p.mount("blocks.0.ffn", kernel_bias_gelu_tanh_nvfp4(QuantContract::kRcpApprox)).ok);
  const VideoFrames high = p.run();
  const std::vector<SiteInfo> high_sites = p.sites();
  for (const SiteInfo& s : high_sites) {
    if (s.name == "blocks.0.ffn") {
      EXPECT_EQ(s.fallback_calls, c.steps);
      EXPECT_EQ(s.fallback_reason, "bias_gelu_tanh_nvfp4_quant: contract rcp-approx needs the device's "
                                   "rcp.approx.ftz.f32; the CPU emulation does not compute it");
    } else {
      EXPECT_EQ(s.fallback_calls, 0) << s.name << ": " << s.fallback_reason;
    }
  }
  EXPECT_EQ(frame_sha256(high), frame_sha256(eager)) << "the refused calls ran the unfused composition";
  const VideoFrames after = run_mode(p, Quality::kLossless);
  const CheckReport r = check_run(manifest(c, lossless, high, high_sites, eager, after), nullptr);
  EXPECT_EQ(r.outcome, CheckOutcome::kIncomplete) << testing::PrintToString(r.lines);
}

class E2E_FcOutNvfp4NegativeControl : public ::testing::TestWithParam<std::string> {};

TEST_P(E2E_FcOutNvfp4NegativeControl, PerturbedScaleBytesAtOneSite_HighDiffersAndCheckFails) {
  // Every E4M3 scale byte of one site with its lowest mantissa bit flipped (one step of the scale, 6-12%).
  const PipelineConfig c = fp4_config();
  WanPipeline p(c, ComputeDevice::kCpu);
  const VideoFrames lossless = run_mode(p, Quality::kLossless);
  const VideoFrames eager = run_mode(p, Quality::kHighEager);
  apply_quality(p, Quality::kHigh);
  ASSERT_TRUE(p.mount(GetParam(), with_scales_edited([](int8_t* s, int64_t n) {
                for (int64_t i = 0; i < n; ++i) s[i] = static_cast<int8_t>(s[i] ^ 1);
              })).ok);
  const VideoFrames wrong = p.run();
  const std::vector<SiteInfo> sites = p.sites();
  const VideoFrames after = run_mode(p, Quality::kLossless);
  EXPECT_GT(frames_differing(wrong, eager), 0);
  const CheckReport bad = check_run(manifest(c, lossless, wrong, sites, eager, after), nullptr);
  EXPECT_EQ(bad.outcome, CheckOutcome::kMismatch) << testing::PrintToString(bad.lines);
  std::printf("%s, scale bytes perturbed: %d of 81 frames differ from high-eager\n", GetParam().c_str(),
              frames_differing(wrong, eager));
}

INSTANTIATE_TEST_SUITE_P(Sites, E2E_FcOutNvfp4NegativeControl,
                         ::testing::Values(std::string("blocks.0.ffn"), std::string("blocks.1.ffn")),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n)
                             if (ch == '.') ch = '_';
                           return n;
                         });

TEST(E2E_FcOutNvfp4, AnOpUnderAnotherGlobalScaleChangesTheFrames) {
  // The fused op must quantize under the pipeline's static scale: one that uses 2 x 128 gives other codes and scales.
  WanPipeline p(fp4_config(), ComputeDevice::kCpu);
  const VideoFrames eager = run_mode(p, Quality::kHighEager);
  apply_quality(p, Quality::kHigh);
  const FusedBiasGeluNvfp4 doubled = [](const TensorView& codes, const TensorView& scales, const TensorView& x,
                                        const TensorView& bias, float g) {
    return kernel_bias_gelu_tanh_nvfp4()(codes, scales, x, bias, 2.0f * g);
  };
  ASSERT_TRUE(p.mount("blocks.0.ffn", doubled).ok);
  EXPECT_EQ(frames_differing(p.run(), eager), 81);
}

/// bf16 of a float, round to nearest even (finite inputs).
uint16_t bf16_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}

TEST(E2E_FcOutNvfp4, FusedCallEqualsBiasGeluThenNvfp4Quant_SaysWhyItRefuses) {
  // 8 rows x 64 of seeded bf16 x and bias: the fused op's codes and scales, byte for byte, against the kernel's
  // bias_gelu_tanh then nvfp4_quant_views (the CPU emulation of both; the pipeline's high-eager uses at::gelu).
  constexpr int64_t kRows = 8, kWidth = 64;
  alignas(16) uint16_t x[kRows * kWidth], bias[kWidth], act[kRows * kWidth];
  alignas(16) int8_t codes[kRows * kWidth / 2], scales[kRows * kWidth / 16], codes2[kRows * kWidth / 2],
      scales2[kRows * kWidth / 16];
  const std::vector<float> xs = seeded_normal(7, "x", kRows * kWidth, 3.0f), bs = seeded_normal(7, "b", kWidth, 0.5f);
  for (int64_t i = 0; i < kRows * kWidth; ++i) x[i] = bf16_of(xs[static_cast<size_t>(i)]);
  for (int64_t i = 0; i < kWidth; ++i) bias[i] = bf16_of(bs[static_cast<size_t>(i)]);
  const TensorView xv = contiguous_view(x, ScalarType::kBf16, {kRows, kWidth});
  const TensorView bv = contiguous_view(bias, ScalarType::kBf16, {kWidth});
  const TensorView cv = contiguous_view(codes, ScalarType::kInt8, {kRows, kWidth / 2});
  const TensorView sv = contiguous_view(scales, ScalarType::kInt8, {kRows, kWidth / 16});
  const FusedBiasGeluNvfp4 op = kernel_bias_gelu_tanh_nvfp4();
  ASSERT_TRUE(op(cv, sv, xv, bv, 128.0f).ok);
  ASSERT_TRUE(bias_gelu_tanh(contiguous_view(act, ScalarType::kBf16, {kRows, kWidth}), xv, bv).ok);
  ASSERT_TRUE(nvfp4_quant_views(contiguous_view(codes2, ScalarType::kInt8, {kRows, kWidth / 2}),
                                contiguous_view(scales2, ScalarType::kInt8, {kRows, kWidth / 16}),
                                contiguous_view(act, ScalarType::kBf16, {kRows, kWidth}), 128.0f)
                  .ok);
  EXPECT_EQ(std::memcmp(codes, codes2, sizeof codes), 0);
  EXPECT_EQ(std::memcmp(scales, scales2, sizeof scales), 0);
  int nonzero = 0;  // guard: not a trivially all-zero quantization
  for (int8_t b : codes) nonzero += b != 0;
  EXPECT_GT(nonzero, kRows * kWidth / 4);

  const std::string name = "bias_gelu_tanh_nvfp4_quant: ";
  EXPECT_EQ(op(contiguous_view(codes, ScalarType::kInt8, {kRows, kWidth}), sv, xv, bv, 128.0f).message,
            name + "codes must be contiguous int8 [rows, width / 2] = [8, 32]");
  EXPECT_EQ(op(cv, contiguous_view(scales, ScalarType::kInt8, {kRows, 2}), xv, bv, 128.0f).message,
            name + "scales must be contiguous int8 [rows, width / 16] = [8, 4]");
  EXPECT_EQ(op(cv, sv, contiguous_view(x, ScalarType::kFloat32, {kRows, kWidth}), bv, 128.0f).message,
            name + "x must be bf16 or fp16, got float32");
  EXPECT_EQ(op(cv, sv, xv, contiguous_view(bias, ScalarType::kFp16, {kWidth}), 128.0f).message,
            name + "bias must have x's dtype");
  EXPECT_EQ(op(cv, sv, contiguous_view(x, ScalarType::kBf16, {kRows * 2, 24}), contiguous_view(bias, ScalarType::kBf16, {24}), 128.0f).message,
            name + "width must be a multiple of 16, got 24");
  EXPECT_EQ(kernel_bias_gelu_tanh_nvfp4(QuantContract::kFp8Group)(cv, sv, xv, bv, 128.0f).message,
            name + "n_scalars must be 0 for contract fp8-group, got 1");
}

/// `fuseproof-e2e` output, or "" when it fails.
std::string e2e_output(const std::string& args) {
  std::string out;
  FILE* f = ::popen((std::string(FUSEPROOF_E2E_BIN) + " " + args + " 2>&1").c_str(), "r");
  if (f == nullptr) return out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, f)) out += buf;
  return ::pclose(f) == 0 ? out : "";
}

TEST(E2E_FcOutNvfp4, SitesCommandListsTheFusedQuantization) {
  const std::string high = e2e_output("sites --config small --mode high --fc-out-nvfp4-input");
  for (const char* site : {"blocks.0.ffn", "blocks.1.ffn"}) {
    const std::string line =
        std::string(site) + ": mounted (fc_in skip_bias_add, fused NVFP4 quantization of fc_out's input)\n";
    EXPECT_NE(high.find(line), std::string::npos) << line << " not in:\n" << high;
  }
  EXPECT_NE(high.find("time_embedding: eager ("), std::string::npos) << high;
}

}  // namespace
}  // namespace fuseproof::e2e
