// audit_engine.cpp: describes the subject, then runs each check class (in a child process of its own when isolating)
// and assembles the verdict.
#include "audit/audit_engine.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <optional>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "audit/audit_isolation.h"
#include "audit/audit_protocol.h"
#include "audit/audit_report.h"
#include "audit/check_classes.h"
#include "audit/op_model.h"
#include "audit/quant_classes.h"
#include "audit/quant_model.h"
#include "common/exit_status.h"
#include "common/golden_library.h"
#include "common/parallel_for.h"
#include "common/remove_tree.h"
#include "reference/quant_spec.h"

namespace fuseproof::audit {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

/// Whether a class ended clean (no fault, no mismatch, no failed check): a class group's child goes on after it, and
/// the parent takes its result before the child has ended.
bool ended_clean(const CheckResult& r) { return r.fault.empty() && !r.mismatches && !r.failed_checks; }

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string quote_path(const std::string& p) {
  return p.find_first_of(" '\"$") == std::string::npos ? p : "'" + p + "'";
}

/// A plugin and the runner over its memory kind, owned together.
class PluginRunner final : public KernelRunner {
 public:
  explicit PluginRunner(Plugin p) : plugin_(std::move(p)) {
    inner_ = plugin_.info().cuda() ? make_cuda_runner(plugin_) : make_host_runner(plugin_);
  }
  CallOutcome call(const CallSpec& s) override { return inner_->call(s); }
  std::optional<CallOutcome> call_after_producer(const CallSpec& s, const CallSpec& stale, int ms) override {
    return inner_->call_after_producer(s, stale, ms);
  }
  LargeOutcome large_call(const LargeSpec& s, const ChunkCheck& c) override { return inner_->large_call(s, c); }
  std::optional<LargeOutcome> large_call_compared(const LargeSpec& s, const std::string& key, const RowFn& row,
                                                  DeviceComparison* cmp) override {
    return inner_->large_call_compared(s, key, row, cmp);
  }
  std::optional<std::vector<LargeOutcome>> calls_compared(const std::vector<LargeSpec>& s, const ExpectedTable& table,
                                                          const Sampling& sampling,
                                                          std::vector<DeviceComparison>* cmps) override {
    return inner_->calls_compared(s, table, sampling, cmps);
  }
  uint64_t memory_available() const override { return inner_->memory_available(); }
  std::string hardware() const override { return inner_->hardware(); }
  std::string arch() const override { return inner_->arch(); }
  std::string buffers_per_call() const override { return inner_->buffers_per_call(); }
  std::vector<Throughput> copy_throughput() override { return inner_->copy_throughput(); }
  std::optional<ConcurrentOutcome> call_concurrent(const std::vector<CallSpec>& specs, int lanes) override {
    return inner_->call_concurrent(specs, lanes);
  }
  std::optional<GraphOutcome> call_graph(const std::vector<std::vector<CallSpec>>& sets) override {
    return inner_->call_graph(sets);
  }

 private:
  Plugin plugin_;
  std::unique_ptr<KernelRunner> inner_;
};

/// A quantization op's plugin and the runner over its memory kind, owned together.
class PluginQuantRunner final : public QuantRunner {
 public:
  explicit PluginQuantRunner(Plugin p) : plugin_(std::move(p)) {
    inner_ = plugin_.info().cuda() ? make_cuda_quant_runner(plugin_) : make_host_quant_runner(plugin_);
  }
  std::vector<QuantOutcome> call_batch(const std::vector<QuantCallSpec>& specs) override {
    return inner_->call_batch(specs);
  }
  std::string hardware() const override { return inner_->hardware(); }
  std::string arch() const override { return inner_->arch(); }
  int preferred_batch() const override { return inner_->preferred_batch(); }
  std::string buffers_per_call() const override { return inner_->buffers_per_call(); }
  std::optional<QuantLargeOutcome> large_call(const QuantLargeSpec& s, const QuantChunkCheck& c) override {
    return inner_->large_call(s, c);
  }
  uint64_t memory_available() const override { return inner_->memory_available(); }
  std::optional<QuantConcurrentOutcome> call_concurrent(const std::vector<QuantCallSpec>& specs, int lanes) override {
    return inner_->call_concurrent(specs, lanes);
  }
  std::optional<QuantGraphOutcome> call_graph(const std::vector<std::vector<QuantCallSpec>>& sets) override {
    return inner_->call_graph(sets);
  }

