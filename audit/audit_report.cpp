// audit_report.cpp: Markdown and JSON renderings of an AuditResult.
#include "audit/audit_report.h"

#include "common/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <type_traits>
#include <stdexcept>

namespace fuseproof::audit {

nlohmann::json report_json_of(const AuditResult& r, const std::string& reference_verdict) {
  nlohmann::json j;
  j["tool"] = "fuseproof audit";
  j["command"] = r.command;
  j["op"] = r.op.empty() ? r.plugin.op : r.op;
  j["contract"] = r.contract;
  j["golden"] = r.golden;
  j["kernel"] = {{"name", r.plugin.kernel_name},
                 {"claimed_contract", r.plugin.contract},
                 {"plugin", r.plugin.path},
                 {"plugin_sha256", r.plugin.sha256},
                 {"abi_version", r.plugin.abi_version},
                 {"memory", memory_name(r.plugin.memory)},
                 {"vector_bytes", r.plugin.vector_bytes}};
  j["backend"] = r.backend;
  j["hardware"] = r.hardware;
  j["reference"] = r.models;
  j["seed"] = r.seed;
  std::string verdict = r.verdict();
  if (verdict == "PASS" && !reference_verdict.empty() && reference_verdict != "PASS") verdict = reference_verdict;
  j["verdict"] = verdict == "PASS" ? "pass" : verdict == "FAIL" ? "fail" : "incomplete";
  j["kernel_verdict"] = r.verdict();
  j["reference_self_audit"] = reference_verdict.empty() ? "not run" : reference_verdict;
  j["isolation"] = r.isolated ? "each check class in a child process" : "none";
  j["call_timeout_s"] = r.call_timeout_s;
  j["load_fault"] = r.load_fault;
  j["seconds"] = r.seconds;
  nlohmann::json checks = nlohmann::json::array();
  for (const auto& c : r.checks) checks.push_back(check_to_json(c));
  j["checks"] = checks;
  if (const CheckResult* k = r.killed_by())
    j["killed_by"] = {{"class", check_class_name(k->cls)}, {"dtype", ref::dtype_name(k->dtype)},
                      {"mismatches", k->mismatches}, {"stopped_early", k->stopped_early}, {"fault", k->fault},
                      {"first_record", !k->fault.empty() ? k->fault : k->records.empty() ? "" : k->records[0]}};
  else if (!r.load_fault.empty())
    j["killed_by"] = {{"class", "load"}, {"dtype", ""}, {"mismatches", 0}, {"stopped_early", false},
                      {"fault", r.load_fault}, {"first_record", r.load_fault}};
  else
    j["killed_by"] = nullptr;
  return j;
}

namespace {

/// Text built with std::to_string and snprintf instead of an ostringstream: the Markdown report is also made inside
/// the Python front end's process, where PyTorch 2.11's interpreter on the H200 crashed in libstdc++'s num_put facet
/// (an ostream's numeric insertion) in every run; strings and these conversions need no locale.
class TextBuilder {
 public:
  TextBuilder& operator<<(const std::string& v) { s_ += v; return *this; }
  TextBuilder& operator<<(const char* v) { s_ += v; return *this; }
  TextBuilder& operator<<(char v) { s_ += v; return *this; }
  TextBuilder& operator<<(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    s_ += b;
    return *this;
  }
  template <class T, class = std::enable_if_t<std::is_integral_v<T>>>
  TextBuilder& operator<<(T v) { s_ += std::to_string(v); return *this; }
  std::string str() const { return s_; }

 private:
  std::string s_;
};

}  // namespace

std::string report_markdown(const AuditResult& r) {
  TextBuilder md;
  md << "# fuseproof audit: " << r.plugin.kernel_name << "\n\n";
  md << "**Verdict: " << r.verdict() << "**";
  if (const CheckResult* k = r.killed_by())
    md << " (first failure: `" << check_class_name(k->cls) << "` " << ref::dtype_name(k->dtype) << ", "
       << k->mismatches << (k->stopped_early ? "+" : "") << " mismatches)";
  md << "\n\n";
  md << "| | |\n|---|---|\n";
  md << "| op | `" << (r.op.empty() ? r.plugin.op : r.op) << "`, contract `" << r.contract << "` (the kernel claims `"
     << r.plugin.contract << "`) |\n";
  md << "| golden data | " << r.golden << " |\n";
  md << "| plugin | `" << r.plugin.path << "` (sha256 `" << r.plugin.sha256.substr(0, 16) << "…`) |\n";
  md << "| ABI | version " << r.plugin.abi_version << ", " << memory_name(r.plugin.memory) << " memory, "
     << r.plugin.vector_bytes << "-byte vectors |\n";
  md << "| backend | " << r.backend << " |\n";
  md << "| hardware | " << r.hardware << " |\n";
  md << "| seed | " << r.seed << " |\n";
  md << "| command | `" << r.command << "` |\n";
  md << "| isolation | " << (r.isolated ? "each check class in a child process of its own" : "none") << "; call limit "
     << r.call_timeout_s << " s |\n";
  md << "| time | " << r.seconds << " s |\n\n";
  if (!r.load_fault.empty()) md << "**The subject could not be loaded:** `" << r.load_fault << "`\n\n";
  md << "## Reference model and golden data\n\n";
  for (const auto& m : r.models) md << "- " << m << "\n";
  md << "\n## Checks\n\n| class | dtype | status | cases | mismatches | time (s) | scope |\n|---|---|---|---:|---:|---:|---|\n";
  for (const auto& c : r.checks)
    md << "| " << check_class_name(c.cls) << " | " << ref::dtype_name(c.dtype) << " | "
       << (c.status == CheckStatus::kFail ? "**fail**" : check_status_name(c.status)) << " | " << c.cases << " | " << c.mismatches
       << (c.stopped_early ? " (stopped)" : "") << " | " << c.seconds << " | " << c.scope
       << (c.note.empty() ? "" : "; " + c.note) << " |\n";
  bool any = false;
  for (const auto& c : r.checks) {
    if (c.status != CheckStatus::kFail) continue;
    if (!any) md << "\n## Failures\n";
    any = true;
    md << "\n### " << check_class_name(c.cls) << " " << ref::dtype_name(c.dtype) << ": " << c.mismatches
       << " mismatches in " << c.cases << " cases\n\n";
    if (!c.fault.empty()) md << "Fault: `" << c.fault << "`\n\n";
    md << "```\n";
    for (const auto& l : c.records) md << l << "\n";
    if (c.mismatches > c.records.size()) md << "... and " << (c.mismatches - c.records.size()) << " more\n";
    md << "```\n\n";
    md << "Distance from the contract (ulps" << (c.stopped_early ? ", up to the early stop: --stop-after 0 for exact counts" : "")
       << "): " << c.vs_contract.line() << "\n\n";
    if (c.has_correct)
      md << "Distance from the correctly rounded value (MPFR): subject " << c.vs_correct.line() << "; contract "
         << c.contract_vs_correct.line() << "\n\n";
    md << "Reproduce: `" << c.reproduce << "`\n";
  }
  return md.str();
}

void ensure_writable(const std::string& path) {
  std::ofstream out(path, std::ios::app);
  if (!out) throw std::runtime_error("audit: cannot write report " + path + ": " + std::strerror(errno));
}

void write_text_file(const std::string& path, const std::string& text) {
  try {
    write_file_atomically(path, text);  // a run killed mid-write leaves the previous report intact
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string("audit: ") + e.what());
  }
}

}  // namespace fuseproof::audit
