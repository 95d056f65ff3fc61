// audit_protocol.cpp: spec and result files, fault lines.
#include "audit/audit_protocol.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "common/exit_status.h"

namespace fuseproof::audit {

namespace fs = std::filesystem;
using nlohmann::json;

std::string make_spec_dir() {
  char tmpl[] = "/tmp/fuseproof-audit-XXXXXX";
  const char* d = mkdtemp(tmpl);
  if (!d) throw std::runtime_error("audit: cannot create a temporary directory under /tmp");
  return d;
}

json run_isolated(const std::vector<std::string>& argv0, const json& spec, const std::string& dir,
                  const std::string& name, double call_timeout_s, ChildOutcome* outcome) {
  const std::string spec_path = dir + "/" + name + ".json";
  {
    std::ofstream f(spec_path);
    f << spec.dump();
    if (!f) throw std::runtime_error("audit: cannot write " + spec_path);
  }
  std::vector<std::string> argv = argv0;
  argv.push_back("--child-spec");
  argv.push_back(spec_path);
  *outcome = run_child(argv, dir + "/" + name + ".log", call_timeout_s, kStallSeconds);
  return read_child_result(spec_path);
}

json read_child_result(const std::string& spec_path) {
  std::ifstream in(spec_path + ".result.json");
  if (!in) return nullptr;
  json j = json::parse(in, nullptr, false);
  return j.is_object() ? j : json(nullptr);
}

void write_child_result(const std::string& spec_path, const json& result) {
  const std::string result_path = spec_path + ".result.json";
  std::ofstream f(result_path + ".tmp");
  f << result.dump();
  f.close();
  fs::rename(result_path + ".tmp", result_path);
}

std::string fault_line(const ChildOutcome& co, double call_timeout_s) {
  std::string what;
  if (co.timed_out) {
    char b[64];
    std::snprintf(b, sizeof b, "%g", call_timeout_s);
    what = std::string("hang: the call did not return within ") + b + " s (--call-timeout)";
  } else if (co.stalled) {
    what = "stall: nothing heard from the class for the stall limit outside any call";
  } else if (co.signal) {
    what = "crash: " + signal_description(co.signal);
  } else {
    what = "crash: exit " + std::to_string(co.exit_code) + " without a result";
  }
  what += co.last_call.empty() ? std::string(" ") + kOutsideAnyCall : " in call " + co.last_call;
  if (!co.output_tail.empty()) what += "; last output: " + co.output_tail;
  return what;
}

bool is_setup_error(const ChildOutcome& co, const json& result) {
  return (co.exit_code == kExitUsage || co.exit_code == kExitIncomplete || co.exit_code == kExitCorrupt) &&
         result.is_object() && result.contains("error") && result["error"].is_string();
}

void rethrow_child_error(const ChildOutcome& co, const json& result) {
  const std::string msg = result.is_object() && result.contains("error") ? result["error"].get<std::string>()
                                                                         : "audit: child failed: " + co.output_tail;
  if (co.exit_code == kExitIncomplete) throw MissingDataError(msg);
  if (co.exit_code == kExitCorrupt) throw CorruptDataError(msg);
  throw UsageError(msg);
}

json info_to_json(const PluginInfo& i) {
  return {{"path", i.path}, {"sha256", i.sha256}, {"kernel_name", i.kernel_name}, {"op", i.op},
          {"contract", i.contract}, {"abi_version", i.abi_version}, {"memory", i.memory},
          {"vector_bytes", i.vector_bytes}};
}

PluginInfo info_from_json(const json& j) {
  PluginInfo i;
  i.path = j.at("path");
  i.sha256 = j.at("sha256");
  i.kernel_name = j.at("kernel_name");
  i.op = j.at("op");
  i.contract = j.value("contract", "eager");
  i.abi_version = j.at("abi_version");
  i.memory = j.at("memory");
  i.vector_bytes = j.at("vector_bytes");
  return i;
}

}  // namespace fuseproof::audit
