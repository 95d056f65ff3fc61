// dit_pipeline_test.cpp: the dit_ops configuration (small-dit, CPU): its modulate and gated-residual sites fused in
// high equal high-eager frame for frame (bf16; fp16 with the FFN sites eager), their mount/unmount/reject rules, eager
// fallback with the reason, `fuseproof-e2e sites`, and the negative controls (an fma-contract kernel at one site).
#include <gtest/gtest.h>

#include <cstdio>
#include <set>
#include <string>

#include "golden_check.h"
#include "run_manifest.h"
#include "wan_pipeline.h"

namespace fuseproof::e2e {
namespace {

using kernel::Contract;
using kernel::FamilyOp;

VideoFrames run_mode(WanPipeline& p, Quality q) {
  apply_quality(p, q);
  return p.run();
}

/// The DiT op sites of `p` and how many of them are mounted.
std::vector<SiteInfo> dit_sites(const WanPipeline& p) {
  std::vector<SiteInfo> out;
  for (const SiteInfo& s : p.sites())
    if (!s.dit_op.empty()) out.push_back(s);
  return out;
}

/// The frames differ in at least one frame's SHA-256 (how many, for the message).
int frames_differing(const VideoFrames& a, const VideoFrames& b) {
  const std::vector<std::string> ha = frame_sha256(a), hb = frame_sha256(b);
  int n = 0;
  for (size_t i = 0; i < ha.size() && i < hb.size(); ++i) n += ha[i] != hb[i];
  return n + static_cast<int>(ha.size() > hb.size() ? ha.size() - hb.size() : hb.size() - ha.size());
}

/// A run manifest as `fuseproof-e2e run` writes it, from frames made here (for check_run).
nlohmann::json manifest(const PipelineConfig& c, const VideoFrames& lossless, const VideoFrames& high,
                        const VideoFrames& high_eager, const VideoFrames& after_unmount) {
  nlohmann::json run = {{"schema", kRunSchema}, {"config", to_json(c)}, {"device", "cpu"}, {"runs", nlohmann::json::object()}};
  run["runs"]["lossless"] = describe_frames(lossless);
  run["runs"]["high"] = describe_frames(high);
  run["runs"]["high-eager"] = describe_frames(high_eager);
  run["runs"][kLosslessAfterUnmount] = describe_frames(after_unmount);
  return run;
}

TEST(E2E_DitPipeline, ConfigNamesDitOpsOnlyWhenSet) {
  EXPECT_FALSE(to_json(small_config()).contains("dit_ops"));
  EXPECT_FALSE(to_json(default_config()).contains("dit_ops"));
  EXPECT_EQ(to_json(small_dit_config()).at("dit_ops"), true);
  EXPECT_EQ(config_by_name("default-dit").name, "default-dit");
  EXPECT_TRUE(config_by_name("default-dit").dit_ops);
  PipelineConfig wan_sized = default_dit_config();
  wan_sized.dit_ops = false;
  wan_sized.name = "default";
  EXPECT_EQ(to_json(wan_sized), to_json(default_config())) << "default-dit must be default plus dit_ops";
  try {
    config_by_name("tiny");
    FAIL() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "config must be one of small, default, small-dit, default-dit, got 'tiny'");
  }
}

TEST(E2E_DitPipeline, HighEqualsHighEager_EveryFrameSha256) {
  const PipelineConfig c = small_dit_config();
  WanPipeline p(c, ComputeDevice::kCpu);
  apply_quality(p, Quality::kHigh);
  std::set<std::string> mounted;
  for (const SiteInfo& s : p.sites())
    if (s.mounted) mounted.insert(s.name);
  for (int b = 0; b < c.blocks; ++b) {
    for (const char* k : {"ffn", "modulate_attn", "gate_attn", "modulate_ffn", "gate_ffn"}) {
      EXPECT_TRUE(mounted.count("blocks." + std::to_string(b) + "." + k)) << "blocks." << b << "." << k;
    }
  }
  EXPECT_EQ(mounted.size(), static_cast<size_t>(5 * c.blocks));
  const VideoFrames high = p.run();
  for (const SiteInfo& s : p.sites()) EXPECT_EQ(s.fallback_calls, 0) << s.name << ": " << s.fallback_reason;
  const VideoFrames eager = run_mode(p, Quality::kHighEager);
  ASSERT_EQ(high.count, 81);
  EXPECT_EQ(frame_sha256(high), frame_sha256(eager));
  // Guards: the frames move and the DiT blocks are really another computation than Wan's (same seed and sizes).
  EXPECT_NE(frame_sha256(high)[0], frame_sha256(high)[40]);
  WanPipeline wan(small_config(), ComputeDevice::kCpu);
  EXPECT_EQ(frames_differing(eager, run_mode(wan, Quality::kHighEager)), 81);
}

TEST(E2E_DitPipeline, Fp16_DitSitesFusedEqualEager) {
  // fp16's FFN site differs on the CPU by design (SLEEF tanhf, docs/E2E.md); the DiT op sites have no transcendental,
  // so fused == eager holds for them on the CPU too: mount only them.
  PipelineConfig c = small_dit_config();
  c.dtype = "fp16";
  WanPipeline p(c, ComputeDevice::kCpu);
  apply_quality(p, Quality::kHigh);
  for (int b = 0; b < c.blocks; ++b) p.unmount("blocks." + std::to_string(b) + ".ffn");
  int mounted = 0;
  for (const SiteInfo& s : dit_sites(p)) mounted += s.mounted;
  ASSERT_EQ(mounted, 4 * c.blocks);
  const VideoFrames fused = p.run();
  for (const SiteInfo& s : p.sites()) EXPECT_EQ(s.fallback_calls, 0) << s.name << ": " << s.fallback_reason;
  EXPECT_EQ(frame_sha256(fused), frame_sha256(run_mode(p, Quality::kHighEager)));
}

TEST(E2E_DitPipeline, MountRulesRejectWithAReason_UnmountRestoresEager) {
  WanPipeline wan(small_config(), ComputeDevice::kCpu);
  apply_quality(wan, Quality::kHigh);
  EXPECT_TRUE(dit_sites(wan).empty()) << "a Wan config lists no DiT op sites";
  EXPECT_EQ(wan.mount("blocks.0.gate_attn").message,
            "mount blocks.0.gate_attn: the config's blocks have no DiT ops (dit_ops off: fp32 modulation, no gates)");
  EXPECT_EQ(wan.mount("blocks.0.gate_attn", kernel_dit_op(FamilyOp::kGatedResidual)).message,
            "mount blocks.0.gate_attn: the config's blocks have no DiT ops (dit_ops off: fp32 modulation, no gates)");

  const PipelineConfig c = small_dit_config();
  WanPipeline p(c, ComputeDevice::kCpu);
  const VideoFrames lossless = run_mode(p, Quality::kLossless);
  apply_quality(p, Quality::kHighEager);
  EXPECT_EQ(p.mount("blocks.0.ffn", kernel_dit_op(FamilyOp::kGatedResidual)).message,
            "mount blocks.0.ffn: site does not compute gated_residual");
  EXPECT_EQ(p.mount("time_embedding", kernel_dit_op(FamilyOp::kModulate)).message,
            "mount time_embedding: site does not compute modulate");
  EXPECT_EQ(p.mount("blocks.0.gate_attn", kernel_dit_op(FamilyOp::kModulate)).message,
            "mount blocks.0.gate_attn: site computes gated_residual, the op is modulate");
  EXPECT_EQ(p.mount("blocks.1.modulate_ffn", kernel_dit_op(FamilyOp::kGatedResidual)).message,
            "mount blocks.1.modulate_ffn: site computes modulate, the op is gated_residual");
  EXPECT_EQ(p.mount("blocks.0.gate_attn", kernel_bias_gelu_tanh()).message,
            "mount blocks.0.gate_attn: site is not a fused-GELU target");
  EXPECT_EQ(p.mount("blocks.2.gate_attn").message, "mount blocks.2.gate_attn: no such site");
  EXPECT_EQ(p.mount("blocks.0.gate_attn", FusedDitOp{FamilyOp::kGatedResidual, nullptr}).message,
            "mount blocks.0.gate_attn: no op given");
  for (const SiteInfo& s : p.sites()) EXPECT_FALSE(s.mounted) << s.name << ": a rejected mount left it mounted";
  const VideoFrames eager = p.run();

  // Mount every DiT op site, then unmount: the eager path again, bit for bit; switching to bf16 fc_in unmounts them.
  for (const SiteInfo& s : dit_sites(p)) ASSERT_TRUE(p.mount(s.name).ok) << s.name;
  const VideoFrames fused = p.run();
  p.unmount_all();
  EXPECT_EQ(frame_sha256(p.run()), frame_sha256(eager));
  EXPECT_EQ(frame_sha256(fused), frame_sha256(eager));
  for (const SiteInfo& s : dit_sites(p)) ASSERT_TRUE(p.mount(s.name).ok) << s.name;
  p.set_fc_in_nvfp4(false);
  for (const SiteInfo& s : p.sites()) EXPECT_FALSE(s.mounted) << s.name;
  EXPECT_EQ(frame_sha256(p.run()), frame_sha256(lossless));
}

TEST(E2E_DitPipeline, CallTheOpCannotTakeFallsBackToEagerWithTheReason) {
  const PipelineConfig c = small_dit_config();
  WanPipeline p(c, ComputeDevice::kCpu);
  const VideoFrames eager = run_mode(p, Quality::kHighEager);
  apply_quality(p, Quality::kHigh);
  p.unmount("blocks.1.gate_ffn");
  FusedDitOp cuda_only{FamilyOp::kGatedResidual,
                       [](const TensorView&, const TensorView&, const TensorView&, const TensorView&, int64_t) {
                         return LaunchStatus{false, "gated_residual: device must be cuda, got cpu"};
                       }};
  ASSERT_TRUE(p.mount("blocks.1.gate_ffn", cuda_only).ok);
  EXPECT_EQ(frame_sha256(p.run()), frame_sha256(eager)) << "the rejected calls must run eagerly";
  for (const SiteInfo& s : p.sites()) {
    if (s.name == "blocks.1.gate_ffn") {
      EXPECT_EQ(s.fallback_calls, c.steps);
      EXPECT_EQ(s.fallback_reason, "gated_residual: device must be cuda, got cpu");
    } else {
      EXPECT_EQ(s.fallback_calls, 0) << s.name;
    }
  }
}

// Negative controls: the fma-contract kernel (one binary32 fmaf, not eager's roundings) mounted at one site in place of
// the eager one makes high differ from high-eager, and `check` fail on that run; the eager kernel passes it.
// The parameter is the site; its op follows from its name.
class E2E_DitNegativeControl : public ::testing::TestWithParam<std::string> {};

TEST_P(E2E_DitNegativeControl, FmaKernelAtOneSite_HighDiffersAndCheckFails) {
  const std::string site = GetParam();
  const FamilyOp op = site.find("modulate") != std::string::npos ? FamilyOp::kModulate : FamilyOp::kGatedResidual;
  const PipelineConfig c = small_dit_config();
  WanPipeline p(c, ComputeDevice::kCpu);
  const VideoFrames lossless = run_mode(p, Quality::kLossless);
  const VideoFrames eager = run_mode(p, Quality::kHighEager);
  const VideoFrames high = run_mode(p, Quality::kHigh);
  p.unmount(site);
  ASSERT_TRUE(p.mount(site, kernel_dit_op(op, Contract::kFma)).ok);
  const VideoFrames wrong = p.run();
  for (const SiteInfo& s : p.sites()) ASSERT_EQ(s.fallback_calls, 0) << s.name << ": " << s.fallback_reason;
  const VideoFrames after = run_mode(p, Quality::kLossless);
  const int differ = frames_differing(wrong, eager);
  std::printf("fma-contract %s at %s: %d of 81 frames differ from high-eager\n", dit_op_name(op), site.c_str(), differ);
  EXPECT_GT(differ, 0) << "an fma kernel at " << site << " did not reach the frames";

  const CheckReport bad = check_run(manifest(c, lossless, wrong, eager, after), nullptr);
  EXPECT_EQ(bad.outcome, CheckOutcome::kMismatch);
  bool gate_failed = false;
  for (const std::string& l : bad.lines) {
    gate_failed |= l.rfind("FAIL high == high-eager (fused bias+GELU, modulate, gated residual are lossless)", 0) == 0;
  }
  EXPECT_TRUE(gate_failed) << testing::PrintToString(bad.lines);
  const CheckReport good = check_run(manifest(c, lossless, high, eager, after), nullptr);  // control
  EXPECT_EQ(good.outcome, CheckOutcome::kPass) << testing::PrintToString(good.lines);
}

INSTANTIATE_TEST_SUITE_P(Sites, E2E_DitNegativeControl,
                         ::testing::Values(std::string("blocks.0.modulate_attn"), std::string("blocks.1.gate_ffn")),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n)
                             if (ch == '.') ch = '_';
                           return n;
                         });