 private:
  Plugin plugin_;
  std::unique_ptr<QuantRunner> inner_;
};

/// "vllm-ref, rcp-approx, te, flashinfer-exact": a quantization op's contracts, in its order.
std::string quant_contract_list(const ref::QuantOpSpec& q) {
  std::string s;
  for (const auto& c : q.contracts) s += (s.empty() ? "" : ", ") + std::string(ref::quant_contract_name(c.contract));
  return s;
}

/// The classes an op runs, in order: the elementwise battery, or a quantization op's (quant_check_classes()).
std::vector<CheckClass> classes_of_op(const std::string& op) {
  if (ref::find_quant_op(op)) return quant_check_classes();
  return {std::begin(kAllCheckClasses), std::end(kAllCheckClasses)};
}

/// What the describe step learns and every class needs: the subject, the op and contract it is judged by, its
/// hardware, the golden architecture, the reference models.
struct Description {
  PluginInfo info;
  std::string op, contract, backend, hardware, arch;
  std::vector<std::string> models;
  std::vector<Throughput> throughput;  ///< --profile: copies on the subject's memory and hashing, measured here
};

json throughput_to_json(const std::vector<Throughput>& v) {
  json j = json::array();
  for (const auto& t : v) j.push_back({t.what, t.gb_per_s});
  return j;
}

std::vector<Throughput> throughput_from_json(const json& j) {
  std::vector<Throughput> v;
  for (const auto& t : j) v.push_back({t.at(0).get<std::string>(), t.at(1).get<double>()});
  return v;
}

ref::MathModel resolve_math(const AuditOptions& o, const std::string& backend) {
  const std::string name = o.math_model.empty() ? (backend == "cuda" ? "cuda" : "libm") : o.math_model;
  return *ref::parse_math_model(name);
}

GoldenArch golden_of(const AuditOptions& o) {
  return GoldenArch(o.golden_dir.empty() ? default_golden_dir() : o.golden_dir,
                    o.golden_build_dir.empty() ? default_golden_build_dir() : o.golden_build_dir, o.arch);
}

/// The model a class of (op, contract, dtype) compares with, under the options' math model and golden architecture.
OpModel model_for(const AuditOptions& o, ref::Dtype d, const std::string& backend) {
  const ref::OpSpec* op = ref::find_op(o.op);
  if (!op) throw UsageError("audit: unknown --op " + o.op + " (" + ref::op_names() + ")");
  const auto contract = ref::parse_contract(o.contract);
  if (!contract) throw UsageError("audit: unknown --contract " + o.contract + " (eager, fp32, fma)");
  return make_op_model(*op, *contract, d, resolve_math(o, backend), golden_of(o));
}

/// The model of a quantization op's class on dtype d: the op and contract of the options, the golden architecture.
QuantModel quant_model_for(const AuditOptions& o, ref::Dtype d) {
  const ref::QuantOpSpec* q = ref::find_quant_op(o.op);
  if (!q) throw UsageError("audit: unknown quantization op " + o.op + " (" + ref::quant_op_names() + ")");
  const auto contract = ref::parse_quant_contract(o.contract);
  if (!contract || !q->contract(*contract))
    throw UsageError("audit: op " + o.op + " has no contract " + o.contract + " (" + quant_contract_list(*q) + ")");
  // On the host a table the cuda model does not reproduce is the reference self-audit's FAIL (as the elementwise
  // ops' libm model leaves it); on a device the oracle must equal the device's capture.
  return make_quant_model(*q, *contract, d, golden_of(o), resolve_math(o, o.backend), o.backend != "emulated");
}

/// Refuses (UsageError, one line) --only a class a quantization op does not run (graph on host memory, as for the
/// elementwise ops) and --max-width below its block.
void refuse_empty_quant_checks(const AuditOptions& o, const PluginInfo& info, const ref::QuantOpSpec& q) {
  std::vector<CheckClass> can = quant_check_classes();
  const bool no_graph = !info.cuda();
  if (no_graph) can.erase(std::remove(can.begin(), can.end(), CheckClass::kGraph), can.end());
  if (o.only_class && std::find(can.begin(), can.end(), *o.only_class) == can.end()) {
    std::string list;
    for (CheckClass c : can) list += (list.empty() ? "" : ", ") + std::string(check_class_name(c));
    const std::string why = no_graph && *o.only_class == CheckClass::kGraph
                                ? "a host-memory subject has no CUDA graph to capture"
                                : "op " + q.name + " is a quantization op";
    throw UsageError("audit: --only " + o.only + " checks nothing here: " + why + " (classes that can run: " + list +
                     ")");
  }
  if (o.max_width && o.max_width < q.block_size && (!o.only_class || *o.only_class == CheckClass::kWidths))
    throw UsageError("audit: --max-width " + std::to_string(o.max_width) + " checks no width: op " + q.name +
                     "'s widths are multiples of its " + std::to_string(q.block_size) + "-element block (allowed: " +
                     std::to_string(q.block_size) + " to 1048576)");
}

/// Why class `c` can check nothing for this subject (its op, contract and memory), or "" when it can run.
std::string class_checks_nothing(CheckClass c, const PluginInfo& info, const OpModel& m) {
  switch (c) {
    case CheckClass::kDomain:
      if (m.inputs() != 2)
        return "op " + m.op->name + " has " + std::to_string(m.inputs()) +
               " inputs; the domain class enumerates the pairs of a 2-input op";
      break;
    case CheckClass::kStages:
      if (m.plan->inputs() < 3)
        return "op " + m.op->name + " has " + std::to_string(m.plan->inputs()) +
               " inputs; the stages class is for ops of 3 or more";
      if (m.plan->stages().empty()) return m.plan->no_stages_reason();
      break;
    case CheckClass::kPdl:
      if (!info.cuda()) return "a host-memory subject has no stream ordering to check";
      break;
    case CheckClass::kGraph:
      if (!info.cuda()) return "a host-memory subject has no CUDA graph to capture";
      break;
    case CheckClass::kBlocks:
    case CheckClass::kLayout:
      return "op " + m.op->name + " is not a quantization op (" + ref::quant_op_names() + ")";
    default:
      break;
  }
  return "";
}

/// Refuses (UsageError, one line) options that leave what they ask for nothing to check: --only a class that cannot
/// run for this subject, --max-width below the subject's vector.
void refuse_empty_checks(const AuditOptions& o, const PluginInfo& info, const OpModel& m) {
  if (o.only_class) {
    const std::string why = class_checks_nothing(*o.only_class, info, m);
    if (!why.empty()) {
      std::string can;
      for (CheckClass c : kAllCheckClasses)
        if (class_checks_nothing(c, info, m).empty()) can += (can.empty() ? "" : ", ") + std::string(check_class_name(c));
      throw UsageError("audit: --only " + o.only + " checks nothing here: " + why + " (classes that can run: " + can +
                       ")");
    }
  }
  const int64_t v = info.vector_elems();
  if (o.max_width && o.max_width < v && (!o.only_class || *o.only_class == CheckClass::kWidths))
    throw UsageError("audit: --max-width " + std::to_string(o.max_width) + " checks no width: the subject's widths are "
                     "multiples of its " + std::to_string(v) + "-element vector (allowed: " + std::to_string(v) +
                     " to 1048576)");
}

/// In this process: loads the subject, makes its runner and the reference models (verifying golden data). `o` gets
/// the resolved op, contract, backend and golden architecture.
Description describe_here(AuditOptions& o, const Subject& subject, std::unique_ptr<KernelRunner>* keep = nullptr,
                          std::unique_ptr<QuantRunner>* keep_quant = nullptr) {
  Description d;
  d.info = subject.load_info ? subject.load_info() : subject.info;
  if (!o.op.empty() && o.op != d.info.op)
    throw UsageError("audit: " + d.info.path + " implements op " + d.info.op + ", not " + o.op);
  d.op = o.op = d.info.op;
  if (const ref::QuantOpSpec* q = ref::find_quant_op(d.op)) {
    d.contract = o.contract = o.contract.empty() ? d.info.contract : o.contract;
    const auto contract = ref::parse_quant_contract(d.contract);
    if (!contract || !q->contract(*contract))
      throw UsageError("audit: op " + d.op + " has no contract " + d.contract + " (" + quant_contract_list(*q) + ")");
    d.backend = o.backend.empty() ? (d.info.cuda() ? "cuda" : "emulated") : o.backend;
    if ((d.backend == "cuda") != d.info.cuda())
      throw UsageError("audit: " + d.info.path + " takes " + memory_name(d.info.memory) + " memory; use --backend " +
                       (d.info.cuda() ? "cuda" : "emulated"));
    o.backend = d.backend;
    if (!subject.make_quant_runner)
      throw UsageError("audit: this subject has no runner for quantization op " + d.op);
    auto runner = subject.make_quant_runner();
    d.hardware = runner->hardware();
    o.arch = resolve_golden_arch(o.golden_dir.empty() ? default_golden_dir() : o.golden_dir, o.arch, runner->arch());
    d.arch = o.arch;
    refuse_empty_quant_checks(o, d.info, *q);
    for (ref::Dtype dt : o.dtypes)
      d.models.push_back(std::string(ref::dtype_name(dt)) + ": " + quant_model_for(o, dt).description);
    if (o.profile) d.throughput = hash_throughput();
    if (keep_quant) *keep_quant = std::move(runner);
    return d;
  }
  const ref::OpSpec* spec = ref::find_op(d.op);
  if (!spec) throw UsageError("audit: unknown op " + d.op + " (" + ref::op_names() + ")");
  d.contract = o.contract = o.contract.empty() ? d.info.contract : o.contract;
  const auto contract = ref::parse_contract(d.contract);
  if (!contract || !spec->contract(*contract))
    throw UsageError("audit: op " + d.op + " has no contract " + d.contract + " (fuseproof ops lists them)");
  d.backend = o.backend.empty() ? (d.info.cuda() ? "cuda" : "emulated") : o.backend;
  if ((d.backend == "cuda") != d.info.cuda())
    throw UsageError("audit: " + d.info.path + " takes " + memory_name(d.info.memory) + " memory; use --backend " +
                     (d.info.cuda() ? "cuda" : "emulated"));
  o.backend = d.backend;
  auto runner = subject.make_runner();
  d.hardware = runner->hardware();
  o.arch = resolve_golden_arch(o.golden_dir.empty() ? default_golden_dir() : o.golden_dir, o.arch, runner->arch());
  d.arch = o.arch;
  validate_shapes(*spec, o.extra_shapes, d.info.vector_elems());
  for (ref::Dtype dt : o.dtypes) {
    const OpModel m = model_for(o, dt, d.backend);
    if (dt == o.dtypes.front()) refuse_empty_checks(o, d.info, m);
    d.models.push_back(std::string(ref::dtype_name(dt)) + ": " + m.description);
  }
  if (o.profile) {
    d.throughput = runner->copy_throughput();
    for (auto& t : hash_throughput()) d.throughput.push_back(std::move(t));
  }
  if (keep) *keep = std::move(runner);
  return d;
}

uint32_t resolved_domain_biases(const AuditOptions& o, bool cuda) { return o.domain_biases ? o.domain_biases : (cuda ? 65536u : 1024u); }
int64_t resolved_max_width(const AuditOptions& o, bool cuda) { return o.max_width ? o.max_width : (cuda ? 65536 : 16384); }

/// One class on one dtype: `run` fills the result; the class, dtype, seconds and phases (--profile) are set here.
template <class Run>
CheckResult timed_class(CheckClass c, ref::Dtype d, const Run& run) {
  CheckResult r;
  r.cls = c;
  r.dtype = d;
  const auto tc = std::chrono::steady_clock::now();
  {
    const PhaseSinkScope profile(&r.phases);
    run(r);
  }
  r.seconds = seconds_since(tc);
  return r;
}

/// One class on one dtype, in this process.
CheckResult run_class_here(const AuditOptions& o, const PluginInfo& info, KernelRunner& runner, ref::Dtype d,
                           CheckClass c) {
  const OpModel model = model_for(o, d, o.backend);
  const auto abi = [](ref::Dtype t) {
    return t == ref::Dtype::kBf16 ? int32_t(FUSEPROOF_DTYPE_BF16) : int32_t(FUSEPROOF_DTYPE_FP16);
  };
  // Only a class that mixes dtypes sees the other dtype's model, and only when both dtypes were asked for: with one
  // --dtype, the subject is never called with the other.
  const ref::Dtype other_d = d == ref::Dtype::kBf16 ? ref::Dtype::kFp16 : ref::Dtype::kBf16;
  std::optional<OpModel> other;
  if (check_class_mixes_dtypes(c) && std::find(o.dtypes.begin(), o.dtypes.end(), other_d) != o.dtypes.end())
    other = model_for(o, other_d, o.backend);
  const CheckContext ctx{info, runner, model, o, abi(d), resolved_domain_biases(o, info.cuda()),
                         resolved_max_width(o, info.cuda()), other ? &*other : nullptr, abi(other_d)};
  return timed_class(c, d, [&](CheckResult& r) { run_check_class(c, ctx, r); });
}

/// One class of a quantization op on one dtype, in this process. The classes read the options themselves: the
/// backend's defaults of --domain-biases and --max-width are resolved here, as for the elementwise classes.
CheckResult run_quant_class_here(const AuditOptions& o, const PluginInfo& info, QuantRunner& runner, ref::Dtype d,
                                 CheckClass c) {
  const QuantModel model = quant_model_for(o, d);
  AuditOptions resolved = o;
  resolved.domain_biases = resolved_domain_biases(o, info.cuda());
  resolved.max_width = resolved_max_width(o, info.cuda());
  const auto abi = [](ref::Dtype t) {
    return t == ref::Dtype::kBf16 ? int32_t(FUSEPROOF_DTYPE_BF16) : int32_t(FUSEPROOF_DTYPE_FP16);
  };
  QuantContext ctx{info, runner, model, resolved, abi(d)};
  ctx.stage_rows = o.stage_rows;  // 0: the backend's default (quant_classes.cpp states it)
  // As for the elementwise ops: only a class that mixes dtypes sees the other dtype's model, when both were asked for.
  const ref::Dtype other_d = d == ref::Dtype::kBf16 ? ref::Dtype::kFp16 : ref::Dtype::kBf16;
  std::optional<QuantModel> other;
  if (check_class_mixes_dtypes(c) && std::find(o.dtypes.begin(), o.dtypes.end(), other_d) != o.dtypes.end()) {
    other = quant_model_for(o, other_d);
    ctx.other_model = &*other;
    ctx.other_abi_dtype = abi(other_d);
  }
  return timed_class(c, d, [&](CheckResult& r) { run_quant_class(c, ctx, r); });
}

/// The runners of one subject: the elementwise one or the quantization one, made in the process that runs the checks.
struct Runners {
  std::unique_ptr<KernelRunner> kernel;
  std::unique_ptr<QuantRunner> quant;
};

/// Class c on dtype d with whichever runner the subject has.
CheckResult run_any_class_here(const AuditOptions& o, const PluginInfo& info, Runners& runners, ref::Dtype d,
                               CheckClass c) {
  if (info.quant()) return run_quant_class_here(o, info, *runners.quant, d, c);
  return run_class_here(o, info, *runners.kernel, d, c);
}

/// A class's result as a child wrote it: nullopt when there is none, or it is malformed or of another class or dtype
/// (the subject wrote over it, or the child died while writing it): never a verdict.
std::optional<CheckResult> check_of_child(const json& result, CheckClass c, ref::Dtype d) {
  if (!result.is_object() || !result.contains("check")) return std::nullopt;
  try {
    CheckResult r = check_from_json(result["check"]);
    if (r.cls != c || r.dtype != d) return std::nullopt;
    return r;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

/// The child's description of the subject; false when it wrote none or a malformed one.
bool description_of_child(const json& result, Description& d) {
  if (!result.is_object() || !result.contains("info")) return false;
  try {
    d.info = info_from_json(result["info"]);
    d.op = result.at("op");
    d.contract = result.at("contract");
    d.backend = result.at("backend");
    d.hardware = result.at("hardware");
    d.arch = result.at("arch");
    d.models = result.at("models").get<std::vector<std::string>>();
    if (result.contains("throughput")) d.throughput = throughput_from_json(result["throughput"]);
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

json description_to_json(const Description& d) {
  return {{"info", info_to_json(d.info)}, {"op", d.op}, {"contract", d.contract}, {"backend", d.backend},
          {"hardware", d.hardware}, {"arch", d.arch}, {"models", d.models},
          {"throughput", throughput_to_json(d.throughput)}};
}

/// The spec file name of one class on one dtype in the spec folder ("domain_bf16").
std::string class_file(CheckClass c, ref::Dtype d) { return std::string(check_class_name(c)) + "_" + ref::dtype_name(d); }

/// The order the classes run in: first the single-dtype classes of each dtype, then the classes that mix dtypes (a
/// bug that one dtype's own classes see is named by them, not by a mixed class of the other dtype's run).
std::vector<std::pair<ref::Dtype, CheckClass>> class_order(const AuditOptions& opt,
                                                         const std::vector<CheckClass>& classes) {
  std::vector<std::pair<ref::Dtype, CheckClass>> order;
  for (const bool mixed : {false, true})
    for (ref::Dtype d : opt.dtypes)
      for (CheckClass c : classes)
        if ((!opt.only_class || *opt.only_class == c) && check_class_mixes_dtypes(c) == mixed) order.push_back({d, c});
  return order;
}

/// --call-timeout's value as the parser reads it back.
std::string call_timeout_text(const AuditOptions& o) {
  for (const OptionDef& d : option_table())
    if (d.key == "call_timeout") return option_number_text(o, d);
  return "";
}

/// A quantization op's line names the op and the contract too (the plugin's descriptor could claim another contract).
std::string reproduce_command(const AuditOptions& o, const Subject& subject, ref::Dtype d, CheckClass c) {
  const bool quant = ref::find_quant_op(o.op) != nullptr;
  return subject.reproduce_prefix + " --backend " + o.backend + " --dtype " + ref::dtype_name(d) + " --only " +
         check_class_name(c) + " --seed " + std::to_string(o.seed) + " --no-reference" +
         reproduce_options(o, quant ? std::vector<std::string>{"seed", "call_timeout"}
                                    : std::vector<std::string>{"seed", "call_timeout", "op"}) +
         " --call-timeout " + call_timeout_text(o);
}

void print_check(const AuditOptions& o, const CheckResult& r) {
  std::printf("  %-9s %s  %-4s  %llu cases, %llu mismatches%s (%.2f s)\n", check_class_name(r.cls),
              ref::dtype_name(r.dtype), check_status_name(r.status), (unsigned long long)r.cases,
              (unsigned long long)r.mismatches, r.stopped_early ? " (stopped early)" : "", r.seconds);
  if (!r.fault.empty()) std::printf("      FAULT: %s\n", r.fault.c_str());
  for (const auto& line : r.records) std::printf("      %s\n", line.c_str());
  if (r.status == CheckStatus::kFail) {
    if (r.mismatches > r.records.size())
      std::printf("      ... and %llu more\n", (unsigned long long)(r.mismatches - r.records.size()));
    if (r.vs_contract.total() > r.vs_contract.count(Distance::kExact))
      std::printf("      distance from the contract (ulps, %s): %s\n",
                  r.stopped_early ? "up to the early stop; --stop-after 0 for exact counts" : "every case",
                  r.vs_contract.line().c_str());
    std::printf("      reproduce: %s\n", r.reproduce.c_str());
  } else if (r.status == CheckStatus::kPass && r.cls != CheckClass::kRejection) {
    std::printf("      %s\n", no_errors_line(r, o.op, o.contract).c_str());
  }
  if (!r.scope.empty() && r.status != CheckStatus::kSkipped) std::printf("      scope: %s\n", r.scope.c_str());
  if (r.has_contract_vs_eager && r.status != CheckStatus::kSkipped)
    std::printf("      contract %s vs eager (ulps, over these cases): %s\n", o.contract.c_str(),
                r.contract_vs_eager.line().c_str());
  if (!r.contract_distances.empty() && r.status != CheckStatus::kSkipped)
    for (const std::string& line : contract_distance_lines(r)) std::printf("      %s\n", line.c_str());
  if (!r.note.empty()) std::printf("      %s\n", r.note.c_str());
  if (o.profile && r.status != CheckStatus::kSkipped) std::printf("      profile: %s\n", profile_line(r).c_str());
  std::fflush(stdout);
}

}  // namespace

std::string builtin_plugin_path(const std::string& op, const std::string& backend) {
  return builtin_plugin_path(op, "", backend);
}

std::string builtin_plugin_path(const std::string& op, const std::string& contract, const std::string& backend) {
  // A quantization op's first contract has the op's own name; its others carry the contract's.
  std::string stem = op;
  if (const ref::QuantOpSpec* q = ref::find_quant_op(op);
      q && !contract.empty() && contract != ref::quant_contract_name(q->contracts.front().contract))
    stem += "_" + contract;
  const std::string file = "lib" + stem + "_" + (backend == "cuda" ? "cuda" : "emulated") + ".so";
  std::error_code ec;
  const auto exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto p = exe.parent_path().parent_path() / "lib" / "plugins" / file;
    if (fs::exists(p, ec)) return p.string();
  }
  return std::string(FUSEPROOF_DEFAULT_PLUGIN_DIR) + "/" + file;
}

Subject plugin_subject(AuditOptions& o) {
  if (o.backend.empty() && o.plugin.empty()) o.backend = cuda_runner_available(nullptr) ? "cuda" : "emulated";
  if (o.plugin.empty() && o.op.empty()) throw UsageError("audit: --op or --plugin is required");
  std::error_code ec;
  const ref::QuantOpSpec* q = o.plugin.empty() ? ref::find_quant_op(o.op) : nullptr;
  if (q && !o.contract.empty()) {
    const auto c = ref::parse_quant_contract(o.contract);
    if (!c || !q->contract(*c))
      throw UsageError("audit: op " + o.op + " has no contract " + o.contract + " (" + quant_contract_list(*q) + ")");
  }
  const std::string path = o.plugin.empty() ? builtin_plugin_path(o.op, o.contract, o.backend) : o.plugin;
  if (q && !fs::is_regular_file(path, ec)) {
    // A contract without a built-in kernel on this backend (rcp-approx has no emulation): name those that exist.
    std::string built;
    for (const auto& c : q->contracts) {
      const char* name = ref::quant_contract_name(c.contract);
      if (fs::is_regular_file(builtin_plugin_path(o.op, name, o.backend), ec)) built += (built.empty() ? "" : ", ") + std::string(name);
    }
    throw UsageError("audit: no built-in " + o.backend + " kernel of op " + o.op + ", contract " +
                     (o.contract.empty() ? ref::quant_contract_name(q->contracts.front().contract) : o.contract) +
                     " (" + path + " not found); built-in " + o.backend + " kernels of " + o.op + ": " +
                     (built.empty() ? "none" : built));
  }
  if (!fs::is_regular_file(path, ec)) throw UsageError("audit: plugin " + path + " not found");
  Subject s;
  s.info.path = fs::absolute(path).string();
  s.info.op = o.op;
  const std::string op = o.op;
  auto plugin = std::make_shared<std::optional<Plugin>>();
  s.load_info = [plugin, path = s.info.path, op] {
    if (!*plugin) plugin->emplace(Plugin::load(path, op));
    return (*plugin)->info();
  };
  s.make_runner = [plugin, path = s.info.path, op]() -> std::unique_ptr<KernelRunner> {
    if (*plugin) {
      Plugin p = std::move(**plugin);
      plugin->reset();
      return std::make_unique<PluginRunner>(std::move(p));
    }
    return std::make_unique<PluginRunner>(Plugin::load(path, op));
  };
  s.make_quant_runner = [plugin, path = s.info.path, op]() -> std::unique_ptr<QuantRunner> {
    if (*plugin) {
      Plugin p = std::move(**plugin);
      plugin->reset();
      return std::make_unique<PluginQuantRunner>(std::move(p));
    }
    return std::make_unique<PluginQuantRunner>(Plugin::load(path, op));
  };
  s.child_command = {audit_child_exe(), "audit", "--plugin", s.info.path};
  s.reproduce_prefix = "fuseproof audit --plugin " + quote_path(s.info.path);
  return s;
}

AuditResult run_audit(const AuditOptions& opt_in, const Subject& subject) {
  const auto t0 = std::chrono::steady_clock::now();
  AuditOptions opt = opt_in;
  AuditResult res;
  res.seed = opt.seed;
  res.command = opt.command;
  res.isolated = opt.isolate;
  res.call_timeout_s = opt.call_timeout_s;
  std::string dir;
  struct Cleanup {
    std::string* d;
    ~Cleanup() {
      if (!d->empty()) remove_tree(*d);
    }
  } cleanup{&dir};

  // Where the subject runs: each class in a child of its own (isolation), every class in one child (--no-isolation),
  // or here (a subject no fresh process can re-create: an in-process Python callable). A child that ends without a
  // result is never a pass: this process prints every verdict.
  const bool one_child = !opt.isolate && !subject.child_command.empty();
  // The classes of the op; before the description names the op (--plugin alone), every class of either kind: the
  // one child of --no-isolation runs those of its op only, and the order is made again once the op is known.
  std::vector<CheckClass> classes = classes_of_op(opt.op);
  if (opt.op.empty()) classes.insert(classes.end(), std::begin(kQuantOnlyCheckClasses), std::end(kQuantOnlyCheckClasses));
  std::vector<std::pair<ref::Dtype, CheckClass>> order = class_order(opt, classes);
  ChildOutcome batch;  // the one child of --no-isolation
  json batch_result;

  // 1. Describe: load the subject, name its hardware, build the reference models (golden data verified).
  Description desc;
  Runners local;
  if (opt.isolate || one_child) {
    dir = make_spec_dir();
    ChildOutcome co;
    json result;
    if (one_child) {
      json classes = json::array();
      for (const auto& [d, c] : order) classes.push_back({{"class", check_class_name(c)}, {"dtype", ref::dtype_name(d)}});
      batch_result = run_isolated(subject.child_command,
                                  {{"task", "all"}, {"classes", classes}, {"options", options_to_json(opt)}}, dir,
                                  "all", opt.call_timeout_s, &batch);
      co = batch;
      result = read_child_result(dir + "/describe.json");
    } else {
      result = run_isolated(subject.child_command, {{"task", "describe"}, {"options", options_to_json(opt)}}, dir,
                            "describe", opt.call_timeout_s, &co);
    }
    res.describe_seconds = co.seconds;
    if ((co.exit_code == 0 || one_child) && description_of_child(result, desc)) {
    } else if (is_setup_error(co, one_child ? batch_result : result)) {
      rethrow_child_error(co, one_child ? batch_result : result);
    } else {
      res.plugin = subject.info;
      res.load_fault = fault_line(co, opt.call_timeout_s) + " (while loading the subject)";
      res.passed = false;
      std::printf("fuseproof audit: %s\n  FAIL: %s\n", subject.info.path.c_str(), res.load_fault.c_str());
      std::printf("VERDICT: FAIL (the subject could not be loaded)\n");
      res.seconds = seconds_since(t0);
      return res;
    }
    opt.op = desc.op;
    opt.contract = desc.contract;
    opt.backend = desc.backend;
    opt.arch = desc.arch;
  } else {
    desc = describe_here(opt, subject, &local.kernel, &local.quant);
  }
  order = class_order(opt, classes_of_op(desc.op));
  res.plugin = desc.info;
  res.op = desc.op;
  res.contract = desc.contract;
  res.backend = desc.backend;
  res.hardware = desc.hardware;
  res.golden = "golden/" + desc.arch;
  res.models = desc.models;
  for (const auto& t : desc.throughput) res.throughput.emplace_back(t.what, t.gb_per_s);
  const PluginInfo& info = desc.info;
  std::printf("fuseproof audit: %s\n  subject %s (%s memory, %d-byte vectors, ABI v%u)\n  op %s, contract %s%s\n"
              "  backend %s on %s\n",
              info.kernel_name.c_str(), info.path.c_str(), memory_name(info.memory), info.vector_bytes,
              info.abi_version, desc.op.c_str(), desc.contract.c_str(),
              desc.contract == info.contract ? " (the subject's claim)" : (" (--contract; the subject claims " + info.contract + ")").c_str(),
              desc.backend.c_str(), res.hardware.c_str());
  for (const auto& m : desc.models) std::printf("  reference %s\n", m.c_str());
  // Class groups (docs/AUDIT.md, "Class groups"): a dtype's classes run in order in one child process, which starts
  // the subject's runtime (a CUDA context, the plugin, the op's models) once and keeps what a runner builds for more
  // than one class (a 2-input op's 8 GiB expected table for widths, shapes and domain). The child stops after the
  // first class that is not clean. A class it did not report is the one it died in (a crash or hang, that class's
  // fault) or one after that class or the stop, run in a child of its own as usual. A class that FAILs after the
  // group's first runs again alone. The classes that mix dtypes (history) keep a child of their own.
  struct ClassGroup {
    std::vector<CheckClass> classes;
    std::map<CheckClass, CheckResult> results;
    std::optional<CheckClass> died_in;
    ChildOutcome co;
    double unreported_seconds = 0;  ///< the child's wall time outside the classes it reported
    std::shared_future<void> done;  ///< run_group on a thread of its own, so that clean results stream as they come
    std::chrono::steady_clock::time_point started;
    std::atomic<double> start_seconds{0};  ///< the first class's time outside its clock, when taken before the end
  };
  std::map<ref::Dtype, ClassGroup> groups;  // made here, before any lane: a lane touches only its own dtype's entry
  if (opt.isolate && opt.class_groups && !one_child && !opt.first_fail) {
    for (const auto& [d, c] : order)
      if (!check_class_mixes_dtypes(c)) groups[d].classes.push_back(c);
    for (auto it = groups.begin(); it != groups.end();) it = it->second.classes.size() < 2 ? groups.erase(it) : std::next(it);
  }
  res.single_child = one_child;
  res.class_groups = !groups.empty();
  std::printf("  isolation: %s; call time limit %g s\n",
              opt.isolate && !groups.empty()
                  ? "each dtype's classes in order in one child process (a class after a fault, a mismatch or a "
                    "failed check in a child of its own; a class failing after the group's first confirmed alone); "
                    "history in a child of its own"
              : opt.isolate ? "each check class in a child process of its own"
              : one_child ? "every check class in one child process (--no-isolation)"
                          : "none (an in-process subject)",
              opt.call_timeout_s);
  if (opt.profile) {
    std::printf("  profile: this machine's rates, measured now (GB/s):");
    for (size_t i = 0; i < res.throughput.size(); ++i)
      std::printf("%s %s %.2f", i ? ";" : "", res.throughput[i].first.c_str(), res.throughput[i].second);
    std::printf("\n");
  }
  std::fflush(stdout);

  if (opt.on_described) opt.on_described(opt.op, opt.contract);

  // 2. Every class on every dtype, in class_order. One class on one dtype, in its child process (or here): no
  // printing, nothing shared but the spec folder.
  std::string batch_ended_in;  // --no-isolation: the first class its child did not report
  const auto run_group = [&](ref::Dtype d, ClassGroup& g) {
    json names = json::array();
    for (const CheckClass c : g.classes) names.push_back(check_class_name(c));
    const json spec = {{"task", "class"}, {"classes", names}, {"dtype", ref::dtype_name(d)},
                       {"options", options_to_json(opt)}};
    const json result = run_isolated(subject.child_command, spec, dir, std::string("group_") + ref::dtype_name(d),
                                     opt.call_timeout_s, &g.co);
    if (is_setup_error(g.co, result)) rethrow_child_error(g.co, result);
    // Stopped after a class that was not clean: the classes after it are run each in a child of their own.
    const bool stopped = g.co.exit_code == 0 && result.is_object() && result.contains("stopped_after");
    double reported = 0;
    std::optional<CheckClass> last;  // the last class the child reported
    for (const CheckClass c : g.classes) {
      const std::optional<CheckResult> got = check_of_child(read_child_result(dir + "/" + class_file(c, d) + ".json"), c, d);
      if (!got) {  // else the first class the child did not report is the one it ended in, whatever its exit status
        if (!stopped) g.died_in = c;
        break;
      }
      reported += got->seconds;
      g.results[c] = *got;
      last = c;
    }
    // The child's time outside the classes' clocks: its start, given to the first class when that was taken as it
    // came (run_one), and the rest (the start otherwise, the teardown) to the last class it reported, which always
    // waits for the child's end.
    g.unreported_seconds = std::max(0.0, g.co.seconds - reported - g.start_seconds.load());
    if (!g.died_in && last) g.results[*last].outside_seconds = g.unreported_seconds;
  };
  const auto run_one = [&](ref::Dtype d, CheckClass c) {
    CheckResult r;
    r.cls = c;
    r.dtype = d;
    std::optional<CheckResult> grouped;  // its FAIL in the group's child, when it runs again alone
    std::string grouped_after;            // the group's classes that ran before it there
    const auto g = groups.find(d);
    if (g != groups.end() && std::find(g->second.classes.begin(), g->second.classes.end(), c) != g->second.classes.end()) {
      ClassGroup& tg = g->second;
      if (!tg.done.valid()) {  // the group's first class asked for: its child starts
        tg.started = std::chrono::steady_clock::now();
        tg.done = std::async(std::launch::async, [run_group, d, &tg] { run_group(d, tg); }).share();
      }
      // A clean result is taken as soon as the group's child has written it, so that the classes print as they end;
      // the group's last class and a class that is not clean wait for the child's end (the rules below need it).
      if (c != tg.classes.back()) {
        const std::string path = dir + "/" + class_file(c, d) + ".json";
        while (tg.done.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready) {
          const std::optional<CheckResult> got = check_of_child(read_child_result(path), c, d);
          if (!got) continue;
          if (!ended_clean(*got)) break;
          r = *got;
          if (c == tg.classes.front()) {
            r.outside_seconds = std::max(0.0, seconds_since(tg.started) - r.seconds);
            tg.start_seconds = r.outside_seconds;
          }
          settle_check(r);
          return r;
        }
      }
      tg.done.get();  // rethrows what run_group threw (a setup error of the child)
      bool decided = true;  // else: after the class the group's child died in, this class gets a child of its own
      if (const auto it = tg.results.find(c); it != tg.results.end()) {
        r = it->second;
      } else if (tg.died_in == c) {
        r.fault = fault_line(tg.co, opt.call_timeout_s) + " (in the child running this dtype's class group; " +
                  "the group's later classes ran each in a child of its own)";
        r.seconds = tg.unreported_seconds;
        r.scope = "stopped by the fault; the class's other cases did not run";
      } else {
        decided = false;
      }
      if (decided) {
        settle_check(r);
        // A class after the group's first FAILed in a process where other classes had called the subject: it runs
        // again alone (what its reproduce command does), unless it hung (a second hang proves nothing more).
        if (r.status != CheckStatus::kFail || c == tg.classes.front() || (tg.died_in == c && tg.co.timed_out)) {
          if (r.status == CheckStatus::kFail) r.reproduce = reproduce_command(opt, subject, d, c);
          return r;
        }
        grouped = r;
        grouped_after.clear();
        for (const CheckClass e : tg.classes) {
          if (e == c) break;
          grouped_after += (grouped_after.empty() ? "" : ", ") + std::string(check_class_name(e));
        }
        r = CheckResult{};
        r.cls = c;
        r.dtype = d;
      }
    }
    if (opt.isolate || one_child) {
      ChildOutcome co;
      const std::string name = class_file(c, d);
      json result;
      if (one_child) {
        co = batch;
        result = read_child_result(dir + "/" + name + ".json");
      } else {
        const json spec = {{"task", "class"}, {"class", check_class_name(c)}, {"dtype", ref::dtype_name(d)},
                           {"options", options_to_json(opt)}};
        result = run_isolated(subject.child_command, spec, dir, name, opt.call_timeout_s, &co);
      }
      const json& status_of = one_child ? batch_result : result;
      const std::optional<CheckResult> got = check_of_child(result, c, d);
      if (got && (co.exit_code == 0 || one_child)) {
        r = *got;
        if (!one_child) r.outside_seconds = std::max(0.0, co.seconds - r.seconds);
        // The one child reported every class, then ended abnormally (a crash in the subject's teardown).
        if (one_child && co.exit_code != 0 && std::make_pair(d, c) == order.back() && r.fault.empty())
          r.fault = "the child process running every class (--no-isolation) ended with " +
                    (co.signal ? signal_description(co.signal) : "exit " + std::to_string(co.exit_code)) +
                    " after its last result";
      } else if (is_setup_error(co, status_of)) {
        rethrow_child_error(co, status_of);
      } else if (one_child && !batch_ended_in.empty()) {
        r.fault = "not run: the child process running every class (--no-isolation) ended in " + batch_ended_in;
        r.scope = "not run";
      } else {
        r.fault = fault_line(co, opt.call_timeout_s);
        if (!result.is_null() && !got) r.fault += "; its result file was malformed";
        r.seconds = co.seconds;
        r.scope = "stopped by the fault; the class's other cases did not run";
        if (one_child) {
          r.fault += " (every class in one child process: --no-isolation)";
          batch_ended_in = std::string(check_class_name(c)) + " " + ref::dtype_name(d) + " (" +
                           (co.signal ? signal_description(co.signal) : "exit " + std::to_string(co.exit_code)) + ")";
        }
      }
    } else {
      r = run_any_class_here(opt, info, local, d, c);
    }
    settle_check(r);
    if (grouped) {
      const std::string first = "it FAILed first in the child of its class group, after " + grouped_after;
      if (r.status == CheckStatus::kFail) {
        r.note += (r.note.empty() ? "" : "; ") + first + ", and the same way alone in a child of its own (this report)";
      } else {
        // Alone it passes: the failure needs the calls made before it in one process (state the subject keeps).
        const CheckResult alone = r;
        r = *grouped;
        r.note += (r.note.empty() ? "" : "; ") + first + ", and PASSED alone in a child of its own (" +
                  std::to_string(alone.cases) + " cases): the subject's outputs depend on the calls made before them " +
                  "in its process; `--only` runs the class alone, the whole audit reproduces it";
      }
    }
    if (r.status == CheckStatus::kFail) r.reproduce = reproduce_command(opt, subject, d, c);
    return r;
  };
  // Side by side (--lanes 2): each dtype's single-dtype classes in a thread of their own, each class still in its own
  // child; the results are printed in the usual order as they come. Not with --first-fail, whose skips need the order.
  const bool side_by_side = opt.isolate && !opt.first_fail && opt.dtypes.size() == 2 &&
                            (opt.lanes ? opt.lanes : (desc.backend == "cuda" ? 2u : 1u)) == 2;
  std::vector<std::future<CheckResult>> ahead(order.size());
  std::vector<std::vector<std::pair<size_t, std::promise<CheckResult>>>> lane_work;
  if (side_by_side) {
    for (const ref::Dtype lane_dtype : opt.dtypes) {
      auto& work = lane_work.emplace_back();
      for (size_t i = 0; i < order.size(); ++i)
        if (order[i].first == lane_dtype && !check_class_mixes_dtypes(order[i].second)) {
          work.emplace_back(i, std::promise<CheckResult>());
          ahead[i] = work.back().second.get_future();
        }
    }
  }
  // Worker 0 (this thread) prints the results in order; workers 1.. are the lanes. No lane outlives the call.
  const auto print_in_order = [&] {
    for (size_t i = 0; i < order.size(); ++i) {
      const ref::Dtype d = order[i].first;
      const CheckClass c = order[i].second;
      CheckResult r;
      if (ahead[i].valid()) {
        r = ahead[i].get();
      } else if (opt.first_fail && !res.passed) {
        r.cls = c;
        r.dtype = d;
        r.status = CheckStatus::kSkipped;
        r.note = "not run: after the first failure (--first-fail)";
      } else {
        r = run_one(d, c);
      }
      if (r.status == CheckStatus::kFail) res.passed = false;
      if (r.status == CheckStatus::kIncomplete) res.complete = false;
      print_check(opt, r);
      res.checks.push_back(std::move(r));
    }
  };
  run_workers(unsigned(lane_work.size()) + 1, [&](unsigned w) {
    if (w == 0) return print_in_order();
    for (auto& [i, promise] : lane_work[w - 1]) {
      try {
        promise.set_value(run_one(order[i].first, order[i].second));
      } catch (...) {
        promise.set_exception(std::current_exception());
      }
    }
  });
  res.seconds = seconds_since(t0);
  if (opt.profile && opt.isolate) {
    double clocks = 0, outside = 0;
    for (const CheckResult& c : res.checks) clocks += c.seconds, outside += c.outside_seconds;
    std::printf("  profile: %.1f s in all: the describe child %.2f s; the classes' own clocks %.2f s and their child "
                "processes outside them %.2f s (sums over %s)\n", res.seconds, res.describe_seconds, clocks, outside,
                side_by_side ? "both lanes, which run side by side" : "the classes, which run one after another");
  }
  // Every class skipped (--only pdl or graph on the host): nothing was judged, so it is not a pass.
  if (std::none_of(res.checks.begin(), res.checks.end(),
                   [](const CheckResult& c) { return c.status == CheckStatus::kPass || c.status == CheckStatus::kFail; }))
    res.complete = false;
  const CheckResult* k = res.killed_by();
  if (k)
    std::printf("VERDICT: FAIL (%s): first failure in %s %s, %llu mismatches%s\n", info.kernel_name.c_str(),
                check_class_name(k->cls), ref::dtype_name(k->dtype), (unsigned long long)k->mismatches,
                k->fault.empty() ? "" : ", a fault");
  else
    std::printf("VERDICT: %s (%s), %.1f s\n", res.verdict().c_str(), info.kernel_name.c_str(), res.seconds);
  return res;
}

int run_audit_child(const std::string& spec_path, const Subject& subject) {
  die_with_parent();
  json out;
  int status = kExitPass;
  try {
    std::ifstream in(spec_path);
    const json spec = json::parse(in);
    AuditOptions o = options_from_json(spec.at("options"));
    o.isolate = false;
    if (spec.at("task") == "describe") {
      out = description_to_json(describe_here(o, subject));
    } else if (spec.at("task") == "all") {
      // --no-isolation: the description and every class in this one process, each result in a file of its own as
      // soon as it is known, so that the parent keeps what this process found before it died.
      const std::string dir = fs::path(spec_path).parent_path().string();
      Runners runners;
      const Description d = describe_here(o, subject, &runners.kernel, &runners.quant);
      write_child_result(dir + "/describe.json", description_to_json(d));
      const std::vector<CheckClass> of_op = classes_of_op(d.op);
      for (const json& item : spec.at("classes")) {
        const auto cls = parse_check_class(item.at("class"));
        const auto dt = ref::parse_dtype(item.at("dtype").get<std::string>());
        if (!cls || !dt) throw UsageError("audit: malformed child spec " + spec_path);
        if (std::find(of_op.begin(), of_op.end(), *cls) == of_op.end()) continue;  // a class of the other kind of op
        CheckResult r = run_any_class_here(o, d.info, runners, *dt, *cls);
        write_child_result(dir + "/" + class_file(*cls, *dt) + ".json", {{"check", check_to_json(r)}});
        settle_check(r);
        if (o.first_fail && r.status == CheckStatus::kFail) break;  // the parent skips the rest
      }
      out = json::object();
    } else {
      const PluginInfo info = subject.load_info ? subject.load_info() : subject.info;
      Runners runners;
      if (info.quant()) runners.quant = subject.make_quant_runner();
      else runners.kernel = subject.make_runner();
      const auto dt = ref::parse_dtype(spec.at("dtype").get<std::string>());
      if (!dt) throw UsageError("audit: malformed child spec " + spec_path);
      if (spec.contains("classes")) {
        // A class group (docs/AUDIT.md, "Class groups"): the classes of one dtype in order, on one runner (its
        // expected tables kept from class to class), each result in a file of its own as soon as it is known; the
        // parent runs any class this process did not report in a child of its own.
        // A class that is not clean (a fault, after which a CUDA context may be lost; a mismatch; a failed check)
        // ends the group here, so that no later class is judged in the state it left.
        const std::string dir = fs::path(spec_path).parent_path().string();
        out = json::object();
        for (const json& item : spec.at("classes")) {
          const auto cls = parse_check_class(item.get<std::string>());
          if (!cls) throw UsageError("audit: malformed child spec " + spec_path);
          const CheckResult r = run_any_class_here(o, info, runners, *dt, *cls);
          write_child_result(dir + "/" + class_file(*cls, *dt) + ".json", {{"check", check_to_json(r)}});
          if (!ended_clean(r)) {
            out["stopped_after"] = check_class_name(*cls);
            break;
          }
        }
      } else {
        const auto cls = parse_check_class(spec.at("class"));
        if (!cls) throw UsageError("audit: malformed child spec " + spec_path);
        out = {{"check", check_to_json(run_any_class_here(o, info, runners, *dt, *cls))}};
      }
    }
  } catch (const std::exception& e) {
    status = exit_status_of(e);
    out = {{"error", e.what()}};
    std::fprintf(stderr, "%s\n", e.what());
  }
  write_child_result(spec_path, out);
  return status;
}

}  // namespace fuseproof::audit
