// audit_engine.cpp: describes the subject, then runs each check class (in a child process of its own when isolating)
// and assembles the verdict.
#include "audit/audit_engine.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "audit/audit_isolation.h"
#include "audit/call_watch.h"
#include "audit/check_classes.h"
#include "common/exit_status.h"
#include "common/remove_tree.h"

namespace fuseproof::audit {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

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
  DomainBlock domain_block(int32_t d, const std::vector<uint16_t>& b) override { return inner_->domain_block(d, b); }
  std::optional<CallOutcome> call_after_producer(const CallSpec& s, const std::vector<uint16_t>& sx,
                                                 const std::vector<uint16_t>& sb, int ms) override {
    return inner_->call_after_producer(s, sx, sb, ms);
  }
  LargeOutcome large_call(const LargeSpec& s, const ChunkCheck& c) override { return inner_->large_call(s, c); }
  uint64_t memory_available() const override { return inner_->memory_available(); }
  std::string hardware() const override { return inner_->hardware(); }

 private:
  Plugin plugin_;
  std::unique_ptr<KernelRunner> inner_;
};

json shapes_json(const std::vector<Shape>& v) {
  json a = json::array();
  for (const auto& s : v) a.push_back({{"rows", s.rows}, {"width", s.width}, {"why", s.why}});
  return a;
}

json options_json(const AuditOptions& o) {
  json dt = json::array();
  for (ref::Dtype d : o.dtypes) dt.push_back(ref::dtype_name(d));
  return {{"op", o.op}, {"plugin", o.plugin}, {"backend", o.backend}, {"dtypes", dt},
          {"only", o.only ? check_class_name(*o.only) : ""}, {"seed", o.seed}, {"tanh_model", o.tanh_model},
          {"domain_biases", o.domain_biases}, {"max_width", o.max_width}, {"property_cases", o.property_cases},
          {"shapes", shapes_json(o.shapes)}, {"default_shapes", o.default_shapes}, {"stop_after", o.stop_after},
          {"records", o.records}, {"pdl_delay_ms", o.pdl_delay_ms}, {"call_timeout_s", o.call_timeout_s},
          {"golden_dir", o.golden.dir}, {"golden_build_dir", o.golden.build_dir}, {"command", o.command}};
}

AuditOptions options_from_json(const json& j) {
  AuditOptions o;
  o.op = j.at("op");
  o.plugin = j.at("plugin");
  o.backend = j.at("backend");
  o.dtypes.clear();
  for (const auto& d : j.at("dtypes")) o.dtypes.push_back(*ref::parse_dtype(d.get<std::string>()));
  if (!j.at("only").get<std::string>().empty()) o.only = parse_check_class(j.at("only"));
  o.seed = j.at("seed");
  o.tanh_model = j.at("tanh_model");
  o.domain_biases = j.at("domain_biases");
  o.max_width = j.at("max_width");
  o.property_cases = j.at("property_cases");
  for (const auto& s : j.at("shapes")) o.shapes.push_back({s.at("rows"), s.at("width"), s.at("why")});
  o.default_shapes = j.at("default_shapes");
  o.stop_after = j.at("stop_after");
  o.records = j.at("records");
  o.pdl_delay_ms = j.at("pdl_delay_ms");
  o.call_timeout_s = j.at("call_timeout_s");
  o.golden.dir = j.at("golden_dir");
  o.golden.build_dir = j.at("golden_build_dir");
  o.command = j.at("command");
  o.isolate = false;
  return o;
}

json check_json(const CheckResult& c) {
  return {{"class", check_class_name(c.cls)}, {"dtype", ref::dtype_name(c.dtype)}, {"status", c.status},
          {"cases", c.cases}, {"mismatches", c.mismatches}, {"stopped_early", c.stopped_early},
          {"distinct_expected", c.distinct_expected}, {"records", c.records}, {"fault", c.fault},
          {"scope", c.scope}, {"note", c.note}, {"seconds", c.seconds}};
}

CheckResult check_from_json(const json& j) {
  CheckResult c;
  c.cls = *parse_check_class(j.at("class"));
  c.dtype = *ref::parse_dtype(j.at("dtype").get<std::string>());
  c.status = j.at("status");
  c.cases = j.at("cases");
  c.mismatches = j.at("mismatches");
  c.stopped_early = j.at("stopped_early");
  c.distinct_expected = j.at("distinct_expected");
  c.records = j.at("records").get<std::vector<std::string>>();
  c.fault = j.at("fault");
  c.scope = j.at("scope");
  c.note = j.at("note");
  c.seconds = j.at("seconds");
  return c;
}

