// check_stages_test.cpp: the stages class (audit/check_stages.cpp) on host subjects of gated_residual and modulate
// (dit_plugins.c): a correct subject passes, a subject wrong at one pair that only one stage reaches fails
// with its record, 2-input ops and the fma contract are skipped with a reason, stop_after is honoured, the scope names
// every stage, the stage digests are compared with the golden library's (equal, different, absent).
#include "audit/check_stages.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "audit/kernel_runner.h"
#include "audit/plugin_loader.h"
#include "common/golden_library.h"
#include "common/sha256.h"
#include "reference/half_codec.h"

namespace fuseproof::audit {
namespace {

namespace fs = std::filesystem;
using ref::Dtype;
using ref::Stage;

std::string plugin_path(const std::string& name) {
  return std::string(FUSEPROOF_STAGES_PLUGIN_DIR) + "/lib" + name + ".so";
}

OpModel model_of(const std::string& op, ref::Contract c, Dtype d) {
  OpModel m;
  m.op = ref::find_op(op);
  m.contract = c;
  m.dtype = d;
  m.math = ref::MathModel::kLibm;  // no activation: the plan is the same under every model
  ref::MathConfig cfg;
  cfg.math = m.math;
  m.plan = std::make_shared<const ref::OpPlan>(*m.op, c, d, cfg);
  m.digest_key = golden_digest_key(op, c);
  return m;
}

uint16_t one(Dtype d) { return d == Dtype::kBf16 ? 0x3F80 : 0x3C00; }

/// An operand whose values are what `value(k)` gives over all 65,536 patterns k of the inputs `witness(k)`, each
/// value witnessed by its first k.
template <class Value, class Witness>
Stage::Operand reached(const std::string& text, uint32_t depends, const std::string& how, const Value& value,
                       const Witness& witness) {
  Stage::Operand o;
  o.text = text;
  o.depends = depends;
  o.how = how;
  std::map<uint16_t, std::array<uint16_t, ref::kMaxOpInputs>> first;
  for (uint32_t k = 0; k < 65536; ++k) first.emplace(value(uint16_t(k)), witness(uint16_t(k)));
  for (const auto& [v, w] : first) {
    o.values.push_back(v);
    o.witness.push_back(w);
  }
  return o;
}

/// Every pattern of declared input i.
Stage::Operand every(const std::string& name, int i) {
  return reached(name, 1u << i, "", [](uint16_t k) { return k; }, [i](uint16_t k) {
    std::array<uint16_t, ref::kMaxOpInputs> w{};
    w[size_t(i)] = k;
    return w;
  });
}

/// The stages of the two ops built by hand, apart from the reference's analysis: each stage's operands with the
/// witnesses and the neutral inputs docs/OPS.md (Stages) describes.
std::vector<Stage> hand_stages(const ref::OpPlan& plan) {
  const Dtype d = plan.dtype();
  const auto rnd = [&](float v) { return plan.round(v); };
  const auto w = [&](uint16_t h) { return ref::half_to_f32(d, h); };
  std::vector<Stage> s;
  if (plan.op().name == "gated_residual") {
    Stage p;
    p.text = "round_T(gate * y)";
    p.combine = ref::Combine::kMul;
    p.a = every("gate", 1);
    p.b = every("y", 2);
    p.neutral = {0x8000, 0, 0, 0};
    p.neutral_text = "x = 0x8000 (-0)";
    s.push_back(p);
    Stage o;
    o.text = "round_T(x + round_T(gate * y))";
    o.a = every("x", 0);
    o.b = reached("round_T(gate * y)", 6u, "every value through gate = it, y = 1",
                  [&](uint16_t g) { return rnd(w(g) * 1.0f); },
                  [&](uint16_t g) { return std::array<uint16_t, ref::kMaxOpInputs>{0, g, one(d), 0}; });
    s.push_back(o);
  } else {
    Stage sc;
    sc.text = "round_T(1 + scale)";
    sc.a.text = "1";
    sc.a.values = {one(d)};
    sc.a.witness = {{0, 0, 0, 0}};
    sc.b = every("scale", 1);
    sc.neutral = {one(d), 0, 0x8000, 0};
    sc.neutral_text = "x = 1, shift = 0x8000 (-0)";
    s.push_back(sc);
    Stage m;
    m.text = "round_T(x * round_T(1 + scale))";
    m.combine = ref::Combine::kMul;
    m.a = every("x", 0);
    m.b = reached("round_T(1 + scale)", 2u, "each through its first scale", [&](uint16_t k) { return rnd(1.0f + w(k)); },
                  [](uint16_t k) { return std::array<uint16_t, ref::kMaxOpInputs>{0, k, 0, 0}; });
    m.neutral = {0, 0, 0x8000, 0};
    m.neutral_text = "shift = 0x8000 (-0)";
    s.push_back(m);
    Stage out;
    out.text = "round_T(round_T(x * round_T(1 + scale)) + shift)";
    out.a = reached("round_T(x * round_T(1 + scale))", 3u, "every value through x = it, scale = 0",
                    [&](uint16_t k) { return rnd(w(k) * 1.0f); },
                    [](uint16_t k) { return std::array<uint16_t, ref::kMaxOpInputs>{k, 0, 0, 0}; });
    out.b = every("shift", 2);
    s.push_back(out);
  }
  return s;
}

/// A runner that must not be called (the skipped classes call nothing).
class NoRunner : public KernelRunner {
 public:
  CallOutcome call(const CallSpec&) override {
    ADD_FAILURE() << "the subject was called";
    return {};
  }
  std::optional<CallOutcome> call_after_producer(const CallSpec&, const CallSpec&, int) override { return {}; }
  LargeOutcome large_call(const LargeSpec&, const ChunkCheck&) override { return {}; }
  uint64_t memory_available() const override { return 0; }
  std::string hardware() const override { return "none"; }
  std::string buffers_per_call() const override { return "none"; }
};

struct StagesRun {
  CheckResult r;
  double seconds = 0;
};

AuditOptions options(uint64_t stop_after = 1000) {
  AuditOptions o;
  o.stop_after = stop_after;
  return o;
}

/// The class over the hand-built stages (or the plan's own, when `plan_stages`) of `plugin` at dtype d.
StagesRun run_stages(const std::string& plugin, const std::string& op, Dtype d, uint32_t b_values, const AuditOptions& o,
               bool plan_stages = false) {
  const Plugin p = Plugin::load(plugin_path(plugin), op);
  auto runner = make_host_runner(p);
  const OpModel model = model_of(op, ref::Contract::kEager, d);
  const CheckContext ctx{p.info(), *runner, model, o,
                         d == Dtype::kBf16 ? int32_t(FUSEPROOF_DTYPE_BF16) : int32_t(FUSEPROOF_DTYPE_FP16), b_values,
                         16384};
  StagesRun run;
  run.r.cls = CheckClass::kStages;
  run.r.dtype = d;
  const auto t0 = std::chrono::steady_clock::now();
  if (plan_stages) check_stages(ctx, run.r);
  else check_stage_list(ctx, hand_stages(*model.plan), run.r);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run;
}

/// The pairs the class compares over `stages` with subsets of `count` b values (a stage of up to 2^20 pairs in full;
/// a subset is never smaller than the extreme patterns among the values).
uint64_t cases_of(const std::vector<Stage>& stages, uint32_t count, Dtype d) {
  uint64_t n = 0;
  for (const Stage& s : stages)
    n += s.pairs() <= (uint64_t(1) << 20) ? s.pairs()
                                          : stage_subset(d, s.b.values, count, 0).size() * s.a.values.size();
  return n;
}

uint64_t cases_of(const std::string& op, Dtype d, uint32_t count) {
  return cases_of(hand_stages(*model_of(op, ref::Contract::kEager, d).plan), count, d);
}

std::string all_records(const CheckResult& r) {
  std::string s;
  for (const auto& l : r.records) s += l + "\n";
  return s;
}

TEST(Audit_Stages, SubsetKeepsExtremesAndEveryExponent) {
  std::vector<uint16_t> all(65536);
  for (uint32_t i = 0; i < 65536; ++i) all[i] = uint16_t(i);
  const auto s = stage_subset(Dtype::kBf16, all, 1024, 7);
  EXPECT_EQ(s.size(), 1024u);
  EXPECT_TRUE(std::is_sorted(s.begin(), s.end()));
  std::set<int> groups;
  for (size_t i : s) groups.insert(all[i] >> 7);
  EXPECT_EQ(groups.size(), 512u);  // every sign and biased exponent, Inf/NaN and subnormals included
  for (uint16_t e : {0x0000, 0x8000, 0x3F80, 0x4000, 0x7F80, 0xFF80})
    EXPECT_TRUE(std::binary_search(s.begin(), s.end(), size_t(e))) << e;
  EXPECT_EQ(stage_subset(Dtype::kBf16, all, 1024, 7), s);  // seeded
  EXPECT_NE(stage_subset(Dtype::kBf16, all, 1024, 8), s);
  EXPECT_EQ(stage_subset(Dtype::kFp16, {1, 5, 9}, 1024, 7).size(), 3u);  // all of them when fewer
}

class Audit_Stages_Dtype : public ::testing::TestWithParam<Dtype> {};

TEST_P(Audit_Stages_Dtype, CorrectGatedResidualPasses) {
  const StagesRun run = run_stages("stages_gated_residual", "gated_residual", GetParam(), 64, options());
  const CheckResult& r = run.r;
  EXPECT_EQ(r.mismatches, 0u) << all_records(r);
  EXPECT_TRUE(r.fault.empty()) << r.fault;
  EXPECT_EQ(r.status, CheckStatus::kPass);
  EXPECT_EQ(r.cases, cases_of("gated_residual", GetParam(), 64));
  EXPECT_EQ(r.cases, 64u * 65536 + 64u * 65536);
  EXPECT_GT(r.distinct_expected, 60000u);
  EXPECT_NE(r.scope.find("stage 0 round_T(gate * y): all 65,536 gate for 64 of the 65,536 y"), std::string::npos)
      << r.scope;
  EXPECT_NE(r.scope.find("stage 1 round_T(x + round_T(gate * y)): all 65,536 x for 64 of the"), std::string::npos)
      << r.scope;
  EXPECT_NE(r.scope.find("observed at the output through x = 0x8000 (-0)"), std::string::npos) << r.scope;
  EXPECT_NE(r.scope.find("not proven: joint triples"), std::string::npos) << r.scope;
  EXPECT_NE(r.scope.find("group_rows > 1"), std::string::npos) << r.scope;
  std::printf("gated_residual %s: %.2f s, %s\n", ref::dtype_name(GetParam()), run.seconds, r.note.c_str());
}

TEST_P(Audit_Stages_Dtype, CorrectModulatePasses) {
  const StagesRun run = run_stages("stages_modulate", "modulate", GetParam(), 64, options());
  const CheckResult& r = run.r;
  EXPECT_EQ(r.mismatches, 0u) << all_records(r);
  EXPECT_EQ(r.status, CheckStatus::kPass);
  // Stage 0 (65,536 pairs) runs in full on any subset, with its digest; stages 1 and 2 over 64 b values.
  EXPECT_EQ(r.cases, cases_of("modulate", GetParam(), 64));
  EXPECT_GT(r.cases, 65536u + 64u * 65536 + 64u * 60000);
  EXPECT_NE(r.scope.find("stage 0 round_T(1 + scale): 1 = "), std::string::npos) << r.scope;
  EXPECT_NE(r.scope.find("for all 65,536 scale = 65,536 pairs"), std::string::npos) << r.scope;
  EXPECT_NE(r.scope.find("stage 1 round_T(x * round_T(1 + scale)): all 65,536 x for 64 of the "), std::string::npos)
      << r.scope;
  EXPECT_NE(r.scope.find("round_T(1 + scale) no input reaches (stage 1)"), std::string::npos) << r.scope;
  EXPECT_NE(r.scope.find("stage 2 "), std::string::npos) << r.scope;
  EXPECT_NE(r.note.find("stage 0 ("), std::string::npos) << r.note;
  EXPECT_NE(r.note.find("SHA-256 of its 65,536 outputs"), std::string::npos) << r.note;
  EXPECT_NE(r.note.find("(the reference's the same)"), std::string::npos) << r.note;
  std::printf("modulate %s: %.2f s, %s\n", ref::dtype_name(GetParam()), run.seconds, r.note.c_str());
}

// Negative control: wrong at (x = 0x4049, s = 0x4000) only, for whatever scale gives s = 2: stage 1 enumerates that
// pair once (through s's witness), stages 0 and 2 never reach it.
TEST_P(Audit_Stages_Dtype, NegativeControl_WrongAtOneStage1PairFails) {
  const StagesRun run = run_stages("stages_modulate_wrong_stage1_pair", "modulate", GetParam(), 64, options());
  const CheckResult& r = run.r;
  EXPECT_EQ(r.mismatches, 1u) << all_records(r);
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_NE(r.records[0].find("[stage=1,a=0x4049,b=0x4000]"), std::string::npos) << r.records[0];
  EXPECT_NE(r.records[0].find(" x=0x4049 scale="), std::string::npos) << r.records[0];
  EXPECT_NE(r.records[0].find(" shift=0x8000 => "), std::string::npos) << r.records[0];
  EXPECT_NE(r.records[0].find("(1 ulp)"), std::string::npos) << r.records[0];
  EXPECT_FALSE(r.stopped_early);
  EXPECT_EQ(r.cases, cases_of("modulate", GetParam(), 64));  // every stage ran to its end
}

INSTANTIATE_TEST_SUITE_P(Both, Audit_Stages_Dtype, ::testing::Values(Dtype::kBf16, Dtype::kFp16),
                         [](const auto& info) { return std::string(ref::dtype_name(info.param)); });

TEST(Audit_Stages, StopsAfterStopAfterMismatches) {
  const StagesRun run = run_stages("stages_gated_residual_wrong_everywhere", "gated_residual", Dtype::kBf16, 64, options(5));
  const CheckResult& r = run.r;
  EXPECT_EQ(r.mismatches, 5u);
  EXPECT_TRUE(r.stopped_early);
  EXPECT_EQ(r.records.size(), 5u);
  EXPECT_LT(r.cases, 65536u * 64);  // stage 0's first call compared only up to the fifth mismatch
  EXPECT_NE(r.note.find("stage 0 ("), std::string::npos);
  EXPECT_NE(r.note.find("digest not computed (stopped early)"), std::string::npos) << r.note;
  EXPECT_EQ(r.note.find("stage 1 ("), std::string::npos) << r.note;
  EXPECT_NE(r.scope.find("stage 1 not run (stopped)"), std::string::npos) << r.scope;
}

TEST(Audit_Stages, SkipsTwoInputOps) {
  for (const char* op : {"bias_gelu_tanh", "silu_and_mul"}) {
    NoRunner runner;
    PluginInfo info;
    info.vector_bytes = 16;
    const OpModel model = model_of(op, ref::Contract::kEager, Dtype::kBf16);
    const AuditOptions o = options();
    const CheckContext ctx{info, runner, model, o, FUSEPROOF_DTYPE_BF16, 65536, 16384};
    CheckResult r;
    check_stages(ctx, r);
    EXPECT_EQ(r.status, CheckStatus::kSkipped);
    EXPECT_EQ(r.note, "2-input op: the domain class enumerates its one rounding boundary");
    EXPECT_EQ(r.cases, 0u);
  }
}

TEST(Audit_Stages, SkipsTheFmaContractWithItsReason) {
  for (const char* op : {"gated_residual", "modulate"}) {
    NoRunner runner;
    PluginInfo info;
    info.vector_bytes = 16;
    const OpModel model = model_of(op, ref::Contract::kFma, Dtype::kFp16);
    const AuditOptions o = options();
    const CheckContext ctx{info, runner, model, o, FUSEPROOF_DTYPE_FP16, 65536, 16384};
    CheckResult r;
    check_stages(ctx, r);
    EXPECT_EQ(r.status, CheckStatus::kSkipped);
    EXPECT_FALSE(r.note.empty());
    EXPECT_EQ(r.note, model.plan->no_stages_reason());
    EXPECT_EQ(r.cases, 0u);
  }
}

/// A golden folder holding `digests` (key -> dtype -> hex), with its provenance.
std::string golden_with(const nlohmann::json& digests, const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("stages_golden_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir / "sm_90");
  const std::string text = digests.dump(2);
  std::ofstream(dir / "sm_90" / "digests.json") << text;
  nlohmann::json prov = {{"arch", "sm_90"}, {"files", {{"digests.json", Sha256::of(text.data(), text.size())}}}};
  std::ofstream(dir / "sm_90" / "provenance.json") << prov.dump(2);
  return dir.string();
}

// Stage 0 of modulate (the unary step, 65,536 pairs) always runs in full, so its digest is compared on any subset:
// equal, different (a failure naming both), absent (a note, not a failure).
TEST(Audit_Stages, Stage0DigestComparedWithGolden) {
  const Dtype d = Dtype::kBf16;
  const OpModel model = model_of("modulate", ref::Contract::kEager, d);
  std::vector<uint16_t> outs(65536);
  for (uint32_t s = 0; s < 65536; ++s) {
    const uint16_t in[3] = {one(d), uint16_t(s), 0x8000};
    outs[s] = model.plan->eval(in);
  }
  const std::string digest = Sha256::of(outs.data(), outs.size() * 2);
  const std::string wrong(64, 'a');
  AuditOptions o = options();
  o.arch = "sm_90";

  o.golden_dir = golden_with({{"modulate.stage0", {{"bf16", digest}}}}, "equal");
  StagesRun run = run_stages("stages_modulate", "modulate", d, 16, o);
  EXPECT_EQ(run.r.mismatches, 0u) << all_records(run.r);
  EXPECT_EQ(run.r.failed_checks, 0u);
  EXPECT_NE(run.r.note.find("outputs " + digest + " (the reference's the same) equals golden/sm_90/digests.json "
                            "modulate.stage0.bf16"), std::string::npos) << run.r.note;

  o.golden_dir = golden_with({{"modulate.stage0", {{"bf16", wrong}}}}, "differs");
  run = run_stages("stages_modulate", "modulate", d, 16, o);
  // A differing digest fails the class without counting as a mismatching pair (no pair was compared unequal).
  EXPECT_EQ(run.r.mismatches, 0u);
  EXPECT_EQ(run.r.failed_checks, 1u);
  EXPECT_NE(run.r.note.find("DIFFERS from golden/sm_90/digests.json modulate.stage0.bf16"), std::string::npos)
      << run.r.note;
  ASSERT_EQ(run.r.records.size(), 1u);
  EXPECT_NE(run.r.records[0].find("digest " + digest + " expected " + wrong), std::string::npos) << run.r.records[0];

  o.golden_dir = golden_with({{"modulate.stage0", {{"fp16", wrong}}}}, "absent");
  run = run_stages("stages_modulate", "modulate", d, 16, o);
  EXPECT_EQ(run.r.mismatches, 0u);
  EXPECT_EQ(run.r.failed_checks, 0u);
  EXPECT_NE(run.r.note.find("no golden digest for stage 0 yet (capture with scripts/capture_golden.py --add-stages)"),
            std::string::npos) << run.r.note;
}

// A stage run in full over several calls (40 b values, 16 to a host call): its digest is of all its outputs in
// canonical order (b outer, a inner), as hashed here in one pass.
TEST(Audit_Stages, FullStageDigestSpansItsCallsInCanonicalOrder) {
  const Dtype d = Dtype::kFp16;
  const OpModel model = model_of("modulate", ref::Contract::kEager, d);
  Stage st = hand_stages(*model.plan)[1];  // round_T(x * round_T(1 + scale))
  st.b.values.resize(40);
  st.b.witness.resize(40);
  Sha256 h;
  for (size_t ib = 0; ib < 40; ++ib)
    for (size_t ia = 0; ia < st.a.values.size(); ++ia) {
      const uint16_t out = model.plan->eval(st.inputs(ia, ib).data());
      h.update(&out, 2);
    }
  const std::string digest = h.hex();
  const Plugin p = Plugin::load(plugin_path("stages_modulate"), "modulate");
  auto runner = make_host_runner(p);
  const AuditOptions o = options();
  const CheckContext ctx{p.info(), *runner, model, o, FUSEPROOF_DTYPE_FP16, 65536, 16384};
  CheckResult r;
  check_stage_list(ctx, {st}, r);
  EXPECT_EQ(r.mismatches, 0u) << all_records(r);
  EXPECT_EQ(r.cases, 40u * 65536);
  EXPECT_NE(r.note.find("SHA-256 of its 2,621,440 outputs " + digest + " (the reference's the same)"),
            std::string::npos) << r.note << "\nexpected " << digest;
  EXPECT_NE(r.scope.find("for all 40 reachable round_T(1 + scale)"), std::string::npos) << r.scope;
}

// The class on the plan's own stages (reference/op_plan.h's analysis): skipped here until that analysis exists.
TEST(Audit_Stages, PlanStagesPassTheControlAndCatchTheMutant) {
  for (Dtype d : {Dtype::kBf16, Dtype::kFp16}) {
    const OpModel model = model_of("modulate", ref::Contract::kEager, d);
    if (model.plan->stages().empty()) GTEST_SKIP() << "no stages from the plan yet: " << model.plan->no_stages_reason();
    StagesRun run = run_stages("stages_modulate", "modulate", d, 32, options(), true);
    EXPECT_EQ(run.r.mismatches, 0u) << all_records(run.r);
    EXPECT_EQ(run.r.cases, cases_of(model.plan->stages(), 32, d));
    std::printf("%s: %s\n%s\n", ref::dtype_name(d), run.r.scope.c_str(), run.r.note.c_str());
    run = run_stages("stages_modulate_wrong_stage1_pair", "modulate", d, 32, options(), true);
    EXPECT_EQ(run.r.mismatches, 1u) << all_records(run.r);
    run = run_stages("stages_gated_residual", "gated_residual", d, 32, options(), true);
    EXPECT_EQ(run.r.mismatches, 0u) << all_records(run.r);
    EXPECT_EQ(run.r.scope.find("stage 2"), std::string::npos) << run.r.scope;
  }
}

}  // namespace
}  // namespace fuseproof::audit
