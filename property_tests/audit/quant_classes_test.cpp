// quant_classes_test.cpp: tests audit/quant_classes.h with a fake subject that computes every call with
// ref::QuantPlan on host images (codes and scales poisoned as a runner poisons them): every class PASSes over
// nonzero cases and distinct expected outputs; broken subjects (a scale one code off on one input, padding cells not
// written, the swizzle's tiles reordered, -0 codes flipped, a valid call refused, an invalid call accepted) each FAIL
// in the class that should catch them.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <set>
#include <tuple>

#include "audit/check_result.h"
#include "common/exit_status.h"
#include "property_tests/support/golden_paths.h"
#include "audit/guarded_image.h"
#include "audit/plugin_loader.h"
#include "audit/quant_call.h"
#include "audit/quant_classes.h"
#include "audit/quant_differences.h"
#include "common/sha256.h"
#include "audit/quant_report.h"
#include "reference/half_codec.h"
#include "reference/math_model.h"

namespace fuseproof::audit {
namespace {

enum class Bug {
  kNone,
  kScaleOffByOne,      ///< the block whose amax is 3.0 gets its scale one code (or one binary32 unit) up
  kPaddingNotWritten,  ///< swizzled padding cells left as they were (poison)
  kSwizzleTiles,       ///< the swizzle's 128x4 tiles ordered column-major
  kNegZeroFlipped,     ///< a -0.0 input's code has its sign bit flipped
  kRejectsValid,       ///< a valid call of 5 blocks a row and 3 rows refused
  kAcceptsScalars,     ///< a wrong n_scalars accepted (and computed)
  kSwizzleKTileOff,    ///< swizzled scales of k-tile t written to k-tile (t + 1) mod k_tiles
  kAmaxShort,          ///< the block amax over all members but the last
  kAmaxSigned,         ///< amax = max(x), not max(|x|)
  kZeroBlockNoCode,    ///< an all-zero block's codes NaN (where(p == 0, 0, 1 / p) left out): nibble 0xF
};

/// A subject computed with the reference itself, on images poisoned as the runners poison them.
class FakeRunner : public QuantRunner {
 public:
  FakeRunner(const ref::QuantPlan& plan, Bug bug) : plan_(plan), bug_(bug) {}

  std::vector<QuantOutcome> call_batch(const std::vector<QuantCallSpec>& specs) override {
    std::vector<QuantOutcome> out(specs.size());
    for (size_t i = 0; i < specs.size(); ++i) out[i] = run(specs[i]);
    return out;
  }
  std::string hardware() const override { return "test host"; }
  int preferred_batch() const override { return 4; }

 private:
  static std::vector<uint8_t> poisoned(size_t n, uint32_t misalign) {
    std::vector<uint8_t> b(n);
    for (size_t i = 0; i < n; ++i) b[i] = uint8_t((i + misalign) % 2 == 0 ? kPoison & 0xFF : kPoison >> 8);
    return b;
  }