json info_json(const PluginInfo& i) {
  return {{"path", i.path}, {"sha256", i.sha256}, {"kernel_name", i.kernel_name}, {"op", i.op},
          {"abi_version", i.abi_version}, {"memory", i.memory}, {"vector_bytes", i.vector_bytes}};
}

PluginInfo info_from_json(const json& j) {
  PluginInfo i;
  i.path = j.at("path");
  i.sha256 = j.at("sha256");
  i.kernel_name = j.at("kernel_name");
  i.op = j.at("op");
  i.abi_version = j.at("abi_version");
  i.memory = j.at("memory");
  i.vector_bytes = j.at("vector_bytes");
  return i;
}

/// What the describe step learns: the subject, its hardware, the reference models.
struct Description {
  PluginInfo info;
  std::string backend;
  std::string hardware;
  std::vector<std::string> models;
};

ref::TanhModel resolve_tanh(const AuditOptions& o, const std::string& backend) {
  const std::string name = o.tanh_model.empty() ? (backend == "cuda" ? "cuda" : "libm") : o.tanh_model;
  const auto t = ref::parse_tanh_model(name);
  if (!t) throw UsageError("audit: unknown --tanh-model " + name + " (cuda, libm, exact)");
  return *t;
}

/// In this process: loads the subject, makes its runner and the reference models (verifying golden data).
Description describe_here(const AuditOptions& o, const Subject& subject, std::unique_ptr<KernelRunner>* keep = nullptr) {
  Description d;
  d.info = subject.load_info ? subject.load_info() : subject.info;
  d.backend = o.backend.empty() ? (d.info.cuda() ? "cuda" : "emulated") : o.backend;
  if ((d.backend == "cuda") != d.info.cuda())
    throw UsageError("audit: " + d.info.path + " takes " + memory_name(d.info.memory) + " memory; use --backend " +
                     (d.info.cuda() ? "cuda" : "emulated"));
  auto runner = subject.make_runner();
  d.hardware = runner->hardware();
  const ref::TanhModel tanh = resolve_tanh(o, d.backend);
  for (ref::Dtype dt : o.dtypes)
    d.models.push_back(std::string(ref::dtype_name(dt)) + ": " + make_expected_model(dt, tanh, o.golden).description);
  if (keep) *keep = std::move(runner);
  return d;
}

/// The class's resolved defaults.
uint32_t resolved_domain_biases(const AuditOptions& o, bool cuda) { return o.domain_biases ? o.domain_biases : (cuda ? 65536u : 1024u); }
int64_t resolved_max_width(const AuditOptions& o, bool cuda) { return o.max_width ? o.max_width : (cuda ? 65536 : 16384); }

/// One class on one dtype, in this process.
CheckResult run_class_here(const AuditOptions& o, const PluginInfo& info, KernelRunner& runner, ref::Dtype d,
                           CheckClass c, const std::string& backend) {
  const ExpectedModel model = make_expected_model(d, resolve_tanh(o, backend), o.golden);
  const CheckContext ctx{info, runner, model, o,
                         d == ref::Dtype::kBf16 ? int32_t(FUSEPROOF_DTYPE_BF16) : int32_t(FUSEPROOF_DTYPE_FP16),
                         resolved_domain_biases(o, info.cuda()), resolved_max_width(o, info.cuda())};
  CheckResult r;
  r.cls = c;
  r.dtype = d;
  const auto tc = std::chrono::steady_clock::now();
  switch (c) {
    case CheckClass::kRejection: check_rejection(ctx, r); break;
    case CheckClass::kExtreme: check_extreme(ctx, r); break;
    case CheckClass::kProperty: check_property(ctx, r); break;
    case CheckClass::kWidths: check_widths(ctx, r); break;
    case CheckClass::kShapes: check_shapes(ctx, r); break;
    case CheckClass::kDomain: check_domain(ctx, r); break;
    case CheckClass::kPdl: check_pdl(ctx, r); break;
  }
  r.seconds = seconds_since(tc);
  return r;
}

/// Status from what the class found.
void settle(CheckResult& r) {
  if (r.status == "skipped") return;
  if (!r.fault.empty()) {
    r.status = "fail";
    return;
  }
  if (r.mismatches) {
    r.status = "fail";
    return;
  }
  if (r.cases == 0) {
    r.status = "incomplete";
    r.note = "ran zero cases" + (r.note.empty() ? "" : "; " + r.note);
    return;
  }
  r.status = "pass";
  // A check whose expected outputs are all one value could not have failed: that is a defect of the battery.
  if (r.cls != CheckClass::kRejection && r.distinct_expected < 2) {
    r.status = "fail";
    r.records.push_back("audit defect: every expected output was the same pattern; the check could not fail");
  }
}

