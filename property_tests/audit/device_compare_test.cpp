// device_compare_test.cpp: the widths and domain classes' device path (KernelRunner::calls_compared) as the classes
// use it, on the host: a runner that makes each batched call on the host plugin and compares it there, as the CUDA
// runner does on the device. The widths class must give the same counts, distinct outputs, records and histograms
// through it as through the host path, on a correct subject and a wrong one; a device count that the host path does
// not reproduce fails the class; the domain class's grid covers every pair once. The CUDA runner's own side is
// Audit_CudaRunner (cuda_runner_test.cpp), on a GPU.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "audit/audit_inputs.h"
#include "audit/check_classes.h"
#include "audit/check_support.h"
#include "audit/counter_patterns.h"
#include "audit/kernel_runner.h"
#include "audit/op_model.h"
#include "audit/plugin_loader.h"
#include "common/domain_sweep.h"
#include "common/golden_library.h"
#include "kernels/fuseproof_kernel_abi.h"
#include "reference/op_spec.h"

namespace fuseproof::audit {
namespace {

using ref::Dtype;

std::string plugin(const std::string& name) { return std::string(FUSEPROOF_PLUGIN_DIR) + "/lib" + name + ".so"; }
std::string mutant(const std::string& name) { return std::string(FUSEPROOF_MUTANT_DIR) + "/lib" + name + ".so"; }

OpModel model_of(const std::string& op, Dtype d) {
  OpModel m;
  m.op = ref::find_op(op);
  m.contract = ref::Contract::kEager;
  m.dtype = d;
  m.math = ref::MathModel::kLibm;
  ref::MathConfig cfg;
  cfg.math = m.math;
  m.plan = std::make_shared<const ref::OpPlan>(*m.op, m.contract, d, cfg);
  m.digest_key = golden_digest_key(op, m.contract);
  return m;
}

/// Buffer k's element e as the device generates it (Patterns), written here from counter_patterns.h directly.
uint16_t generated(const LargeSpec& s, int k, size_t e) {
  const bool bf16 = s.dtype == FUSEPROOF_DTYPE_BF16;
  if (s.patterns == Patterns::kWeighted) {
    const std::vector<uint16_t> sp = extreme_patterns(bf16 ? Dtype::kBf16 : Dtype::kFp16);
    return weighted_pattern_at(bf16, s.buffer_seed(k), e, sp.data(), sp.size());
  }
  return counter_pattern(bf16, s.buffer_seed(k), e);
}

/// calls_compared on the host: each call made on the host runner with the generated inputs, compared element by
/// element with the model (the CUDA runner uses the table of OpPlan::row: the same values), `seen` sampled as asked.
/// `lie_at`: the call whose mismatch count is reported one higher (a device comparison the host path cannot
/// reproduce). `no_calls`: report every call clean without making it (the domain's bookkeeping, 2^32 elements).
class HostAsDevice : public KernelRunner {
 public:
  HostAsDevice(const Plugin& p, const OpModel& m) : inner_(make_host_runner(p)), model_(m) {}
  std::optional<uint64_t> lie_at;
  bool no_calls = false;
  uint64_t calls_made = 0;
  std::vector<LargeSpec> seen_specs;
  /// kWitness calls as they were made (the WitnessPairs lives only as long as its stage).
  struct WitnessCall {
    std::string table;
    uint32_t na, b_first;
    uint64_t pairs;
  };
  std::vector<WitnessCall> witness_calls;

  CallOutcome call(const CallSpec& s) override { return inner_->call(s); }
  std::optional<CallOutcome> call_after_producer(const CallSpec&, const CallSpec&, int) override {
    return std::nullopt;
  }
  LargeOutcome large_call(const LargeSpec& s, const ChunkCheck& c) override { return inner_->large_call(s, c); }
  uint64_t memory_available() const override { return inner_->memory_available(); }
  std::string hardware() const override { return "the host, as a device"; }
  std::string buffers_per_call() const override { return inner_->buffers_per_call(); }

