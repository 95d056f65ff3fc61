// audit_engine.h: `fuseproof audit`: the whole battery of check classes run on one plugin, in order, with a verdict.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "audit/expected_model.h"
#include "audit/plugin_loader.h"
#include "reference/dtype.h"

namespace fuseproof::audit {

/// The check classes, in the order they run.
enum class CheckClass : int { kRejection, kExtreme, kProperty, kWidths, kDomain, kPdl };
inline constexpr CheckClass kAllCheckClasses[] = {CheckClass::kRejection, CheckClass::kExtreme, CheckClass::kProperty,
                                                  CheckClass::kWidths,    CheckClass::kDomain,  CheckClass::kPdl};
/// "rejection", "extreme", "property", "widths", "domain", "pdl".
const char* check_class_name(CheckClass c);
std::optional<CheckClass> parse_check_class(const std::string& s);

struct AuditOptions {
  std::string op = "bias_gelu_tanh";
  std::string plugin;                  ///< empty: the built-in plugin of `backend`
  std::string backend;                 ///< "cuda" or "emulated"; empty: from the plugin, else cuda when a device works
  std::vector<ref::Dtype> dtypes{ref::Dtype::kBf16, ref::Dtype::kFp16};
  std::optional<CheckClass> only;      ///< run one class (reproduce commands use this)
  uint64_t seed = 20261130;
  std::string tanh_model;              ///< "" (by backend: emulated -> libm, cuda -> cuda), "libm", "cuda", "exact"
  uint32_t domain_biases = 0;          ///< biases in the domain class; 0: 65536 on CUDA, 1024 on the host
  int64_t max_width = 0;               ///< every valid width up to this; 0: 8192 on CUDA, 2048 on the host
  uint32_t property_cases = 200;       ///< random shapes per dtype in the property class
  uint64_t stop_after = 1000;          ///< a class stops after this many mismatches (0: never)
  size_t records = 8;                  ///< mismatch lines kept per check
  int pdl_delay_ms = 20;               ///< how late the PDL producer writes the inputs
  GoldenPaths golden = default_golden_paths();
  std::string command;                 ///< the command line, for the report
};

/// One check class on one dtype.
struct CheckResult {
  CheckClass cls = CheckClass::kRejection;
  ref::Dtype dtype = ref::Dtype::kBf16;
  std::string status = "pass";         ///< "pass", "fail" or "skipped"
  uint64_t cases = 0;                  ///< elements compared (rejection: probes)
  uint64_t mismatches = 0;             ///< elements that differed, guard elements written, probes failed
  bool stopped_early = false;          ///< stopped at stop_after mismatches
  uint32_t distinct_expected = 0;      ///< distinct expected outputs: the guard against a check that cannot fail
  std::vector<std::string> records;    ///< the first mismatch lines
  std::string scope;                   ///< what was covered, in words (sizes stated)
  std::string note;                    ///< e.g. the digest comparison, the reason for a skip
  std::string reproduce;               ///< command rerunning just this check
  double seconds = 0;
};

struct AuditResult {
  PluginInfo plugin;
  std::string backend;
  std::string hardware;
  std::vector<std::string> models;     ///< one line per dtype: the reference model and golden data
  std::vector<CheckResult> checks;
  bool passed = true;
  const CheckResult* killed_by() const;  ///< the first failing check, or nullptr
  uint64_t seed = 0;
  std::string command;
  double seconds = 0;
};

/// Where the built-in plugins are: next to the executable (../lib/plugins), else the configured build path.
std::string builtin_plugin_path(const std::string& backend);

/// Runs the audit; progress lines go to stdout. Throws PluginError or std::runtime_error (one line) when the plugin,
/// the backend or the golden data cannot be set up; check failures are results, not exceptions.
AuditResult run_audit(const AuditOptions& options);

}  // namespace fuseproof::audit