std::string reproduce_command(const AuditOptions& o, const Subject& subject, const std::string& backend, ref::Dtype d,
                              CheckClass c) {
  std::string cmd = subject.reproduce_prefix + " --backend " + backend + " --dtype " + ref::dtype_name(d) + " --only " +
                    check_class_name(c) + " --seed " + std::to_string(o.seed) + " --no-reference";
  if (o.domain_biases) cmd += " --domain-biases " + std::to_string(o.domain_biases);
  if (o.max_width) cmd += " --max-width " + std::to_string(o.max_width);
  if (!o.tanh_model.empty()) cmd += " --tanh-model " + o.tanh_model;
  if (!o.shapes.empty()) {
    std::string list;
    for (const auto& s : o.shapes) list += (list.empty() ? "" : ",") + std::to_string(s.rows) + "x" + std::to_string(s.width);
    cmd += " --shapes " + list;
  }
  if (!o.default_shapes) cmd += " --no-default-shapes";
  cmd += " --call-timeout " + std::to_string(int(o.call_timeout_s));
  return cmd;
}

/// A child that ended without a result: the class FAILs with what the heartbeat and its output say.
std::string fault_line(const ChildOutcome& co, double call_timeout_s) {
  std::string what;
  if (co.timed_out) {
    char b[64];
    std::snprintf(b, sizeof b, "%.0f", call_timeout_s);
    what = std::string("hang: the call did not return within ") + b + " s (--call-timeout)";
  } else if (co.stalled) {
    what = "stall: nothing heard from the class for the stall limit outside any call";
  } else if (co.signal) {
    what = "crash: " + signal_description(co.signal);
  } else {
    what = "crash: exit " + std::to_string(co.exit_code) + " without a result";
  }
  what += co.last_call.empty() ? " (outside any call into the subject)" : " in call " + co.last_call;
  if (!co.output_tail.empty()) what += "; last output: " + co.output_tail;
  return what;
}

std::string spec_dir() {
  char tmpl[] = "/tmp/fuseproof-audit-XXXXXX";
  const char* d = mkdtemp(tmpl);
  if (!d) throw std::runtime_error("audit: cannot create a temporary directory under /tmp");
  return d;
}

/// Writes the spec, runs the child, returns its result JSON (null when it produced none) and its outcome.
json run_isolated(const Subject& subject, const json& spec, const std::string& dir, const std::string& name,
                  double call_timeout_s, double stall_s, ChildOutcome* outcome) {
  const std::string spec_path = dir + "/" + name + ".json", result_path = spec_path + ".result.json";
  {
    std::ofstream f(spec_path);
    f << spec.dump();
    if (!f) throw std::runtime_error("audit: cannot write " + spec_path);
  }
  std::vector<std::string> argv = subject.child_command;
  argv.push_back("--child-spec");
  argv.push_back(spec_path);
  *outcome = run_child(argv, dir + "/" + name + ".log", call_timeout_s, stall_s);
  std::ifstream in(result_path);
  if (!in) return nullptr;
  json j = json::parse(in, nullptr, false);
  return j.is_discarded() ? json(nullptr) : j;
}

/// A child's setup error (exit 2, 3, 4 with one line on stderr) becomes the same error here.
[[noreturn]] void rethrow_child_error(const ChildOutcome& co, const json& result) {
  const std::string msg = result.is_object() && result.contains("error") ? result["error"].get<std::string>()
                                                                         : "audit: child failed: " + co.output_tail;
  if (co.exit_code == kExitIncomplete) throw MissingDataError(msg);
  if (co.exit_code == kExitCorrupt) throw CorruptDataError(msg);
  throw UsageError(msg);
}

constexpr double kStallSeconds = 1800;  // a class that says nothing for 30 minutes outside any call is stuck

}  // namespace

const char* check_class_name(CheckClass c) {
  switch (c) {
    case CheckClass::kRejection: return "rejection";
    case CheckClass::kExtreme: return "extreme";
    case CheckClass::kProperty: return "property";
    case CheckClass::kWidths: return "widths";
    case CheckClass::kShapes: return "shapes";
    case CheckClass::kDomain: return "domain";
    default: return "pdl";
  }
}

std::optional<CheckClass> parse_check_class(const std::string& s) {
  for (CheckClass c : kAllCheckClasses)
    if (s == check_class_name(c)) return c;
  return std::nullopt;
}