  QuantOutcome run(const QuantCallSpec& s) const {
    const ref::QuantOpSpec& op = plan_.op();
    QuantOutcome o;
    o.codes = poisoned(s.codes_bytes, s.codes_misalign);
    o.scales = poisoned(s.scale_bytes, s.scales_misalign);
    auto reject = [&](const std::string& m) {
      o.rc = 1;
      o.message = op.name + ": " + m;
      return o;
    };
    const int32_t n_inputs = s.n_inputs_override >= 0 ? s.n_inputs_override : int32_t(s.inputs.size());
    const int32_t n_scalars = s.n_scalars_override >= 0 ? s.n_scalars_override : int32_t(s.scalars.size());
    const int32_t layout = s.scale_layout_override >= 0 ? s.scale_layout_override : int32_t(s.layout);
    if (s.dtype != FUSEPROOF_DTYPE_BF16 && s.dtype != FUSEPROOF_DTYPE_FP16) return reject("bad dtype");
    if (s.rows < 1 || s.width < 1 || s.width % op.block_size) return reject("bad shape");
    if (n_inputs != int32_t(op.inputs.size())) return reject("bad n_inputs");
    if (n_scalars != plan_.scalars() && bug_ != Bug::kAcceptsScalars) return reject("bad n_scalars");
    bool known = false;
    for (ref::ScaleLayout l : op.scale_layouts) known |= int32_t(l) == layout;
    if (!known) return reject("bad scale_layout");
    if (s.null_codes || s.null_scales || s.codes_misalign || s.scales_misalign % 4) return reject("bad codes or scales");
    for (int i = 0; i < int(s.inputs.size()); ++i)
      if (s.null_of(i) || s.misalign_of(i)) return reject("bad input pointer");
    if (bug_ == Bug::kRejectsValid && s.rows == 3 && s.width == 5 * op.block_size) return reject("refused");
    const int n = op.block_size;
    const int64_t blocks = s.width / n;
    const bool e2m1 = op.element_format == ref::ElementFormat::kE2m1;
    const bool e4m3_scale = plan_.contract().scale_format == ref::ScaleFormat::kE4m3;
    const bool swz = s.layout == ref::ScaleLayout::kSwizzled128x4;
    if (swz && bug_ != Bug::kPaddingNotWritten) std::fill(o.scales.begin(), o.scales.end(), 0);
    std::vector<uint8_t> codes_all(size_t(s.rows * s.width));
    for (int64_t r = 0; r < s.rows; ++r)
      for (int64_t k = 0; k < blocks; ++k) {
        uint16_t in[4][128], values[128];
        const uint16_t* rows[4];
        for (int i = 0; i < plan_.inputs(); ++i) {
          for (int e = 0; e < n; ++e) in[i][e] = s.at(i, r, k * n + e);
          rows[i] = in[i];
        }
        for (int e = 0; e < n; ++e) values[e] = plan_.activation(rows, e);
        uint8_t codes[128];
        ref::QuantScale sc = plan_.quantize(values, s.scalars.data(), codes);
        if (bug_ == Bug::kAmaxShort || bug_ == Bug::kAmaxSigned) {
          uint16_t amax = plan_.block_amax(values, bug_ == Bug::kAmaxShort ? n - 1 : n);
          if (bug_ == Bug::kAmaxSigned) {
            float best = -INFINITY;
            for (int e = 0; e < n; ++e) {
              const float f = ref::half_to_f32(plan_.dtype(), values[e]);
              if (f > best) best = f, amax = values[e];
            }
          }
          const ref::QuantBlockState st = plan_.scale_step(amax, s.scalars.data());
          sc = st.scale;
          for (int e = 0; e < n; ++e) codes[e] = plan_.element_step(values[e], st);
        }
        if (bug_ == Bug::kZeroBlockNoCode) {
          bool zero = true;
          for (int e = 0; e < n; ++e) zero &= (values[e] & 0x7FFF) == 0;
          if (zero)
            for (int e = 0; e < n; ++e) codes[e] = 0xFF;
        }
        uint32_t bits = e4m3_scale ? sc.byte : ref::f32_bits(sc.value);
        if (bug_ == Bug::kScaleOffByOne &&
            plan_.block_amax(values, n) == ref::f32_to_half(plan_.dtype(), 3.0f, ref::NanPolicy::kCudaCvtRn))
          ++bits;
        for (int e = 0; e < n; ++e) {
          if (bug_ == Bug::kNegZeroFlipped && values[e] == 0x8000) codes[e] ^= e2m1 ? 0x8 : 0x80;
          codes_all[size_t(r * s.width + k * n + e)] = codes[e];
        }
        int64_t cell = ref::scale_offset(s.layout, r, k, s.rows, blocks);
        if (swz && bug_ == Bug::kSwizzleTiles) {  // tiles column-major: row tile fastest
          const int64_t rt = (s.rows + 127) / 128;
          cell = ((k >> 2) * rt + (r >> 7)) * 512 + (r & 31) * 16 + ((r >> 5) & 3) * 4 + (k & 3);
        }
        if (swz && bug_ == Bug::kSwizzleKTileOff && blocks > 4) {
          const int64_t kt = (blocks + 3) / 4;
          cell = ((r >> 7) * kt + ((k >> 2) + 1) % kt) * 512 + (r & 31) * 16 + ((r >> 5) & 3) * 4 + (k & 3);
        }
        if (e4m3_scale) {
          o.scales[size_t(cell)] = uint8_t(bits);
        } else {
          for (int b = 0; b < 4; ++b) o.scales[size_t(cell * 4 + b)] = uint8_t(bits >> (8 * b));
        }
      }
    for (size_t i = 0; i < codes_all.size(); ++i) {
      if (!e2m1) {
        o.codes[i] = codes_all[i];
      } else if (i % 2 == 1) {
        o.codes[i / 2] = uint8_t((codes_all[i - 1] & 0x0F) | ((codes_all[i] & 0x0F) << 4));
      }
    }
    return o;
  }

