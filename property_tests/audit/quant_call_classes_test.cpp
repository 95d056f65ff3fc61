// quant_call_classes_test.cpp: tests audit/quant_call_classes.h on the built-in emulated plugins of every
// quantization op through the host quantization runner: shapes, batch, repeat, streams and history PASS (graph is
// SKIPPED on host memory); negative controls, a runner wrapped to misbehave as a kernel can, each FAIL in the class
// that should catch them (a scale left from the previous call, a batch's last row written wrong, one of the
// concurrent calls corrupted, graph replays that return the captured inputs' results, a large call's chunk wrong);
// a runner without the entry points is never a pass.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "audit/check_result.h"
#include "audit/quant_call_classes.h"
#include "audit/quant_classes.h"
#include "audit/quant_runner.h"
#include "reference/math_model.h"

namespace fuseproof::audit {
namespace {

std::string plugin_path(const std::string& op) {
  return std::string(FUSEPROOF_PLUGIN_DIR) + "/lib" + op + "_emulated.so";
}

/// The emulation's activation stage: the host's libm with GELU(tanh)'s inner fma (quant_emulation_test.cpp).
const ref::MathConfig& host_math() {
  static const ref::MathConfig cfg{ref::MathModel::kLibm, ref::Contraction::kFma, ref::NanPolicy::kCudaCvtRn, nullptr};
  return cfg;
}

QuantModel model_of(const ref::QuantOpSpec& op, ref::Dtype d) {
  QuantModel m;
  m.op = &op;
  m.contract = op.contracts.front().contract;
  m.dtype = d;
  m.plan = std::make_shared<const ref::QuantPlan>(op, m.contract, d, ref::QuantModels{}, host_math());
  return m;
}

enum class Misbehave {
  kNone,
  kStaleScale,     ///< from the second call on, the first scale byte is not the call's (kept from before)
  kBatchLastRow,   ///< a call of several rows gets its last code byte wrong
  kStreamsOne,     ///< the second of the concurrent calls gets one code byte wrong
  kGraphStale,     ///< every replay returns the results of the captured (first) set's inputs
  kShapesChunk,    ///< a large call's first chunk has one code byte wrong
  kNoEntryPoints,  ///< large_call, call_concurrent and call_graph not expressible
};

/// The host runner of a plugin, wrapped: calls pass through, then misbehave as asked. call_graph is made on the host
/// (warm-up, then each set called as a replay), so that the graph class can be judged without a device.
class Wrapped final : public QuantRunner {
 public:
  Wrapped(const Plugin& p, Misbehave m) : inner_(make_host_quant_runner(p)), m_(m) {}

  std::vector<QuantOutcome> call_batch(const std::vector<QuantCallSpec>& specs) override {
    std::vector<QuantOutcome> out = inner_->call_batch(specs);
    for (size_t i = 0; i < out.size(); ++i) {
      QuantOutcome& o = out[i];
      if (o.rc != 0 || o.codes.empty() || o.scales.empty()) continue;
      if (m_ == Misbehave::kStaleScale && calls_++ > 0) o.scales[0] ^= 0x01;
      if (m_ == Misbehave::kBatchLastRow && specs[i].rows > 1) o.codes.back() ^= 0x01;
    }
    return out;
  }
  std::string hardware() const override { return "test host"; }
  int preferred_batch() const override { return inner_->preferred_batch(); }
  uint64_t memory_available() const override { return inner_->memory_available(); }

