// audit_engine.h: `fuseproof audit`: the battery of check classes run on one subject, each class in a child process
// of its own, with a verdict that says what was covered.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "audit/expected_model.h"
#include "audit/kernel_runner.h"
#include "audit/plugin_loader.h"
#include "reference/dtype.h"

namespace fuseproof::audit {

/// The check classes, in the order they run.
enum class CheckClass : int { kRejection, kExtreme, kProperty, kWidths, kShapes, kDomain, kPdl };
inline constexpr CheckClass kAllCheckClasses[] = {CheckClass::kRejection, CheckClass::kExtreme, CheckClass::kProperty,
                                                  CheckClass::kWidths,    CheckClass::kShapes,  CheckClass::kDomain,
                                                  CheckClass::kPdl};
/// "rejection", "extreme", "property", "widths", "shapes", "domain", "pdl".
const char* check_class_name(CheckClass c);
std::optional<CheckClass> parse_check_class(const std::string& s);
/// "rejection, extreme, ..." for messages.
std::string check_class_list();

/// One shape of the `shapes` class.
struct Shape {
  int64_t rows = 0;
  int64_t width = 0;
  std::string why;  ///< where it comes from ("wan2.2 FFN up", "--shapes", "above 2^31 elements")
};
/// Parses "75600x13824,4096x5120"; throws UsageError (one line) on a malformed or non-positive entry.
std::vector<Shape> parse_shapes(const std::string& list);
/// A named catalogue of production shapes ("wan2.2"); throws UsageError naming the known ones.
std::vector<Shape> model_shapes(const std::string& model);

struct AuditOptions {
  std::string op = "bias_gelu_tanh";
  std::string plugin;                  ///< empty: the built-in plugin of `backend`
  std::string backend;                 ///< "cuda" or "emulated"; empty: from the plugin, else cuda when a device works
  std::vector<ref::Dtype> dtypes{ref::Dtype::kBf16, ref::Dtype::kFp16};
  std::optional<CheckClass> only;      ///< run one class (reproduce commands use this)
  uint64_t seed = 20261130;
  std::string tanh_model;              ///< "" (by backend: emulated -> libm, cuda -> cuda), "libm", "cuda", "exact"
  uint32_t domain_biases = 0;          ///< biases in the domain class; 0: 65536 on CUDA, 1024 on the host
  int64_t max_width = 0;               ///< every valid width up to this; 0: 65536 on CUDA, 16384 on the host
  uint32_t property_cases = 200;       ///< random shapes per dtype in the property class
  std::vector<Shape> shapes;           ///< the user's shapes (--shapes, --model), added to the class's defaults
  bool default_shapes = true;          ///< the class's own production envelope (off: only the user's shapes)
  uint64_t stop_after = 1000;          ///< a class stops after this many mismatches (0: never)
  size_t records = 8;                  ///< mismatch lines kept per check
  int pdl_delay_ms = 20;               ///< how late the PDL producer writes the inputs
  double call_timeout_s = 120;         ///< one call into the subject longer than this is a hang: FAIL
  bool isolate = true;                 ///< each class in a child process (off: in this process, for debugging)
  bool first_fail = false;             ///< skip the classes after the first failure (mutation runs on a budget)
  std::function<void()> on_described;  ///< runs once the subject is loaded, before the classes (the self-audit)
  GoldenPaths golden = default_golden_paths();
  std::string command;                 ///< the command line, for the report
};

/// One check class on one dtype.
struct CheckResult {
  CheckClass cls = CheckClass::kRejection;
  ref::Dtype dtype = ref::Dtype::kBf16;
  std::string status = "pass";         ///< "pass", "fail", "skipped" or "incomplete" (ran no case)
  uint64_t cases = 0;                  ///< elements compared (rejection: probes)
  uint64_t mismatches = 0;             ///< elements that differed, guard elements written, probes failed
  bool stopped_early = false;          ///< stopped at stop_after mismatches
  uint32_t distinct_expected = 0;      ///< distinct expected outputs: the guard against a check that cannot fail
  std::vector<std::string> records;    ///< the first mismatch lines
  std::string fault;                   ///< a crash, CUDA error or hang of the subject, with the call that caused it
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
  bool passed = true;                  ///< no check failed
  bool complete = true;                ///< no check ran zero cases
  const CheckResult* killed_by() const;  ///< the first failing check, or nullptr
  std::string verdict() const;         ///< "PASS", "FAIL" or "INCOMPLETE"
  uint64_t seed = 0;
  std::string command;
  bool isolated = true;
  double call_timeout_s = 0;
  std::string load_fault;              ///< the subject crashed or hung while loading: FAIL, no class could run
  double seconds = 0;
};

/// What the audit checks: a description, a way to run it in the process that runs the checks, and the command that
/// re-creates it in a fresh process (the engine appends `--child-spec FILE`).
struct Subject {
  PluginInfo info;                                             ///< known up front, or filled by load_info
  std::function<PluginInfo()> load_info;                       ///< set when describing the subject means loading it
  std::function<std::unique_ptr<KernelRunner>()> make_runner;  ///< called in the process that runs the checks
  std::vector<std::string> child_command;
  std::string reproduce_prefix;  ///< e.g. "fuseproof audit --plugin P"; the engine appends the class's options
};

/// The built-in plugins: next to the executable (../lib/plugins), else the configured build path.
std::string builtin_plugin_path(const std::string& backend);

/// A plugin subject: loads nothing in this process (a plugin may crash while it loads); the child loads it. `backend`
/// resolved from the options. Throws UsageError (one line) on a plugin that cannot be described.
Subject plugin_subject(AuditOptions& options);

/// Runs the audit; progress lines go to stdout. Each class runs in a child process when options.isolate; a crash,
/// abort, CUDA fault or hang there is a FAIL of that class, and the other classes still run. Throws UsageError,
/// MissingDataError or CorruptDataError (one line) when the subject, backend or golden data cannot be set up.
AuditResult run_audit(const AuditOptions& options, const Subject& subject);

/// The child side of isolation: reads the spec, runs its one class and dtype in this process and writes the result
/// beside the spec. Returns the exit status (0 when the class ran, whatever it found).
int run_audit_child(const std::string& spec_path, const Subject& subject);

}  // namespace fuseproof::audit
