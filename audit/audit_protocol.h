// audit_protocol.h: the isolation protocol between the audit and its children: a JSON spec file in, a JSON result
// file out, and what a child that ended without a result means.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "audit/audit_isolation.h"
#include "audit/plugin_loader.h"

namespace fuseproof::audit {

/// The words a fault line carries when the class died outside any call into the subject (fault_line).
inline constexpr const char* kOutsideAnyCall = "(outside any call into the subject)";

/// A fresh /tmp/fuseproof-audit-XXXXXX folder; std::runtime_error when none can be made.
std::string make_spec_dir();

/// Writes `spec` to dir/name.json, runs `argv` + `--child-spec FILE`, returns the child's result JSON (null when it
/// wrote none) and fills `outcome`.
nlohmann::json run_isolated(const std::vector<std::string>& argv, const nlohmann::json& spec, const std::string& dir,
                            const std::string& name, double call_timeout_s, ChildOutcome* outcome);

/// Writes a child's result beside its spec (atomically: a parent never reads half a file).
void write_child_result(const std::string& spec_path, const nlohmann::json& result);
/// The result a child wrote beside `spec_path`: null when there is none, or it is not a JSON object.
nlohmann::json read_child_result(const std::string& spec_path);

/// A child that ended without a result: the line a FAIL reports, from the heartbeat and its output.
std::string fault_line(const ChildOutcome& co, double call_timeout_s);

/// A child's setup error (exit 2, 3, 4 with one line on stderr) becomes the same error here.
[[noreturn]] void rethrow_child_error(const ChildOutcome& co, const nlohmann::json& result);
/// True when the child reported a setup error: exit 2, 3 or 4 and its result names the error. A child that exits with
/// one of these statuses without saying why (the subject called exit(2)) is a crash of the subject, never a setup
/// error.
bool is_setup_error(const ChildOutcome& co, const nlohmann::json& result);

nlohmann::json info_to_json(const PluginInfo& i);
PluginInfo info_from_json(const nlohmann::json& j);

/// A class that says nothing for this long outside any call is stuck.
inline constexpr double kStallSeconds = 1800;

}  // namespace fuseproof::audit