TEST(E2E_DitPipeline, KernelDitOpPassesGroupRowsAndSaysWhyItRefuses) {
  // 4 rows of width 8 in 2 groups of 2: gate row g serves rows 2g and 2g + 1. bf16 1.0 = 0x3F80, 2.0 = 0x4000.
  alignas(16) uint16_t x[32], gate[16], y[32], out[32];
  for (int i = 0; i < 32; ++i) x[i] = 0x3F80, y[i] = 0x3F80;
  for (int i = 0; i < 16; ++i) gate[i] = i < 8 ? 0x3F80 : 0x4000;  // group 0: 1, group 1: 2
  const auto view = [](uint16_t* p, int64_t rows) { return contiguous_view(p, ScalarType::kBf16, {rows, 8}); };
  const FusedDitOp op = kernel_dit_op(FamilyOp::kGatedResidual);
  ASSERT_TRUE(op.call(view(out, 4), view(x, 4), view(gate, 2), view(y, 4), 2).ok);
  EXPECT_EQ(out[0], 0x4000) << "1 + 1 * 1";
  EXPECT_EQ(out[16], 0x4040) << "1 + 2 * 1 = 3 (row 2 reads gate row 1)";
  EXPECT_EQ(op.call(view(out, 4), view(x, 4), view(gate, 2), view(y, 4), 3).message,
            "gated_residual: rows must be a multiple of group_rows (3), got 4");
  EXPECT_EQ(op.call(view(out, 4), view(x, 4), contiguous_view(gate, ScalarType::kBf16, {8}), view(y, 4), 2).message,
            "gated_residual: gate must be rank 2, got rank 1");
  EXPECT_EQ(kernel_dit_op(FamilyOp::kModulate)
                .call(view(out, 4), view(x, 4), contiguous_view(gate, ScalarType::kFp16, {2, 8}), view(y, 4), 2)
                .message,
            "modulate: scale must have out's dtype");
}

