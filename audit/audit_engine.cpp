// audit_engine.cpp: loads the plugin, picks the backend and the reference model, runs the check classes in order.
#include "audit/audit_engine.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>

#include "audit/check_classes.h"
#include "audit/kernel_runner.h"

namespace fuseproof::audit {

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

std::string quote_path(const std::string& p) {
  return p.find_first_of(" '\"$") == std::string::npos ? p : "'" + p + "'";
}

}  // namespace

const char* check_class_name(CheckClass c) {
  switch (c) {
    case CheckClass::kRejection: return "rejection";
    case CheckClass::kExtreme: return "extreme";
    case CheckClass::kProperty: return "property";
    case CheckClass::kWidths: return "widths";
    case CheckClass::kDomain: return "domain";
    default: return "pdl";
  }
}

std::optional<CheckClass> parse_check_class(const std::string& s) {
  for (CheckClass c : kAllCheckClasses)
    if (s == check_class_name(c)) return c;
  return std::nullopt;
}

const CheckResult* AuditResult::killed_by() const {
  for (const auto& c : checks)
    if (c.status == "fail") return &c;
  return nullptr;
}

std::string builtin_plugin_path(const std::string& backend) {
  const std::string file = backend == "cuda" ? "libbias_gelu_tanh_cuda.so" : "libbias_gelu_tanh_emulated.so";
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const auto p = exe.parent_path().parent_path() / "lib" / "plugins" / file;
    if (std::filesystem::exists(p, ec)) return p.string();
  }
  return std::string(FUSEPROOF_DEFAULT_PLUGIN_DIR) + "/" + file;
}

AuditResult run_audit(const AuditOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  AuditResult res;
  res.seed = opt.seed;
  res.command = opt.command;
  std::string backend = opt.backend;
  if (backend.empty() && opt.plugin.empty()) backend = cuda_runner_available(nullptr) ? "cuda" : "emulated";
  const std::string path = opt.plugin.empty() ? builtin_plugin_path(backend) : opt.plugin;
  const Plugin plugin = Plugin::load(path, opt.op);
  const PluginInfo& info = plugin.info();
  if (backend.empty()) backend = info.cuda() ? "cuda" : "emulated";
  if ((backend == "cuda") != info.cuda())
    throw PluginError("audit: plugin " + info.path + " takes " + memory_name(info.memory) + " memory; use --backend " +
                      (info.cuda() ? "cuda" : "emulated"));
  std::unique_ptr<KernelRunner> runner = info.cuda() ? make_cuda_runner(plugin) : make_host_runner(plugin);
  res.plugin = info;
  res.backend = backend;
  res.hardware = runner->hardware();
  std::string tanh_name = opt.tanh_model.empty() ? (backend == "cuda" ? "cuda" : "libm") : opt.tanh_model;
  const auto tanh = ref::parse_tanh_model(tanh_name);
  if (!tanh) throw std::runtime_error("audit: unknown tanh model " + tanh_name + " (cuda, libm, exact)");

  const uint32_t domain_biases = opt.domain_biases ? opt.domain_biases : (info.cuda() ? 65536u : 1024u);
  const int64_t max_width = opt.max_width ? opt.max_width : (info.cuda() ? 8192 : 2048);
  std::printf("fuseproof audit: %s\n  plugin %s (%s memory, %d-byte vectors, ABI v%u)\n  backend %s on %s\n",
              info.kernel_name.c_str(), info.path.c_str(), memory_name(info.memory), info.vector_bytes,
              info.abi_version, backend.c_str(), res.hardware.c_str());
  for (ref::Dtype d : opt.dtypes) {
    const ExpectedModel model = make_expected_model(d, *tanh, opt.golden);
    res.models.push_back(std::string(ref::dtype_name(d)) + ": " + model.description);
    std::printf("  reference %s: %s\n", ref::dtype_name(d), model.description.c_str());
    const CheckContext ctx{plugin, *runner, model, opt,
                           d == ref::Dtype::kBf16 ? int32_t(FUSEPROOF_DTYPE_BF16) : int32_t(FUSEPROOF_DTYPE_FP16),
                           domain_biases, max_width};
    for (CheckClass c : kAllCheckClasses) {
      if (opt.only && *opt.only != c) continue;
      CheckResult r;
      r.cls = c;
      r.dtype = d;
      const auto tc = std::chrono::steady_clock::now();
      switch (c) {
        case CheckClass::kRejection: check_rejection(ctx, r); break;
        case CheckClass::kExtreme: check_extreme(ctx, r); break;
        case CheckClass::kProperty: check_property(ctx, r); break;
        case CheckClass::kWidths: check_widths(ctx, r); break;
        case CheckClass::kDomain: check_domain(ctx, r); break;
        case CheckClass::kPdl: check_pdl(ctx, r); break;
      }
      r.seconds = seconds_since(tc);
      if (r.status != "skipped") {
        r.status = r.mismatches ? "fail" : "pass";
        // A check whose expected outputs are all one value could not have failed: that is a defect of the battery.
        if (c != CheckClass::kRejection && r.cases && r.distinct_expected < 2) {
          r.status = "fail";
          r.records.push_back("audit defect: every expected output was the same pattern; the check could not fail");
        }
      }
      if (r.status == "fail") {
        res.passed = false;
        r.reproduce = "fuseproof audit --op " + opt.op + " --plugin " + quote_path(info.path) + " --backend " + backend +
                      " --dtype " + ref::dtype_name(d) + " --only " + check_class_name(c) + " --seed " +
                      std::to_string(opt.seed) + (opt.domain_biases ? " --domain-biases " + std::to_string(opt.domain_biases) : "") +
                      (opt.max_width ? " --max-width " + std::to_string(opt.max_width) : "");
      }
      std::printf("  %-9s %s  %-4s  %llu cases, %llu mismatches%s (%.2f s)\n", check_class_name(c), ref::dtype_name(d),
                  r.status.c_str(), (unsigned long long)r.cases, (unsigned long long)r.mismatches,
                  r.stopped_early ? " (stopped early)" : "", r.seconds);
      for (const auto& line : r.records) std::printf("      %s\n", line.c_str());
      if (r.status == "fail") {
        if (r.mismatches > r.records.size())
          std::printf("      ... and %llu more\n", (unsigned long long)(r.mismatches - r.records.size()));
        std::printf("      reproduce: %s\n", r.reproduce.c_str());
      } else if (r.status == "pass" && c != CheckClass::kRejection) {
        std::printf("      In %llu cases, no errors found in %s %s.\n", (unsigned long long)r.cases, opt.op.c_str(),
                    ref::dtype_name(d));
      }
      if (!r.note.empty()) std::printf("      %s\n", r.note.c_str());
      std::fflush(stdout);
      res.checks.push_back(std::move(r));
    }
  }
  res.seconds = seconds_since(t0);
  const CheckResult* k = res.killed_by();
  if (k)
    std::printf("VERDICT: FAIL (%s): first failure in %s %s, %llu mismatches\n", info.kernel_name.c_str(),
                check_class_name(k->cls), ref::dtype_name(k->dtype), (unsigned long long)k->mismatches);
  else
    std::printf("VERDICT: PASS (%s), %.1f s\n", info.kernel_name.c_str(), res.seconds);
  return res;
}

}  // namespace fuseproof::audit