  std::optional<QuantLargeOutcome> large_call(const QuantLargeSpec& s, const QuantChunkCheck& check) override {
    if (m_ == Misbehave::kNoEntryPoints) return std::nullopt;
    const QuantChunkCheck wrapped = [&](int64_t r0, int64_t rows, const uint8_t* c, const uint8_t* sc) {
      if (m_ != Misbehave::kShapesChunk || r0 != 0) return check(r0, rows, c, sc);
      std::vector<uint8_t> codes(c, c + size_t(rows) * (s.view.codes_bytes / size_t(s.view.rows)));
      codes[0] ^= 0x01;
      return check(r0, rows, codes.data(), sc);
    };
    return inner_->large_call(s, wrapped);
  }
  std::optional<QuantConcurrentOutcome> call_concurrent(const std::vector<QuantCallSpec>& specs, int lanes) override {
    if (m_ == Misbehave::kNoEntryPoints) return std::nullopt;
    std::optional<QuantConcurrentOutcome> co = inner_->call_concurrent(specs, lanes);
    if (m_ == Misbehave::kStreamsOne && co && co->calls.size() > 1 && !co->calls[1].codes.empty())
      co->calls[1].codes[0] ^= 0x01;
    return co;
  }
  std::optional<QuantGraphOutcome> call_graph(const std::vector<std::vector<QuantCallSpec>>& sets) override {
    if (m_ == Misbehave::kNoEntryPoints) return std::nullopt;
    QuantGraphOutcome g;
    g.warmup = inner_->call_batch(sets[0]);
    g.graph = "replays made eagerly on the host (test)";
    for (const auto& set : sets) g.replays.push_back(inner_->call_batch(m_ == Misbehave::kGraphStale ? sets[0] : set));
    return g;
  }