std::string check_class_list() {
  std::string s;
  for (CheckClass c : kAllCheckClasses) s += (s.empty() ? "" : ", ") + std::string(check_class_name(c));
  return s;
}

std::vector<Shape> parse_shapes(const std::string& list) {
  std::vector<Shape> out;
  size_t pos = 0;
  while (pos <= list.size()) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    const std::string item = list.substr(pos, comma - pos);
    const size_t x = item.find('x');
    auto number = [&](const std::string& t) -> int64_t {
      if (t.empty() || t.size() > 12 || t.find_first_not_of("0123456789") != std::string::npos) return -1;
      return std::stoll(t);
    };
    const int64_t rows = x == std::string::npos ? -1 : number(item.substr(0, x));
    const int64_t width = x == std::string::npos ? -1 : number(item.substr(x + 1));
    if (rows < 1 || width < 1)
      throw UsageError("audit: --shapes entries must be ROWSxWIDTH with positive integers, got '" + item + "'");
    out.push_back({rows, width, "--shapes"});
    pos = comma + 1;
  }
  return out;
}

std::vector<Shape> model_shapes(const std::string& model) {
  if (model == "wan2.2")
    return {{32760, 5120, "wan2.2 5120-wide FFN (seed shape)"},
            {32760, 13824, "wan2.2 FFN up, 32,760 tokens (seed shape)"},
            {4096, 13824, "wan2.2 FFN up, 4,096 tokens (seed shape)"},
            {75600, 13824, "wan2.2 FFN up, 81 frames at 720p: 75,600 tokens (seed shape)"}};
  throw UsageError("audit: unknown --model " + model + " (known: wan2.2)");
}

std::string AuditResult::verdict() const {
  if (!passed || !load_fault.empty()) return "FAIL";
  return complete ? "PASS" : "INCOMPLETE";
}

const CheckResult* AuditResult::killed_by() const {
  for (const auto& c : checks)
    if (c.status == "fail") return &c;
  return nullptr;
}

std::string builtin_plugin_path(const std::string& backend) {
  const std::string file = backend == "cuda" ? "libbias_gelu_tanh_cuda.so" : "libbias_gelu_tanh_emulated.so";
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
  const std::string path = o.plugin.empty() ? builtin_plugin_path(o.backend) : o.plugin;
  std::error_code ec;
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
  s.child_command = {"/proc/self/exe", "audit", "--op", o.op, "--plugin", s.info.path};
  s.reproduce_prefix = "fuseproof audit --op " + o.op + " --plugin " + quote_path(s.info.path);
  return s;
}