/// `fuseproof-e2e sites` output, or "" when it fails.
std::string e2e_output(const std::string& args) {
  std::string out;
  FILE* f = ::popen((std::string(FUSEPROOF_E2E_BIN) + " " + args + " 2>&1").c_str(), "r");
  if (f == nullptr) return out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, f)) out += buf;
  return ::pclose(f) == 0 ? out : "";
}

TEST(E2E_DitPipeline, SitesCommandListsTheDitSitesMounted) {
  const std::string high = e2e_output("sites --config small-dit --mode high");
  ASSERT_FALSE(high.empty());
  for (int b = 0; b < 2; ++b) {
    const std::string n = "blocks." + std::to_string(b) + ".";
    for (const char* line : {"modulate_attn: mounted (fused modulate)\n", "gate_attn: mounted (fused gated_residual)\n",
                             "modulate_ffn: mounted (fused modulate)\n", "gate_ffn: mounted (fused gated_residual)\n",
                             "ffn: mounted (fc_in skip_bias_add)\n"}) {
      EXPECT_NE(high.find(n + line), std::string::npos) << n + line << " not in:\n" << high;
    }
  }
  EXPECT_NE(e2e_output("sites --config small-dit --mode high-eager").find(
                "blocks.0.gate_attn: eager (eligible; high-eager leaves it eager)\n"),
            std::string::npos);
  // The Wan config's listing is unchanged: its FFN sites and the time embedding, no DiT op site.
  EXPECT_EQ(e2e_output("sites --config small --mode high"),
            "blocks.0.ffn: mounted (fc_in skip_bias_add)\nblocks.1.ffn: mounted (fc_in skip_bias_add)\n"
            "time_embedding: eager (mount time_embedding: site is not a fused-GELU target)\n");
}

}  // namespace
}  // namespace fuseproof::e2e