 private:
  std::unique_ptr<QuantRunner> inner_;
  Misbehave m_;
  int calls_ = 0;
};

struct ClassRun {
  std::vector<CheckResult> results;
};

/// Runs `classes` on op's emulated plugin (bf16; history interleaves fp16), the runner wrapped with `m`. With
/// `as_cuda` the classes take the subject for a CUDA one (the graph class runs; sizes are the CUDA ones).
ClassRun run_classes(const std::string& op_name, Misbehave m, const std::vector<CheckClass>& classes, bool as_cuda = false) {
  const ref::QuantOpSpec& op = *ref::find_quant_op(op_name);
  const Plugin p = Plugin::load(plugin_path(op_name), op_name);
  Wrapped runner(p, m);
  const QuantModel bf = model_of(op, ref::Dtype::kBf16), fp = model_of(op, ref::Dtype::kFp16);
  PluginInfo info = p.info();
  if (as_cuda) info.memory = FUSEPROOF_MEMORY_CUDA;
  AuditOptions options;
  options.records = 8;
  options.default_shapes = false;
  options.extra_shapes = {{1500, 3 * op.block_size, "test"}, {700, 5, "test, width off the block"}};
  QuantContext ctx{info, runner, bf, options, FUSEPROOF_DTYPE_BF16};
  ctx.other_model = &fp;
  ctx.other_abi_dtype = FUSEPROOF_DTYPE_FP16;
  ClassRun out;
  for (CheckClass c : classes) {
    CheckResult r;
    run_quant_class(c, ctx, r);
    settle_check(r);
    out.results.push_back(std::move(r));
  }
  return out;
}

std::string summary(const CheckResult& r) {
  std::string s = std::string(check_class_name(r.cls)) + " " + check_status_name(r.status) + " cases " +
                  std::to_string(r.cases) + " mismatches " + std::to_string(r.mismatches) + "; " + r.scope +
                  (r.note.empty() ? "" : "; note: " + r.note);
  for (const auto& l : r.records) s += "\n  " + l;
  return s;
}

const CheckClass kCallClasses[] = {CheckClass::kShapes, CheckClass::kBatch,   CheckClass::kRepeat,
                                   CheckClass::kStreams, CheckClass::kGraph, CheckClass::kHistory};

TEST(Audit_QuantCallClasses, ListedAfterTheQuantizationClasses) {
  const auto& c = quant_check_classes();
  for (CheckClass k : kCallClasses) EXPECT_NE(std::find(c.begin(), c.end(), k), c.end()) << check_class_name(k);
  EXPECT_EQ(c.back(), CheckClass::kHistory);  // it mixes dtypes: the engine runs it last anyway
}

// Every quantization op's emulated plugin passes every call class on the host, over nonzero cases; graph is skipped
// (host memory has no CUDA graph); streams may be INCOMPLETE only where the host never ran two calls at once.
TEST(Audit_QuantCallClasses, EmulatedPluginsPass) {
  for (const char* op : {"nvfp4_quant", "fp8_group_quant", "silu_and_mul_nvfp4_quant", "silu_and_mul_fp8_group_quant",
                         "bias_gelu_tanh_nvfp4_quant"}) {
    SCOPED_TRACE(op);
    const ClassRun got = run_classes(op, Misbehave::kNone, {std::begin(kCallClasses), std::end(kCallClasses)});
    for (const CheckResult& r : got.results) {
      EXPECT_EQ(r.mismatches, 0u) << summary(r);
      EXPECT_TRUE(r.fault.empty()) << summary(r);
      if (r.cls == CheckClass::kGraph) {
        EXPECT_EQ(r.status, CheckStatus::kSkipped) << summary(r);
        continue;
      }
      EXPECT_GT(r.cases, 0u) << summary(r);
      EXPECT_GE(r.distinct_expected, 2u) << summary(r);
      if (r.cls == CheckClass::kStreams && r.status == CheckStatus::kIncomplete) {
        EXPECT_NE(r.note.find("never overlapped"), std::string::npos) << summary(r);
        continue;
      }
      EXPECT_EQ(r.status, CheckStatus::kPass) << summary(r);
    }
  }
}

// The graph class on a subject taken for a CUDA one (replays made eagerly on the host): passes; replays that return
// the captured inputs' results fail it.
TEST(Audit_QuantCallClasses, GraphPassesAndStaleReplaysFail) {
  const CheckResult good = run_classes("nvfp4_quant", Misbehave::kNone, {CheckClass::kGraph}, true).results[0];
  EXPECT_EQ(good.status, CheckStatus::kPass) << summary(good);
  const CheckResult bad = run_classes("nvfp4_quant", Misbehave::kGraphStale, {CheckClass::kGraph}, true).results[0];
  EXPECT_EQ(bad.status, CheckStatus::kFail) << summary(bad);
  EXPECT_GT(bad.mismatches, 0u);
}

// Negative controls: each misbehaviour fails the class that should catch it.
TEST(Audit_QuantCallClasses, NegativeControlsFail) {
  struct Case {
    Misbehave m;
    CheckClass c;
    const char* call;     ///< a piece of the record naming the call
    const char* element;  ///< a piece of an element's record
  };
  const Case cases[] = {
      {Misbehave::kStaleScale, CheckClass::kRepeat, "made twice with the same inputs", "=> scale"},
      {Misbehave::kStaleScale, CheckClass::kHistory, "history call 1 (fp16", "=> scale"},
      {Misbehave::kBatchLastRow, CheckClass::kBatch, "differ from the probe alone", "=> code"},
      {Misbehave::kStreamsOne, CheckClass::kStreams, "streams call 1 (lane 1) [", "=> code"},
      {Misbehave::kShapesChunk, CheckClass::kShapes, "shapes 1500x48 (test) rows 0..1499", "=> code"}};
  for (const Case& k : cases) {
    SCOPED_TRACE(check_class_name(k.c));
    const CheckResult r = run_classes("nvfp4_quant", k.m, {k.c}).results[0];
    EXPECT_EQ(r.status, CheckStatus::kFail) << summary(r);
    EXPECT_GT(r.mismatches, 0u);
    bool call = false, element = false;
    for (const auto& line : r.records) {
      call |= line.find(k.call) != std::string::npos;
      element |= line.find(k.element) != std::string::npos;
    }
    EXPECT_TRUE(call && element) << summary(r);
  }
}

// A runner that cannot express large calls, concurrent calls or graphs: shapes INCOMPLETE (zero shapes run, each
// named), streams and graph SKIPPED with the reason; never a pass.
TEST(Audit_QuantCallClasses, WithoutTheEntryPointsNeverAPass) {
  const ClassRun got = run_classes("nvfp4_quant", Misbehave::kNoEntryPoints, {CheckClass::kShapes, CheckClass::kStreams});
  EXPECT_EQ(got.results[0].status, CheckStatus::kIncomplete) << summary(got.results[0]);
  EXPECT_EQ(got.results[0].cases, 0u);
  EXPECT_NE(got.results[0].note.find("cannot make a call"), std::string::npos) << got.results[0].note;
  EXPECT_EQ(got.results[1].status, CheckStatus::kSkipped) << summary(got.results[1]);
  const CheckResult graph = run_classes("nvfp4_quant", Misbehave::kNoEntryPoints, {CheckClass::kGraph}, true).results[0];
  EXPECT_EQ(graph.status, CheckStatus::kSkipped) << summary(graph);
  EXPECT_EQ(graph.note, "this runner has no CUDA graphs");
}

}  // namespace
}  // namespace fuseproof::audit