  const ref::QuantPlan& plan_;
  Bug bug_;
};

/// rcp_inexact of the kernels' inexact-reciprocal mutant: the estimate 1/a truncated to 12 significant bits, then one
/// Newton step in binary32; one ulp off on a fraction of the inputs (1/3 gives 0x3EAAAAAA).
float rcp_inexact(float a) {
  if (a == 0.0f || a != a || std::isinf(a)) return 1.0f / a;
  const float est = ref::f32_from_bits(ref::f32_bits(float(1.0 / double(a))) & 0xFFFFF800u);
  const float e = 2.0f - a * est;
  return est * e;
}

/// The model of (op, contract, dtype) with the libm math model (the activation stage) and no rcp.approx table: the
/// rcp-approx contract lands in others_missing.
QuantModel test_model(const std::string& op_name, ref::QuantContract c, ref::Dtype d) {
  static const ref::MathConfig cfg = [] {
    ref::MathConfig m;
    m.math = ref::MathModel::kLibm;
    return m;
  }();
  const ref::QuantOpSpec* op = ref::find_quant_op(op_name);
  QuantModel m;
  m.op = op;
  m.contract = c;
  m.dtype = d;
  m.plan = std::make_shared<const ref::QuantPlan>(*op, c, d, ref::QuantModels{}, cfg);
  for (const auto& k : op->contracts) {
    if (k.contract == c) continue;
    if (ref::needs_rcp_approx(k)) {
      m.others_missing.push_back(std::string(ref::quant_contract_name(k.contract)) + ": no table in this test");
      continue;
    }
    m.others.push_back(std::make_shared<const ref::QuantPlan>(*op, k.contract, d, ref::QuantModels{}, cfg));
  }
  return m;
}

struct ClassRun {
  std::vector<CheckResult> results;
  double seconds = 0;
};

/// Runs `classes` on a fake subject of (op, contract, dtype) at the host's default scope (stage_rows 0) or `rows`.
ClassRun run_classes(const std::string& op, ref::QuantContract c, ref::Dtype d, Bug bug, std::vector<CheckClass> classes,
                uint32_t stage_rows = 0, int64_t max_width = 0, const ref::QuantPlan* subject = nullptr,
                const QuantModel* given = nullptr, const std::string& differences = "") {
  const QuantModel model = given ? *given : test_model(op, c, d);
  FakeRunner runner(subject ? *subject : *model.plan, bug);
  PluginInfo info;
  info.memory = FUSEPROOF_MEMORY_HOST;
  info.vector_bytes = 16;
  info.op = op;
  AuditOptions options;
  options.records = 4;
  options.differences = differences;
  const int32_t abi = d == ref::Dtype::kBf16 ? FUSEPROOF_DTYPE_BF16 : FUSEPROOF_DTYPE_FP16;
  QuantContext ctx{info, runner, model, options, abi, max_width, stage_rows};
  ClassRun run;
  const auto t0 = std::chrono::steady_clock::now();
  for (CheckClass k : classes) {
    CheckResult r;
    const auto c0 = std::chrono::steady_clock::now();
    run_quant_class(k, ctx, r);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
    settle_check(r);
    run.results.push_back(std::move(r));
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run;
}

std::string summary(const CheckResult& r) {
  std::string s = std::string(check_class_name(r.cls)) + " " + check_status_name(r.status) + " cases " +
                  std::to_string(r.cases) + " mismatches " + std::to_string(r.mismatches) + " distinct " +
                  std::to_string(r.distinct_expected) + "; " + r.scope + (r.note.empty() ? "" : "; " + r.note);
  for (const auto& l : r.records) s += "\n  " + l;
  return s;
}

/// The classes this file's fake subject is judged by: the quantization classes but those that call the subject as
/// models run it (large calls, streams, graphs: quant_call_classes_test.cpp judges them on the emulated plugins).
std::vector<CheckClass> fake_classes() {
  std::vector<CheckClass> v;
  for (CheckClass c : quant_check_classes())
    if (c == CheckClass::kRejection || c == CheckClass::kWidths || c == CheckClass::kStages ||
        c == CheckClass::kBlocks || c == CheckClass::kLayout)
      v.push_back(c);
  return v;
}

TEST(Audit_QuantClasses, ClassListAndOrder) {
  const auto& c = quant_check_classes();
  ASSERT_EQ(c.size(), 11u);
  EXPECT_EQ(c[0], CheckClass::kRejection);
  EXPECT_EQ(c[2], CheckClass::kStages);
  EXPECT_EQ(c[4], CheckClass::kLayout);
  EXPECT_EQ(fake_classes().size(), 5u);
}

// Every class PASSes a correct subject, over nonzero cases and at least two distinct expected outputs, for each kind
// of op (a quantizer alone, NVFP4 and FP8; a fused op of a packed pair; a fused op of a row-broadcast bias). The
// stage sweeps take 1 row (the host's default scope is the timing test's).
struct OpCase {
  const char* op;
  ref::QuantContract contract;
};
const OpCase kOps[] = {{"nvfp4_quant", ref::QuantContract::kVllmRef},
                       {"fp8_group_quant", ref::QuantContract::kFp8Group},
                       {"fp8_group_quant", ref::QuantContract::kFp8GroupUe8m0},
                       {"nvfp4_quant", ref::QuantContract::kTe},
                       {"silu_and_mul_nvfp4_quant", ref::QuantContract::kVllmRef},
                       {"bias_gelu_tanh_nvfp4_quant", ref::QuantContract::kFlashinferExact},
                       {"silu_and_mul_fp8_group_quant", ref::QuantContract::kFp8Group}};

TEST(Audit_QuantClasses, CorrectSubjectPassesEveryClass) {
  size_t k = 0;
  for (const OpCase& oc : kOps)
    for (ref::Dtype d : ref::kAllDtypes) {
      // The stages class (the longest) on each op in one dtype, the two dtypes by turns.
      std::vector<CheckClass> classes;
      for (CheckClass c : fake_classes())
        if (c != CheckClass::kStages || k % 2 == 1 - size_t(d == ref::Dtype::kBf16)) classes.push_back(c);
      const ClassRun run = run_classes(oc.op, oc.contract, d, Bug::kNone, classes, 1, 512);
      for (const CheckResult& r : run.results) {
        SCOPED_TRACE(std::string(oc.op) + " " + ref::quant_contract_name(oc.contract) + " " + ref::dtype_name(d));
        EXPECT_EQ(r.status, CheckStatus::kPass) << summary(r);
        EXPECT_GT(r.cases, 0u);
        if (r.cls != CheckClass::kRejection) EXPECT_GE(r.distinct_expected, 2u) << summary(r);
        EXPECT_FALSE(r.scope.empty());
      }
      k += d == ref::Dtype::kFp16;
    }
}

// The stages class reports the distance from every other contract at hand, and names those it lacks; vllm-ref and
// te differ on NaN members (0xFF against 0x0), so that distance cannot be empty.
TEST(Audit_QuantClasses, StagesReportsContractDistances) {
  const ClassRun run = run_classes("nvfp4_quant", ref::QuantContract::kVllmRef, ref::Dtype::kBf16, Bug::kNone,
                              {CheckClass::kStages}, 2);
  const CheckResult& r = run.results[0];
  ASSERT_EQ(r.contract_distances.size(), 2u);  // te and flashinfer-exact; rcp-approx has no table here
  EXPECT_NE(r.note.find("rcp-approx"), std::string::npos) << r.note;
  bool te_seen = false;
  for (const ContractDistance& d : r.contract_distances) {
    EXPECT_GT(d.cases, 0u);
    if (d.contract == "te") {
      te_seen = true;
      EXPECT_GT(d.pairs_total, 0u);
      EXPECT_FALSE(d.pairs.empty());
    }
  }
  EXPECT_TRUE(te_seen);
  // The JSON keeps them, and the Markdown shows them.
  const CheckResult back = check_from_json(check_to_json(r));
  ASSERT_EQ(back.contract_distances.size(), r.contract_distances.size());
  EXPECT_EQ(back.contract_distances[0].pairs, r.contract_distances[0].pairs);
  EXPECT_EQ(back.contract_distances[0].code_steps, r.contract_distances[0].code_steps);
  const std::string md = contract_distances_markdown(r, "vllm-ref");
  EXPECT_NE(md.find("| `te` |"), std::string::npos) << md;
}

struct BugCase {
  Bug bug;
  const char* op;
  ref::QuantContract contract;
  CheckClass catches;
};

// Negative controls: each broken subject FAILs in the class built to catch it, with a record naming the difference.
TEST(Audit_QuantClasses, BrokenSubjectsFail) {
  const BugCase cases[] = {
      {Bug::kScaleOffByOne, "nvfp4_quant", ref::QuantContract::kVllmRef, CheckClass::kStages},
      {Bug::kScaleOffByOne, "fp8_group_quant", ref::QuantContract::kFp8Group, CheckClass::kStages},
      {Bug::kPaddingNotWritten, "nvfp4_quant", ref::QuantContract::kVllmRef, CheckClass::kLayout},
      {Bug::kSwizzleTiles, "nvfp4_quant", ref::QuantContract::kTe, CheckClass::kLayout},
      {Bug::kNegZeroFlipped, "nvfp4_quant", ref::QuantContract::kVllmRef, CheckClass::kBlocks},
      {Bug::kNegZeroFlipped, "fp8_group_quant", ref::QuantContract::kFp8GroupUe8m0, CheckClass::kBlocks},
      {Bug::kRejectsValid, "nvfp4_quant", ref::QuantContract::kVllmRef, CheckClass::kWidths},
      {Bug::kAcceptsScalars, "nvfp4_quant", ref::QuantContract::kVllmRef, CheckClass::kRejection},
  };
  for (const BugCase& b : cases) {
    const ClassRun run = run_classes(b.op, b.contract, ref::Dtype::kBf16, b.bug, {b.catches}, 2, 512);
    const CheckResult& r = run.results[0];
    SCOPED_TRACE(std::string(b.op) + " bug " + std::to_string(int(b.bug)));
    EXPECT_EQ(r.status, CheckStatus::kFail) << summary(r);
    EXPECT_GT(r.mismatches, 0u);
    EXPECT_FALSE(r.records.empty());
    // Every mismatching code or scale lands in the distance histogram (a refused call counts its elements only).
    if (b.bug != Bug::kRejectsValid && b.bug != Bug::kAcceptsScalars)
      EXPECT_EQ(r.vs_contract.total() - r.vs_contract.count(Distance::kExact), r.mismatches) << r.vs_contract.line();
  }
}

// The kernels' mutant catalogue (kernels/mutants/quant_bugs.h), emulated on the fake subject: each FAILs in the class
// the catalogue names, at the host's default scope (the stages sweep on two rows: the default's 24 + 4 rows find more
// mismatches of inexact_rcp in bf16, in 5 s).
TEST(Audit_QuantClasses, MutantCatalogueFailsInItsClass) {
  static const ref::MathConfig cfg;
  const ref::Dtype d = ref::Dtype::kBf16;
  const ref::QuantOpSpec& nvfp4 = *ref::find_quant_op("nvfp4_quant");
  // scale_unsaturated: vllm-ref without the +-448 clamp is flashinfer-exact.
  const ref::QuantPlan unsaturated(nvfp4, ref::QuantContract::kFlashinferExact, d, ref::QuantModels{}, cfg);
  // inexact_rcp: vllm-ref's correctly rounded reciprocals replaced by rcp_inexact.
  ref::QuantOpSpec inexact_op = nvfp4;
  for (auto& c : inexact_op.contracts)
    if (c.contract == ref::QuantContract::kVllmRef)
      for (auto& st : c.scale_steps)
        if (st.op == ref::QuantOp::kRcpExact) st.op = ref::QuantOp::kRcpApprox;
  ref::QuantModels inexact_models;
  inexact_models.rcp_approx = rcp_inexact;
  const ref::QuantPlan inexact(inexact_op, ref::QuantContract::kVllmRef, d, inexact_models, cfg);
  struct Mutant {
    const char* name;
    Bug bug;
    const char* op;
    ref::QuantContract contract;
    CheckClass catches;
    const ref::QuantPlan* subject;
    uint32_t stage_rows = 0;  ///< 0: the host's default
  };
  const Mutant mutants[] = {
      {"inexact_rcp", Bug::kNone, "nvfp4_quant", ref::QuantContract::kVllmRef, CheckClass::kStages, &inexact, 2},
      {"scale_unsaturated", Bug::kNone, "nvfp4_quant", ref::QuantContract::kVllmRef, CheckClass::kBlocks, &unsaturated},
      {"amax_short", Bug::kAmaxShort, "nvfp4_quant", ref::QuantContract::kVllmRef, CheckClass::kBlocks, nullptr},
      {"amax_short", Bug::kAmaxShort, "fp8_group_quant", ref::QuantContract::kFp8Group, CheckClass::kBlocks, nullptr},
      {"amax_signed", Bug::kAmaxSigned, "nvfp4_quant", ref::QuantContract::kVllmRef, CheckClass::kBlocks, nullptr},
      {"amax_signed", Bug::kAmaxSigned, "fp8_group_quant", ref::QuantContract::kFp8Group, CheckClass::kBlocks, nullptr},
      {"negzero_lost", Bug::kNegZeroFlipped, "fp8_group_quant", ref::QuantContract::kFp8Group, CheckClass::kBlocks, nullptr},
      {"swizzle_tile_off", Bug::kSwizzleKTileOff, "nvfp4_quant", ref::QuantContract::kVllmRef, CheckClass::kLayout, nullptr},
      {"zero_block_inf_scale", Bug::kZeroBlockNoCode, "nvfp4_quant", ref::QuantContract::kVllmRef, CheckClass::kBlocks,
       nullptr},
  };
  for (const Mutant& m : mutants) {
    const ClassRun run = run_classes(m.op, m.contract, d, m.bug, {m.catches}, m.stage_rows, 0, m.subject);
    const CheckResult& r = run.results[0];
    EXPECT_EQ(r.status, CheckStatus::kFail) << m.name << " " << m.op << ": " << summary(r);
    std::printf("%s %s: %s %s, %llu mismatches in %llu cases, %.1f s\n", m.name, m.op, check_class_name(r.cls),
                check_status_name(r.status), (unsigned long long)r.mismatches, (unsigned long long)r.cases, run.seconds);
  }
}

// A record is one TestFloat-style line: op, dtype, position, inputs, amax, scalars, then the codes and the scales.
TEST(Audit_QuantClasses, RecordNamesElementAmaxAndScale) {
  const ClassRun run = run_classes("nvfp4_quant", ref::QuantContract::kVllmRef, ref::Dtype::kBf16, Bug::kNegZeroFlipped,
                              {CheckClass::kBlocks});
  const CheckResult& r = run.results[0];
  ASSERT_FALSE(r.records.empty());
  const std::string& l = r.records[0];
  EXPECT_EQ(l.rfind("nvfp4_quant bf16 [r=", 0), 0u) << l;
  EXPECT_NE(l.find(" x=0x8000 amax=0x"), std::string::npos) << l;
  EXPECT_NE(l.find(" global_scale=0x"), std::string::npos) << l;
  EXPECT_NE(l.find(" => code 0x8 expected 0x0 (scale 0x"), std::string::npos) << l;
}

// make_quant_model: rcp-approx from the golden MUFU capture beside the claimed plan; without the capture, the claimed
// rcp-approx is missing data (exit 3) and another contract's rcp-approx is listed as missing, never modelled otherwise.
TEST(Audit_QuantModel, RcpApproxFromGoldenOrListedMissing) {
  const ref::QuantOpSpec& op = *ref::find_quant_op("nvfp4_quant");
  const GoldenArch bare(test::golden_dir(), "/nonexistent-golden-build", test::golden_arch());
  ASSERT_FALSE(bare.has_mufu());
  EXPECT_THROW(make_quant_model(op, ref::QuantContract::kRcpApprox, ref::Dtype::kBf16, bare), MissingDataError);
  EXPECT_THROW(make_quant_model(op, ref::QuantContract::kFp8Group, ref::Dtype::kBf16, bare), UsageError);
  EXPECT_THROW(make_quant_model(*ref::find_quant_op("silu_and_mul_nvfp4_quant"), ref::QuantContract::kVllmRef,
                                ref::Dtype::kBf16, bare),
               MissingDataError);  // the activation stage's cuda model needs the MUFU tables
  const QuantModel m = make_quant_model(op, ref::QuantContract::kVllmRef, ref::Dtype::kBf16, bare);
  EXPECT_EQ(m.others.size(), 2u);
  ASSERT_EQ(m.others_missing.size(), 1u);
  EXPECT_EQ(m.others_missing[0].rfind("rcp-approx: ", 0), 0u) << m.others_missing[0];
  if (!test::golden().has_mufu()) GTEST_SKIP() << "no unpacked MUFU tables in " << test::golden_build_dir();
  const QuantModel g = make_quant_model(op, ref::QuantContract::kVllmRef, ref::Dtype::kBf16, test::golden());
  EXPECT_EQ(g.others.size(), 3u);
  EXPECT_TRUE(g.others_missing.empty());
  const QuantModel rcp = make_quant_model(op, ref::QuantContract::kRcpApprox, ref::Dtype::kBf16, test::golden());
  EXPECT_EQ(rcp.golden_label, test::golden().label());
  const QuantModel fused = make_quant_model(*ref::find_quant_op("silu_and_mul_nvfp4_quant"),
                                            ref::QuantContract::kVllmRef, ref::Dtype::kFp16, test::golden());
  EXPECT_EQ(fused.others.size(), 3u);
  EXPECT_NE(fused.description.find("equal at all 65536 inputs"), std::string::npos) << fused.description;
}

/// A fresh empty directory under the test's temporary folder.
std::string fresh_dir(const std::string& name) {
  const std::filesystem::path p = std::filesystem::path(::testing::TempDir()) / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

/// Re-evaluates one --differences line with the claimed contract's plan and the other's: "" when the line's scales
/// and codes are exactly theirs and they differ, else why not.
std::string check_difference_line(const std::string& text, const ref::QuantPlan& claimed, const ref::QuantPlan& other) {
  const auto l = parse_difference_line(text);
  if (!l) return "unparsable: " + text;
  std::vector<float> sc;
  for (uint32_t b : l->scalars) sc.push_back(ref::f32_from_bits(b));
  if (int(sc.size()) != claimed.scalars()) return "scalars: " + text;
  const ref::QuantBlockState a = claimed.scale_step(l->amax, sc.data()), b = other.scale_step(l->other_amax, sc.data());
  if (a.scale.byte != l->scale || b.scale.byte != l->other_scale)
    return "scales " + std::to_string(a.scale.byte) + " " + std::to_string(b.scale.byte) + ": " + text;
  if (!l->value) return l->scale != l->other_scale && !l->code && !l->other_code ? "" : "scale line: " + text;
  if (!l->code || !l->other_code) return "codes missing: " + text;
  const uint8_t ca = claimed.element_step(*l->value, a) & 0x0F, cb = other.element_step(*l->value, b) & 0x0F;
  if (ca != *l->code || cb != *l->other_code) return "codes: " + text;
  return ca != cb ? "" : "equal codes: " + text;
}

/// Checks a --differences file of the subject (claiming `claimed`) against `other`: its lines are d.pairs_total, its
/// digest d's, every line re-evaluates to its codes and scales, no (value, scale, scalars) input twice.
void expect_differences_file(const ContractDistance& d, const std::string& dir, const ref::QuantPlan& claimed,
                             const ref::QuantPlan& other) {
  const std::string name = "nvfp4_quant." + std::string(ref::quant_contract_name(claimed.contract().contract)) +
                           ".vs." + d.contract + "." + ref::dtype_name(claimed.dtype()) + ".tsv";
  EXPECT_EQ(d.differences_path, (std::filesystem::path(dir) / name).string());
  EXPECT_EQ(d.differences_sha256, Sha256::of_file(d.differences_path));
  std::ifstream in(d.differences_path);
  std::string line;
  ASSERT_TRUE(std::getline(in, line)) << d.differences_path;
  EXPECT_EQ(line.rfind("# nvfp4_quant ", 0), 0u) << line;
  EXPECT_NE(line.find(d.contract), std::string::npos) << line;
  EXPECT_NE(line.find(kDifferenceColumns), std::string::npos) << line;
  EXPECT_NE(line.find("scope: scale step"), std::string::npos) << line;
  uint64_t lines = 0;
  std::set<std::tuple<bool, uint16_t, uint32_t, std::vector<uint32_t>>> seen;
  while (std::getline(in, line)) {
    ++lines;
    const std::string why = check_difference_line(line, claimed, other);
    EXPECT_EQ(why, "") << d.differences_path;
    if (!why.empty()) return;
    const auto l = *parse_difference_line(line);
    EXPECT_TRUE(seen.insert({bool(l.value), l.value ? *l.value : l.amax, l.scale, l.scalars}).second) << line;
  }
  EXPECT_EQ(lines, d.pairs_total) << d.contract;
  EXPECT_EQ(lines, d.differences_lines) << d.contract;
}

// --differences: every differing input in a file per other contract, each line re-evaluated with both plans; a
// subject equal to the other contract gives an empty list (the negative control), and a tampered line is caught.
TEST(Audit_QuantClasses, StagesDifferencesFileListsEveryDifference) {
  const std::string dir = fresh_dir("fuseproof_differences");
  const QuantModel m = test_model("nvfp4_quant", ref::QuantContract::kVllmRef, ref::Dtype::kBf16);
  const ClassRun run = run_classes("nvfp4_quant", ref::QuantContract::kVllmRef, ref::Dtype::kBf16, Bug::kNone,
                                   {CheckClass::kStages}, 2, 0, nullptr, &m, dir);
  const CheckResult& r = run.results[0];
  ASSERT_EQ(r.contract_distances.size(), m.others.size());
  uint64_t all = 0;
  for (size_t k = 0; k < m.others.size(); ++k) {
    expect_differences_file(r.contract_distances[k], dir, *m.plan, *m.others[k]);
    all += r.contract_distances[k].differences_lines;
  }
  EXPECT_GT(all, 64u);  // more than the 64 lines the report keeps
  // The JSON keeps where the list is, and the Markdown says so.
  const CheckResult back = check_from_json(check_to_json(r));
  EXPECT_EQ(back.contract_distances[0].differences_path, r.contract_distances[0].differences_path);
  EXPECT_EQ(back.contract_distances[0].differences_lines, r.contract_distances[0].differences_lines);
  EXPECT_EQ(back.contract_distances[0].differences_sha256, r.contract_distances[0].differences_sha256);
  const std::string md = contract_distances_markdown(r, "vllm-ref");
  EXPECT_NE(md.find(r.contract_distances[0].differences_path), std::string::npos) << md;
  EXPECT_NE(md.find(r.contract_distances[0].differences_sha256), std::string::npos) << md;

  // The checker can fail: a line with the other code changed is refused.
  std::ifstream in(r.contract_distances[0].differences_path);
  std::string line;
  std::getline(in, line);
  bool tampered = false;
  while (std::getline(in, line)) {
    auto l = *parse_difference_line(line);
    if (!l.value) continue;
    l.other_code = uint8_t((*l.other_code + 1) & 0x0F);
    EXPECT_NE(check_difference_line(difference_line_text(l, 2), *m.plan, *m.others[0]), "");
    tampered = true;
    break;
  }
  EXPECT_TRUE(tampered);

  // The negative control: a subject equal to the other contract (vllm-ref listed as another contract of itself):
  // its list is empty over as many cases.
  const std::string dir2 = fresh_dir("fuseproof_differences_self");
  QuantModel self = m;
  self.others = {m.plan};
  const ClassRun same = run_classes("nvfp4_quant", ref::QuantContract::kVllmRef, ref::Dtype::kBf16, Bug::kNone,
                                    {CheckClass::kStages}, 2, 0, nullptr, &self, dir2);
  ASSERT_EQ(same.results[0].contract_distances.size(), 1u);
  const ContractDistance& d = same.results[0].contract_distances[0];
  EXPECT_EQ(d.cases, r.contract_distances[0].cases);
  EXPECT_EQ(d.pairs_total, 0u);
  EXPECT_EQ(d.differences_lines, 0u);
  expect_differences_file(d, dir2, *m.plan, *m.plan);
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(dir2);
}

// What the distances answer: a subject equal to vLLM's reference against the rcp.approx kernel's contract (the MUFU
// capture's rcp.approx.ftz): on exactly which (value, scale) pairs they differ.
TEST(Audit_QuantClasses, VllmRefAgainstRcpApproxPairs) {
  if (!test::golden().has_mufu()) GTEST_SKIP() << "no unpacked MUFU tables in " << test::golden_build_dir();
  const ref::QuantOpSpec& op = *ref::find_quant_op("nvfp4_quant");
  const QuantModel m = make_quant_model(op, ref::QuantContract::kVllmRef, ref::Dtype::kBf16, test::golden());
  const std::string dir = fresh_dir("fuseproof_differences_rcp");
  const ClassRun run = run_classes("nvfp4_quant", ref::QuantContract::kVllmRef, ref::Dtype::kBf16, Bug::kNone,
                                   {CheckClass::kStages}, 2, 0, nullptr, &m, dir);
  const CheckResult& r = run.results[0];
  EXPECT_EQ(r.status, CheckStatus::kPass) << summary(r);
  const ContractDistance* rcp = nullptr;
  const ref::QuantPlan* rcp_plan = nullptr;
  for (size_t k = 0; k < r.contract_distances.size(); ++k)
    if (r.contract_distances[k].contract == "rcp-approx") rcp = &r.contract_distances[k], rcp_plan = m.others[k].get();
  ASSERT_NE(rcp, nullptr);
  EXPECT_GT(rcp->pairs_total, 0u);  // at least the -0 codes (0x0 against 0x8) and the NaN members
  // --differences: all of them, not the 64 kept.
  expect_differences_file(*rcp, dir, *m.plan, *rcp_plan);
  std::filesystem::remove_all(dir);
  std::printf("%s", contract_distances_markdown(r, "vllm-ref", 6).c_str());
}

/// The stages class of `runner`'s subject through the fast paths or the generic ones (QuantContext::generic_paths).
CheckResult stages_via(QuantRunner& runner, const QuantModel& model, bool generic, uint32_t rows, uint64_t stop_after,
                       const std::string& differences, size_t max_distinct) {
  PluginInfo info;
  info.memory = FUSEPROOF_MEMORY_HOST;
  info.vector_bytes = 16;
  info.op = model.op->name;
  AuditOptions options;
  options.records = 8;
  options.stop_after = stop_after;
  options.differences = differences;
  const int32_t abi = model.dtype == ref::Dtype::kBf16 ? FUSEPROOF_DTYPE_BF16 : FUSEPROOF_DTYPE_FP16;
  QuantContext ctx{info, runner, model, options, abi, 0, rows};
  ctx.generic_paths = generic;
  ctx.max_distinct_pairs = max_distinct;
  CheckResult r;
  {
    const PhaseSinkScope sink(&r.phases);
    run_quant_class(CheckClass::kStages, ctx, r);
  }
  settle_check(r);
  return r;
}

bool has_phase(const CheckResult& r, const std::string& name) {
  for (const auto& p : r.phases.phases)
    if (p.first == name) return true;
  return false;
}

/// Runs the stages class both ways (fresh --differences directories each) and expects every field of the results
/// equal but the time and the files' directory, and the files byte for byte; returns the fast path's result.
CheckResult expect_paths_agree(const std::function<std::unique_ptr<QuantRunner>()>& runner, const QuantModel& model,
                               uint32_t rows, uint64_t stop_after, size_t max_distinct = 0, bool differences = true) {
  // Directories of this test alone (ctest runs the tests of this file side by side).
  const std::string tag = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const std::string fast_dir = differences ? fresh_dir("fuseproof_" + tag + "_fast") : "";
  const std::string generic_dir = differences ? fresh_dir("fuseproof_" + tag + "_generic") : "";
  const CheckResult fast = stages_via(*runner(), model, false, rows, stop_after, fast_dir, max_distinct);
  const CheckResult generic = stages_via(*runner(), model, true, rows, stop_after, generic_dir, max_distinct);
  auto comparable = [](const CheckResult& r) {
    nlohmann::json j = check_to_json(r);
    j.erase("seconds");
    j.erase("phases");
    for (auto& d : j["contract_distances"])
      if (d.contains("differences")) d["differences"].erase("path");
    return j;
  };
  // Each path ran (the fast one names its phase).
  EXPECT_TRUE(has_phase(fast, "reference values (scale step: amaxes grouped)"));
  EXPECT_FALSE(has_phase(generic, "reference values (scale step: amaxes grouped)"));
  EXPECT_EQ(comparable(fast).dump(1), comparable(generic).dump(1));
  EXPECT_EQ(fast.contract_distances.size(), generic.contract_distances.size());
  for (size_t k = 0; k < fast.contract_distances.size() && k < generic.contract_distances.size(); ++k) {
    const std::string& a = fast.contract_distances[k].differences_path;
    const std::string& b = generic.contract_distances[k].differences_path;
    EXPECT_EQ(a.empty(), !differences);
    if (a.empty()) continue;
    std::ifstream fa(a, std::ios::binary), fb(b, std::ios::binary);
    const std::string ta((std::istreambuf_iterator<char>(fa)), {}), tb((std::istreambuf_iterator<char>(fb)), {});
    EXPECT_TRUE(ta == tb) << a << " (" << ta.size() << " bytes) and " << b << " (" << tb.size() << " bytes) differ";
  }
  if (differences) {
    std::filesystem::remove_all(fast_dir);
    std::filesystem::remove_all(generic_dir);
  }
  return fast;
}

struct SweepCase {
    const char* op;
    ref::QuantContract contract;
    ref::Dtype dtype;
    Bug bug;
    uint32_t rows;  ///< 5: two batches of FakeRunner's 4
    uint64_t stop_after;
    size_t max_distinct;  ///< small: most differences past the set of distinct ones (counted, listed, not told apart)
    bool differences;
};

void expect_sweep_cases_agree(const std::vector<SweepCase>& cases) {
  for (const SweepCase& c : cases) {
    SCOPED_TRACE(std::string(c.op) + " " + ref::quant_contract_name(c.contract) + " " + ref::dtype_name(c.dtype) +
                 " bug " + std::to_string(int(c.bug)));
    const QuantModel m = test_model(c.op, c.contract, c.dtype);
    const CheckResult r = expect_paths_agree([&] { return std::make_unique<FakeRunner>(*m.plan, c.bug); }, m, c.rows,
                                             c.stop_after, c.max_distinct, c.differences);
    EXPECT_EQ(r.status, c.bug == Bug::kNone ? CheckStatus::kPass : CheckStatus::kFail) << summary(r);
    EXPECT_GT(r.cases, 0u);
    if (c.stop_after) EXPECT_TRUE(r.stopped_early) << summary(r);
  }
}

// The scale step's fast path (grouped scale steps, the distances on every core) gives exactly the generic path's
// result: counts, verdict, records, distance tables and --differences files; over two runner batches, on a correct
// subject and on broken ones (the negative control: their results differ from the correct one's and FAIL), and with
// an early stop.
TEST(Audit_QuantClasses, ScaleSweepFastPathEqualsGeneric) {
  expect_sweep_cases_agree({
      {"nvfp4_quant", ref::QuantContract::kTe, ref::Dtype::kFp16, Bug::kNone, 5, 0, 0, true},
      {"nvfp4_quant", ref::QuantContract::kVllmRef, ref::Dtype::kBf16, Bug::kScaleOffByOne, 5, 0, 0, true},
      {"nvfp4_quant", ref::QuantContract::kVllmRef, ref::Dtype::kBf16, Bug::kAmaxSigned, 2, 5, 0, true},
  });
}

// The same past a small set of distinct differences, where every further difference is counted and (with the files)
// listed, one by one: the fast path's runs of equal differences (a block's zeros) expand to exactly those lines.
TEST(Audit_QuantClasses, ScaleSweepFastPathEqualsGenericPastDistinctCap) {
  expect_sweep_cases_agree({
      {"nvfp4_quant", ref::QuantContract::kTe, ref::Dtype::kBf16, Bug::kNone, 1, 0, 1000, true},
      {"nvfp4_quant", ref::QuantContract::kVllmRef, ref::Dtype::kFp16, Bug::kNone, 2, 0, 1000, false},
  });
}

// The same with the built-in nvfp4_quant emulation and its inexact-reciprocal mutant as plugins on the host runner:
// the mutant's codes and scales differ from vllm-ref's, so its result FAILs where the emulation's PASSes.
TEST(Audit_QuantClasses, ScaleSweepFastPathEqualsGenericPlugins) {
  const QuantModel m = test_model("nvfp4_quant", ref::QuantContract::kVllmRef, ref::Dtype::kBf16);
  const Plugin emulated = Plugin::load(std::string(FUSEPROOF_PLUGIN_DIR) + "/libnvfp4_quant_emulated.so", "nvfp4_quant");
  const Plugin mutant =
      Plugin::load(std::string(FUSEPROOF_MUTANT_DIR) + "/libhost_nvfp4_quant_inexact_rcp.so", "nvfp4_quant");
  const CheckResult good = expect_paths_agree([&] { return make_host_quant_runner(emulated); }, m, 3, 0);
  EXPECT_EQ(good.status, CheckStatus::kPass) << summary(good);
  const CheckResult bad = expect_paths_agree([&] { return make_host_quant_runner(mutant); }, m, 3, 0);
  EXPECT_EQ(bad.status, CheckStatus::kFail) << summary(bad);
  EXPECT_GT(bad.mismatches, 0u);
}

// The host's default scope (stage_rows 0): what a whole audit of one op runs per dtype, timed (the numbers of the
// report; run with --gtest_also_run_disabled_tests).
TEST(Audit_QuantClasses, DISABLED_HostDefaultScopeTimed) {
  // FUSEPROOF_QUANT_STAGE_ROWS: the stage sweeps' rows instead of the host's default (to time a larger scope).
  const char* rows_env = std::getenv("FUSEPROOF_QUANT_STAGE_ROWS");
  const uint32_t rows = rows_env ? uint32_t(std::strtoul(rows_env, nullptr, 10)) : 0;
  for (const OpCase& oc : kOps)
    for (ref::Dtype d : ref::kAllDtypes) {
      const ClassRun run = run_classes(oc.op, oc.contract, d, Bug::kNone, fake_classes(), rows);
      std::string line = std::string(oc.op) + " " + ref::dtype_name(d) + " " + ref::quant_contract_name(oc.contract) + ": ";
      for (const CheckResult& r : run.results) {
        EXPECT_EQ(r.status, CheckStatus::kPass) << summary(r);
        line += std::string(check_class_name(r.cls)) + " " + std::to_string(r.cases) + " (" +
                std::to_string(int(r.seconds * 10 + 0.5) / 10.0).substr(0, 4) + " s), ";
      }
      std::printf("%s%.1f s\n", line.c_str(), run.seconds);
      if (d == ref::Dtype::kBf16)
        for (const CheckResult& r : run.results) std::printf("  %s: %s\n", check_class_name(r.cls), r.scope.c_str());
    }
}

}  // namespace
}  // namespace fuseproof::audit