  std::optional<std::vector<LargeOutcome>> calls_compared(const std::vector<LargeSpec>& specs, const ExpectedTable& table,
                                                          const Sampling& sampling,
                                                          std::vector<DeviceComparison>* cmps) override {
    if ((table.in_order || table.tap) && table.key != built_) {  // as the CUDA runner builds its table
      SweepOptions so;
      so.in_order = bool(table.in_order);  // the rows in order for a flat digest, else each block where it is made
      sweep_domain(table.row, table.in_order ? table.in_order : table.tap, so);
      built_ = table.key;
    }
    std::vector<LargeOutcome> outs(specs.size());
    cmps->assign(specs.size(), {});
    for (size_t i = 0; i < specs.size(); ++i) {
      const LargeSpec& s = specs[i];
      seen_specs.push_back(s);
      if (s.patterns == Patterns::kWitness) witness_calls.push_back({table.key, s.witness->na, s.b_first, s.pairs});
      DeviceComparison& c = (*cmps)[i];
      c.seen.assign(65536, 0);
      const uint64_t elems = s.patterns == Patterns::kWitness ? s.pairs : uint64_t(s.rows) * uint64_t(s.width);
      if (no_calls) {
        c.compared = elems;
        continue;
      }
      CallSpec cs = make_call(*s.op, s.rows, s.width, s.dtype, s.group_rows);
      for (int k = 0; k < int(cs.buffers.size()); ++k)
        for (size_t e = 0; e < cs.buffers[size_t(k)].size(); ++e) cs.buffers[size_t(k)][e] = generated(s, k, e);
      const CallOutcome o = inner_->call(cs);
      ++calls_made;
      outs[i].rc = o.rc;
      outs[i].message = o.message;
      outs[i].guard_writes = o.guard_writes;
      outs[i].inputs_changed = o.inputs_intact ? 0 : 1;
      if (o.rc != 0) continue;
      c.compared = elems;
      for (int64_t r = 0; r < s.rows; ++r)
        for (int64_t col = 0; col < s.width; ++col) {
          uint16_t in[ref::kMaxOpInputs];
          detail::inputs_at(cs, r, col, in);
          const uint16_t e = model_.expected(in);
          const int64_t idx = r * s.width + col;
          c.mismatches += o.out[size_t(idx)] != e;
          if (r % sampling.row_every == 0 && idx % sampling.index_every == 0) c.seen[e] = 1;
        }
      if (lie_at && *lie_at == calls_made - 1) ++c.mismatches;
    }
    return outs;
  }

