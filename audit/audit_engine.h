// audit_engine.h: `fuseproof audit`: the battery of check classes run on one subject, each class in a child process
// of its own, with a verdict that says what was covered.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "audit/audit_options.h"
#include "audit/check_result.h"
#include "audit/kernel_runner.h"
#include "audit/plugin_loader.h"
#include "audit/quant_runner.h"

namespace fuseproof::audit {

/// What the audit checks: a description, a way to run it in the process that runs the checks, and the command that
/// re-creates it in a fresh process (the engine appends `--child-spec FILE`).
struct Subject {
  PluginInfo info;                                             ///< known up front, or filled by load_info
  std::function<PluginInfo()> load_info;                       ///< set when describing the subject means loading it
  std::function<std::unique_ptr<KernelRunner>()> make_runner;  ///< called in the process that runs the checks
  /// The same for a quantization op's subject (info.op names a ref::QuantOpSpec); unset for elementwise subjects.
  std::function<std::unique_ptr<QuantRunner>()> make_quant_runner;
  std::vector<std::string> child_command;
  std::string reproduce_prefix;  ///< e.g. "fuseproof audit --plugin P"; the engine appends the class's options
};

/// The built-in plugin of `op` for `backend` ("cuda", "emulated"): lib<op>_<backend>.so next to the executable
/// (../lib/plugins), else in the configured build path.
std::string builtin_plugin_path(const std::string& op, const std::string& backend);
/// The same for a contract of the op: a quantization op's first contract (or "") is lib<op>_<backend>.so, its others
/// lib<op>_<contract>_<backend>.so (libnvfp4_quant_rcp-approx_cuda.so); an elementwise op's contract is ignored.
std::string builtin_plugin_path(const std::string& op, const std::string& contract, const std::string& backend);

/// A plugin subject: loads nothing in this process (a plugin may crash while it loads); the child loads it. The
/// backend is resolved into `options`. Throws UsageError (one line) on a plugin that cannot be found.
Subject plugin_subject(AuditOptions& options);

/// Runs the audit; progress lines go to stdout. Each class runs in a child process when options.isolate; a crash,
/// abort, CUDA fault or hang there is a FAIL of that class, and the other classes still run. Throws UsageError,
/// MissingDataError or CorruptDataError (one line) when the subject, backend or golden data cannot be set up.
AuditResult run_audit(const AuditOptions& options, const Subject& subject);

/// The child side of isolation: reads the spec, runs its one class and dtype in this process and writes the result
/// beside the spec. Returns the exit status (0 when the class ran, whatever it found).
int run_audit_child(const std::string& spec_path, const Subject& subject);

}  // namespace fuseproof::audit