AuditResult run_audit(const AuditOptions& opt, const Subject& subject) {
  const auto t0 = std::chrono::steady_clock::now();
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

  // 1. Describe: load the subject, name its hardware, build the reference models (golden data verified).
  Description desc;
  std::unique_ptr<KernelRunner> local_runner;
  if (opt.isolate) {
    dir = spec_dir();
    ChildOutcome co;
    const json result = run_isolated(subject, {{"task", "describe"}, {"options", options_json(opt)}}, dir, "describe",
                                     opt.call_timeout_s, kStallSeconds, &co);
    if (co.exit_code == 0 && result.is_object() && result.contains("info")) {
      desc.info = info_from_json(result["info"]);
      desc.backend = result["backend"];
      desc.hardware = result["hardware"];
      desc.models = result["models"].get<std::vector<std::string>>();
    } else if (co.exit_code == kExitUsage || co.exit_code == kExitIncomplete || co.exit_code == kExitCorrupt) {
      rethrow_child_error(co, result);
    } else {
      res.plugin = subject.info;
      res.load_fault = fault_line(co, opt.call_timeout_s) + " (while loading the subject)";
      res.passed = false;
      std::printf("fuseproof audit: %s\n  FAIL: %s\n", subject.info.path.c_str(), res.load_fault.c_str());
      std::printf("VERDICT: FAIL (the subject could not be loaded)\n");
      res.seconds = seconds_since(t0);
      return res;
    }
  } else {
    desc = describe_here(opt, subject, &local_runner);
  }
  res.plugin = desc.info;
  res.backend = desc.backend;
  res.hardware = desc.hardware;
  res.models = desc.models;
  const PluginInfo& info = desc.info;
  std::printf("fuseproof audit: %s\n  subject %s (%s memory, %d-byte vectors, ABI v%u)\n  backend %s on %s\n",
              info.kernel_name.c_str(), info.path.c_str(), memory_name(info.memory), info.vector_bytes,
              info.abi_version, desc.backend.c_str(), res.hardware.c_str());
  for (const auto& m : desc.models) std::printf("  reference %s\n", m.c_str());
  std::printf("  isolation: %s; call time limit %.0f s\n",
              opt.isolate ? "each check class in a child process of its own" : "none (--no-isolation)",
              opt.call_timeout_s);
  std::fflush(stdout);

  if (opt.on_described) opt.on_described();

  // 2. Every class on every dtype.
  AuditOptions child_opt = opt;
  child_opt.backend = desc.backend;
  for (ref::Dtype d : opt.dtypes) {
    for (CheckClass c : kAllCheckClasses) {
      if (opt.only && *opt.only != c) continue;
      CheckResult r;
      r.cls = c;
      r.dtype = d;
      if (opt.first_fail && !res.passed) {
        r.status = "skipped";
        r.note = "not run: after the first failure (--first-fail)";
      } else if (opt.isolate) {
        ChildOutcome co;
        const std::string name = std::string(check_class_name(c)) + "_" + ref::dtype_name(d);
        const json spec = {{"task", "class"}, {"class", check_class_name(c)}, {"dtype", ref::dtype_name(d)},
                           {"options", options_json(child_opt)}};
        const json result = run_isolated(subject, spec, dir, name, opt.call_timeout_s, kStallSeconds, &co);
        if (co.exit_code == 0 && result.is_object() && result.contains("check")) {
          r = check_from_json(result["check"]);
        } else if (co.exit_code == kExitUsage || co.exit_code == kExitIncomplete || co.exit_code == kExitCorrupt) {
          rethrow_child_error(co, result);
        } else {
          r.fault = fault_line(co, opt.call_timeout_s);
          r.seconds = co.seconds;
          r.scope = "stopped by the fault; the class's other cases did not run";
        }
      } else {
        r = run_class_here(child_opt, info, *local_runner, d, c, desc.backend);
      }
      settle(r);
      if (r.status == "fail") {
        res.passed = false;
        r.reproduce = reproduce_command(opt, subject, desc.backend, d, c);
      }
      if (r.status == "incomplete") res.complete = false;
      std::printf("  %-9s %s  %-4s  %llu cases, %llu mismatches%s (%.2f s)\n", check_class_name(c), ref::dtype_name(d),
                  r.status.c_str(), (unsigned long long)r.cases, (unsigned long long)r.mismatches,
                  r.stopped_early ? " (stopped early)" : "", r.seconds);
      if (!r.fault.empty()) std::printf("      FAULT: %s\n", r.fault.c_str());
      for (const auto& line : r.records) std::printf("      %s\n", line.c_str());
      if (r.status == "fail") {
        if (r.mismatches > r.records.size())
          std::printf("      ... and %llu more\n", (unsigned long long)(r.mismatches - r.records.size()));
        std::printf("      reproduce: %s\n", r.reproduce.c_str());
      } else if (r.status == "pass" && c != CheckClass::kRejection) {
        std::printf("      In %llu cases, no errors found in %s %s.\n", (unsigned long long)r.cases, opt.op.c_str(),
                    ref::dtype_name(d));
      }
      if (!r.scope.empty() && r.status != "skipped") std::printf("      scope: %s\n", r.scope.c_str());
      if (!r.note.empty()) std::printf("      %s\n", r.note.c_str());
      std::fflush(stdout);
      res.checks.push_back(std::move(r));
    }
  }
  res.seconds = seconds_since(t0);
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
  const std::string result_path = spec_path + ".result.json";
  json out;
  int status = kExitPass;
  try {
    std::ifstream in(spec_path);
    const json spec = json::parse(in);
    const AuditOptions o = options_from_json(spec.at("options"));
    if (spec.at("task") == "describe") {
      const Description d = describe_here(o, subject);
      out = {{"info", info_json(d.info)}, {"backend", d.backend}, {"hardware", d.hardware}, {"models", d.models}};
    } else {
      const PluginInfo info = subject.load_info ? subject.load_info() : subject.info;
      auto runner = subject.make_runner();
      const auto cls = parse_check_class(spec.at("class"));
      const auto dt = ref::parse_dtype(spec.at("dtype").get<std::string>());
      if (!cls || !dt) throw UsageError("audit: malformed child spec " + spec_path);
      out = {{"check", check_json(run_class_here(o, info, *runner, *dt, *cls, o.backend))}};
    }
  } catch (const std::exception& e) {
    status = exit_status_of(e);
    out = {{"error", e.what()}};
    std::fprintf(stderr, "%s\n", e.what());
  }
  std::ofstream f(result_path + ".tmp");
  f << out.dump();
  f.close();
  fs::rename(result_path + ".tmp", result_path);
  return status;
}

}  // namespace fuseproof::audit