 private:
  std::string built_;
  std::unique_ptr<KernelRunner> inner_;
  const OpModel& model_;
};

struct WidthsRun {
  CheckResult r;
  uint64_t device_calls = 0;
};

/// check_widths of `subject` (an op's plugin or mutant) at widths v .. max_width, through the host path (`device`
/// false: the plugin's own host info) or the device path (the info says CUDA memory; HostAsDevice runs it).
WidthsRun widths(const std::string& subject, const std::string& op, bool device, int64_t max_width,
           std::optional<uint64_t> lie_at = std::nullopt, bool device_compare = true) {
  const Plugin p = Plugin::load(subject, op);
  const OpModel m = model_of(op, Dtype::kBf16);
  PluginInfo info = p.info();
  if (device) info.memory = FUSEPROOF_MEMORY_CUDA;
  HostAsDevice fake(p, m);
  fake.lie_at = lie_at;
  std::unique_ptr<KernelRunner> host = make_host_runner(p);
  AuditOptions o;
  o.stop_after = 0;  // every mismatch counted
  o.device_compare = device_compare;
  const CheckContext ctx{info, device ? static_cast<KernelRunner&>(fake) : *host, m, o, FUSEPROOF_DTYPE_BF16,
                         1024, max_width};
  WidthsRun run;
  run.r.cls = CheckClass::kWidths;
  check_widths(ctx, run.r);
  run.device_calls = fake.calls_made;
  return run;
}

void expect_same(const CheckResult& a, const CheckResult& b) {
  EXPECT_EQ(a.cases, b.cases);
  EXPECT_EQ(a.mismatches, b.mismatches);
  EXPECT_EQ(a.failed_checks, b.failed_checks);
  EXPECT_EQ(a.distinct_expected, b.distinct_expected);
  EXPECT_EQ(a.records, b.records);
  EXPECT_EQ(a.fault, b.fault);
  EXPECT_EQ(a.vs_contract.line(), b.vs_contract.line());
}

// 300 widths of 8 (bf16, 16-byte vectors): two batches of the device path's 256.
constexpr int64_t kMaxWidth = 300 * 8;

TEST(Audit_DeviceCompare, WidthsGiveTheHostPathsCountsOnACorrectSubject) {
  const WidthsRun host = widths(plugin("gelu_and_mul_emulated"), "gelu_and_mul", false, kMaxWidth);
  const WidthsRun dev = widths(plugin("gelu_and_mul_emulated"), "gelu_and_mul", true, kMaxWidth);
  EXPECT_EQ(dev.device_calls, 300u);
  EXPECT_EQ(host.device_calls, 0u);
  EXPECT_GT(host.r.cases, 0u);
  expect_same(host.r, dev.r);
  EXPECT_NE(dev.r.scope.find("300 widths made back to back on the device"), std::string::npos) << dev.r.scope;
  EXPECT_NE(dev.r.scope.find("0 called again on the host path"), std::string::npos) << dev.r.scope;
}

TEST(Audit_DeviceCompare, WidthsGiveTheHostPathsCountsAndRecordsOnAWrongSubject) {
  const std::string m = mutant("host_gelu_and_mul_wrong_half_tail");
  const WidthsRun host = widths(m, "gelu_and_mul", false, kMaxWidth);
  const WidthsRun dev = widths(m, "gelu_and_mul", true, kMaxWidth);
  ASSERT_GT(host.r.mismatches, 0u) << "the mutant must fail the widths class";
  expect_same(host.r, dev.r);
  EXPECT_EQ(dev.r.failed_checks, 0u) << "the device's counts were reproduced on the host path";
  EXPECT_EQ(dev.r.scope.find(" 0 called again on the host path"), std::string::npos) << dev.r.scope;
}

// The device path is the default; --host-compare clears it, and a CUDA subject's widths then take the host path.
TEST(Audit_DeviceCompare, WithHostCompareTheHostPathRuns) {
  const WidthsRun dev = widths(plugin("gelu_and_mul_emulated"), "gelu_and_mul", true, 16 * 8, std::nullopt, false);
  EXPECT_EQ(dev.device_calls, 0u);
  EXPECT_GT(dev.r.cases, 0u);
  EXPECT_EQ(dev.r.scope.find("on the device"), std::string::npos) << dev.r.scope;
  EXPECT_TRUE(AuditOptions{}.device_compare);
}

// Negative control: a mismatch the device path counted and the host path does not reproduce fails the class.
TEST(Audit_DeviceCompare, ADeviceCountTheHostPathDoesNotReproduceFailsTheClass) {
  const WidthsRun dev = widths(plugin("gelu_and_mul_emulated"), "gelu_and_mul", true, 64 * 8, 5);
  EXPECT_EQ(dev.r.mismatches, 0u);
  EXPECT_EQ(dev.r.failed_checks, 1u);
  ASSERT_FALSE(dev.r.records.empty());
  EXPECT_NE(dev.r.records[0].find("width 48: the device comparison counted 1 mismatches"), std::string::npos)
      << dev.r.records[0];
}

/// A context whose plugin says CUDA memory and whose runner is HostAsDevice reporting every call clean without making
/// it (no_calls: the whole domain and whole stages), device comparison on (the default): the classes' bookkeeping alone.
struct DeviceRig {
  explicit DeviceRig(const std::string& op, const std::string& arch = "")
      : p(Plugin::load(plugin(op + "_emulated"), op)), m(model_of(op, Dtype::kBf16)), info(cuda_info(p)), fake(p, m),
        o(options(arch)), ctx{info, fake, m, o, FUSEPROOF_DTYPE_BF16, 65536, 1024} {
    fake.no_calls = true;
  }
  static PluginInfo cuda_info(const Plugin& p) {
    PluginInfo i = p.info();
    i.memory = FUSEPROOF_MEMORY_CUDA;
    return i;
  }
  static AuditOptions options(const std::string& arch) {
    AuditOptions o;
    o.arch = arch;
    return o;
  }
  const Plugin p;
  const OpModel m;
  const PluginInfo info;
  HostAsDevice fake;
  const AuditOptions o;
  const CheckContext ctx;
};

// The domain class's device pass: 256 calls whose grids cover every (first, second) pair once; when every call is
// clean the class counts 2^32 cases and says where they were compared.
TEST(Audit_DeviceCompare, DomainGridCoversEveryPairOnce) {
  DeviceRig rig("gelu_and_mul");
  HostAsDevice& fake = rig.fake;
  CheckResult r;
  r.cls = CheckClass::kDomain;
  check_domain(rig.ctx, r);
  EXPECT_EQ(r.cases, uint64_t(1) << 32);
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_NE(r.scope.find("compared on the device"), std::string::npos) << r.scope;
  std::vector<uint8_t> column(65536, 0);
  for (const LargeSpec& s : fake.seen_specs) {
    EXPECT_EQ(s.patterns, Patterns::kGrid);
    EXPECT_EQ(s.rows, 65536);  // every first input down the rows
    for (int64_t c = 0; c < s.width; ++c) ++column[s.grid_col0 + uint32_t(c)];
    // The host regeneration of a grid call's inputs is the grid.
    EXPECT_EQ(s.input(0, 4321, 3), 4321);
    EXPECT_EQ(s.input(1, 4321, 3), uint16_t(s.grid_col0 + 3));
  }
  for (uint32_t c = 0; c < 65536; ++c) ASSERT_EQ(column[c], 1) << "second input " << c;
}

// The stages class's device path on gated_residual (bf16): the calls cover every pair of each stage once, in the
// host path's layout, and the reference's rows, hashed on the workers as the table is built, give golden's stage
// tree digests (golden's "<key>.stage<k>_tree": each row's digest lands in its b value's slot, whatever order the
// blocks are made in).
TEST(Audit_DeviceCompare, StagesOnTheDeviceHashTheReferenceAsGoldenHasIt) {
  DeviceRig rig("gated_residual", "sm_90");
  HostAsDevice& fake = rig.fake;
  const OpModel& m = rig.m;
  CheckResult r;
  r.cls = CheckClass::kStages;
  check_stages(rig.ctx, r);
  ASSERT_EQ(m.plan->stages().size(), 2u);
  uint64_t pairs = 0;
  for (const ref::Stage& st : m.plan->stages()) pairs += st.pairs();
  EXPECT_EQ(r.cases, pairs);
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_EQ(r.failed_checks, 0u) << r.note;
  EXPECT_NE(r.note.find("stage 0"), std::string::npos) << r.note;
  EXPECT_NE(r.note.find("equals golden"), std::string::npos) << r.note;
  EXPECT_NE(r.note.find("gated_residual.stage1_tree.bf16"), std::string::npos) << r.note;
  EXPECT_EQ(r.note.find("DIFFERS"), std::string::npos) << r.note;
  EXPECT_NE(r.scope.find("calls made on the device"), std::string::npos) << r.scope;
  // Every pair once: per stage, the calls' pairs follow one another over b and sum to the stage's pairs.
  std::map<std::string, uint64_t> next_b, covered;
  ASSERT_EQ(fake.witness_calls.size(), fake.seen_specs.size());
  for (const auto& c : fake.witness_calls) {
    EXPECT_EQ(c.b_first, next_b[c.table]);
    EXPECT_EQ(c.pairs % c.na, 0u);
    next_b[c.table] += c.pairs / c.na;
    covered[c.table] += c.pairs;
  }
  EXPECT_EQ(covered.size(), 2u);
  uint64_t all = 0;
  for (const auto& [w, n] : covered) all += n;
  EXPECT_EQ(all, pairs);
}

// LargeSpec's host regeneration of the weighted patterns is what fill_counter_random writes into a host call.
TEST(Audit_DeviceCompare, WeightedPatternsRegenerateAsTheHostPathFillsThem) {
  const ref::OpSpec& op = *ref::find_op("gelu_and_mul");
  LargeSpec s{&op, 3, 96, FUSEPROOF_DTYPE_BF16, 0x1234567, 1};
  s.patterns = Patterns::kWeighted;
  const OpModel m = model_of("gelu_and_mul", Dtype::kBf16);
  const Plugin p = Plugin::load(plugin("gelu_and_mul_emulated"), "gelu_and_mul");
  std::unique_ptr<KernelRunner> host = make_host_runner(p);
  AuditOptions o;
  const CheckContext ctx{p.info(), *host, m, o, FUSEPROOF_DTYPE_BF16, 1024, 1024};
  CallSpec cs = detail::make_spec(ctx, 3, 96);
  detail::fill_counter_random(ctx, cs, 0x1234567);
  size_t differ = 0;
  for (int i = 0; i < 2; ++i)
    for (int64_t r = 0; r < 3; ++r)
      for (int64_t c = 0; c < 96; ++c) differ += s.input(i, r, c) != cs.at(i, r, c);
  EXPECT_EQ(differ, 0u);
  // Negative control: another seed regenerates other inputs.
  LargeSpec other = s;
  other.seed ^= 1;
  size_t moved = 0;
  for (int64_t c = 0; c < 96; ++c) moved += other.input(0, 0, c) != cs.at(0, 0, c);
  EXPECT_GT(moved, 48u);
}

}  // namespace
}  // namespace fuseproof::audit
