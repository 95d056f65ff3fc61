// audit_report.cpp: the renderings of an AuditResult: Markdown, GitHub-flavoured Markdown, JSON, JUnit XML.
#include "audit/audit_report.h"

#include "common/atomic_file.h"
#include "common/exit_status.h"
#include "common/junit_xml.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>
#include <stdexcept>

namespace fuseproof::audit {

const char* report_format_name(ReportFormat f) { return f == ReportFormat::kGithub ? "github" : "markdown"; }

std::optional<ReportFormat> parse_report_format(const std::string& s) {
  for (ReportFormat f : {ReportFormat::kMarkdown, ReportFormat::kGithub})
    if (s == report_format_name(f)) return f;
  return std::nullopt;
}

std::vector<OutputArgument> ReportFiles::outputs() const {
  return {{"--report", markdown}, {"--json", json}, {"--junit", junit}};
}

std::string combined_verdict(const std::vector<AuditResult>& results, const std::string& reference_verdict) {
  std::string v = "PASS";
  for (const AuditResult& r : results) {
    const std::string rv = r.verdict();
    if (rv == "FAIL") v = "FAIL";
    else if (rv == "INCOMPLETE" && v == "PASS") v = "INCOMPLETE";
  }
  // A failing oracle fails the command whatever the kernels gave (an op not audited included).
  if (reference_verdict == "FAIL") v = "FAIL";
  if (v == "PASS" && !reference_verdict.empty() && reference_verdict != "PASS") v = reference_verdict;
  return v;
}

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
  const std::string verdict = combined_verdict({r}, reference_verdict);
  j["verdict"] = verdict == "PASS" ? "pass" : verdict == "FAIL" ? "fail" : "incomplete";
  j["kernel_verdict"] = r.verdict();
  j["reference_self_audit"] = reference_verdict.empty() ? "not run" : reference_verdict;
  j["isolation"] = r.isolated && r.class_groups
                       ? "each check class in a child process: each dtype's classes in one, in order (after a class "
                         "that is not clean, each in its own)"
                   : r.isolated     ? "each check class in a child process"
                   : r.single_child ? "every check class in one child process"
                                    : "none";
  j["call_timeout_s"] = r.call_timeout_s;
  j["load_fault"] = r.load_fault;
  if (!r.not_audited.empty()) j["not_audited"] = r.not_audited;
  j["seconds"] = r.seconds;
  if (!r.throughput.empty()) {
    nlohmann::json t = nlohmann::json::array();
    for (const auto& [what, rate] : r.throughput) t.push_back({what, rate});
    j["throughput_gb_per_s"] = t;
  }
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
  md << "| isolation | "
     << (r.isolated && r.class_groups
             ? "each check class in a child process: each dtype's classes in one, in order (after a class that is "
               "not clean, each in a child of its own; a class failing after the first confirmed alone)"
         : r.isolated     ? "each check class in a child process of its own"
         : r.single_child ? "every check class in one child process (--no-isolation)"
                          : "none")
     << "; call limit "
     << r.call_timeout_s << " s |\n";
  md << "| time | " << r.seconds << " s |\n\n";
  if (!r.load_fault.empty()) md << "**The subject could not be loaded:** `" << r.load_fault << "`\n\n";
  if (!r.not_audited.empty()) md << "**Not audited:** " << r.not_audited << "\n\n";
  md << "## Reference model and golden data\n\n";
  for (const auto& m : r.models) md << "- " << m << "\n";
  md << "\n## Checks\n\n| class | dtype | status | cases | mismatches | time (s) | scope |\n|---|---|---|---:|---:|---:|---|\n";
  for (const auto& c : r.checks)
    md << "| " << check_class_name(c.cls) << " | " << ref::dtype_name(c.dtype) << " | "
       << (c.status == CheckStatus::kFail ? "**fail**" : check_status_name(c.status)) << " | " << c.cases << " | " << c.mismatches
       << (c.stopped_early ? " (stopped)" : "") << " | " << c.seconds << " | " << c.scope
       << (c.note.empty() ? "" : "; " + c.note) << " |\n";
  for (const auto& c : r.checks)
    if (c.has_contract_vs_eager && c.status != CheckStatus::kSkipped)
      md << "\nContract " << r.contract << " vs eager, " << check_class_name(c.cls) << " " << ref::dtype_name(c.dtype)
         << " (ulps, over the class's cases): " << c.contract_vs_eager.line() << "\n";
  // A quantization op: how far the subject's codes and scales lie from each other contract of the op.
  for (const auto& c : r.checks) {
    if (c.contract_distances.empty() || c.status == CheckStatus::kSkipped) continue;
    md << "\n## Distance from the op's other contracts, " << check_class_name(c.cls) << " " << ref::dtype_name(c.dtype)
       << "\n\n";
    for (const std::string& l : contract_distance_lines(c)) md << l << "\n";
  }
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

namespace {

std::string op_of(const AuditResult& r) { return r.op.empty() ? r.plugin.op : r.op; }

std::string mismatch_count(const CheckResult& c) {
  return std::to_string(c.mismatches) + (c.stopped_early ? "+" : "");
}

/// The lines of a failing check shared by the JUnit body and the GitHub block: the fault, the first records, the
/// count of the rest.
std::vector<std::string> failure_lines(const CheckResult& c, size_t max_records) {
  std::vector<std::string> lines;
  if (!c.fault.empty()) lines.push_back("FAULT: " + c.fault);
  for (size_t i = 0; i < c.records.size() && i < max_records; ++i) lines.push_back(c.records[i]);
  const uint64_t shown = std::min<uint64_t>(c.records.size(), max_records);
  if (c.mismatches > shown) lines.push_back("... and " + std::to_string(c.mismatches - shown) + " more");
  return lines;
}

std::string first_line(const CheckResult& c) {
  if (!c.fault.empty()) return c.fault;
  if (!c.records.empty()) return c.records[0];
  return c.note.empty() ? c.scope : c.note;
}

// --- GitHub-flavoured Markdown ---

/// A cell or summary text: no line breaks, no table separators, no HTML.
std::string md_inline(const std::string& s, size_t max_chars = 300) {
  std::string out;
  for (char ch : s) {
    if (ch == '\n' || ch == '\r' || ch == '\t') out += ' ';
    else if (ch == '|') out += "\\|";
    else if (ch == '<') out += "&lt;";
    else if (ch == '>') out += "&gt;";
    else if (ch == '&') out += "&amp;";
    else out += ch;
  }
  if (out.size() > max_chars) out = out.substr(0, max_chars - 3) + "...";
  return out;
}

/// Inline code that survives backticks in its text.
std::string md_code(const std::string& s, size_t max_chars = 1000) {
  std::string t = s.size() > max_chars ? s.substr(0, max_chars - 3) + "..." : s;
  for (char& ch : t)
    if (ch == '\n' || ch == '\r') ch = ' ';
  return t.find('`') == std::string::npos ? "`" + t + "`" : "`` " + t + " ``";
}

/// A line inside a fenced block: no fence can end there.
std::string md_fenced_line(std::string s, size_t max_chars = 300) {
  for (size_t at; (at = s.find("```")) != std::string::npos;) s.replace(at, 3, "'''");
  for (char& ch : s)
    if (ch == '\n' || ch == '\r') ch = ' ';
  return s.size() > max_chars ? s.substr(0, max_chars - 3) + "..." : s;
}

const char* status_icon(CheckStatus s) {
  switch (s) {
    case CheckStatus::kPass: return "✅";
    case CheckStatus::kFail: return "❌";
    case CheckStatus::kSkipped: return "⏭️";
    case CheckStatus::kIncomplete: return "⚠️";
  }
  return "?";
}

std::string verdict_icon(const std::string& v) { return v == "PASS" ? "✅" : v == "FAIL" ? "❌" : "⚠️"; }

constexpr size_t kGithubRecords = 4;  ///< records per failing check in its block

}  // namespace

std::string report_github_markdown(const std::vector<AuditResult>& results, const std::string& reference_verdict,
                                   const std::string& missing) {
  std::string verdict = combined_verdict(results, reference_verdict);
  if (!missing.empty() && verdict == "PASS") verdict = "INCOMPLETE";
  size_t checks = 0, failed = 0, incomplete = 0, skipped = 0, load_faults = 0;
  std::vector<CheckClass> columns;
  for (const AuditResult& r : results) {
    load_faults += !r.load_fault.empty();
    for (const CheckResult& c : r.checks) {
      ++checks;
      failed += c.status == CheckStatus::kFail;
      incomplete += c.status == CheckStatus::kIncomplete;
      skipped += c.status == CheckStatus::kSkipped;
      if (std::find(columns.begin(), columns.end(), c.cls) == columns.end()) columns.push_back(c.cls);
    }
  }
  std::sort(columns.begin(), columns.end());
  std::vector<std::string> lines;
  {
    TextBuilder v;
    v << verdict_icon(verdict) << " **fuseproof audit: " << verdict << "**: ";
    if (failed) v << failed << " of " << checks << " checks failed";
    else v << checks << " checks, none failed";
    if (incomplete) v << ", " << incomplete << " incomplete";
    if (skipped) v << ", " << skipped << " skipped";
    if (load_faults) v << ", " << load_faults << " kernel(s) could not be loaded";
    v << "; reference self-audit " << (reference_verdict.empty() ? std::string("not run") : reference_verdict);
    if (!results.empty()) v << "; " << md_inline(results[0].backend + " on " + results[0].hardware, 200);
    lines.push_back(v.str());
  }
  if (!missing.empty()) {
    lines.push_back("");
    lines.push_back("⚠️ **Evidence missing**, the audit stopped before its classes: " + md_code(missing, 600));
    lines.push_back("");
    lines.push_back("Golden data of a new architecture: `scripts/capture_golden.py --out golden` on its GPU (README, "
                    "\"Golden data\").");
  }
  if (!results.empty()) {
    lines.push_back("");
    TextBuilder h, sep;
    h << "| kernel | op, contract | dtype |";
    sep << "|---|---|---|";
    for (CheckClass c : columns) {
      h << " " << check_class_name(c) << " |";
      sep << ":---:|";
    }
    if (columns.empty()) {  // no class ran anywhere: the load faults
      h << " result |";
      sep << "---|";
    }
    lines.push_back(h.str());
    lines.push_back(sep.str());
  }
  for (const AuditResult& r : results) {
    std::vector<ref::Dtype> dtypes;
    for (const CheckResult& c : r.checks)
      if (std::find(dtypes.begin(), dtypes.end(), c.dtype) == dtypes.end()) dtypes.push_back(c.dtype);
    if (dtypes.empty()) {  // nothing ran: the load fault (or the missing plugin) says why
      lines.push_back("| " + md_inline(r.plugin.kernel_name, 80) + " | " + md_inline(op_of(r) + ", " + r.contract) +
                      " | – | " +
                      (r.not_audited.empty() ? "❌ load: " + md_inline(r.load_fault, 120)
                                             : "⚠️ not audited: " + md_inline(r.not_audited, 120)) +
                      " |");
      continue;
    }
    for (ref::Dtype d : dtypes) {
      TextBuilder row;
      row << "| " << md_inline(r.plugin.kernel_name, 80) << " | " << md_inline(op_of(r) + ", " + r.contract) << " | "
          << ref::dtype_name(d) << " |";
      for (CheckClass cls : columns) {
        const CheckResult* found = nullptr;
        for (const CheckResult& c : r.checks)
          if (c.cls == cls && c.dtype == d) found = &c;
        if (!found) row << " – |";
        else if (found->status == CheckStatus::kFail) row << " ❌ " << mismatch_count(*found) << " |";
        else row << " " << status_icon(found->status) << " |";
      }
      lines.push_back(row.str());
    }
  }
  if (!columns.empty()) {
    lines.push_back("");
    lines.push_back("✅ pass · ❌ fail (mismatches; + stopped early) · ⏭️ skipped · ⚠️ incomplete (ran zero "
                    "cases or not all it was asked: never a pass)");
  }
  // The failing checks (and the incomplete ones), each in a block while the line budget lasts.
  std::vector<std::pair<const AuditResult*, const CheckResult*>> bad;
  for (const AuditResult& r : results)
    for (const CheckResult& c : r.checks)
      if (c.status == CheckStatus::kFail || c.status == CheckStatus::kIncomplete) bad.push_back({&r, &c});
  const size_t kTrailer = 2;  // the blank line and the "not shown" line
  size_t shown = 0;
  for (const auto& [r, c] : bad) {
    std::vector<std::string> block;
    block.push_back("");
    block.push_back("<details><summary>" + std::string(status_icon(c->status)) + " " +
                    md_inline(r->plugin.kernel_name, 80) + " " + check_class_name(c->cls) + " " +
                    ref::dtype_name(c->dtype) + ": " +
                    (c->status == CheckStatus::kFail
                         ? mismatch_count(*c) + " mismatches in " + std::to_string(c->cases) + " cases"
                         : "incomplete after " + std::to_string(c->cases) + " cases") +
                    "</summary>");
    block.push_back("");
    block.push_back("```");
    std::vector<std::string> body = failure_lines(*c, kGithubRecords);
    if (body.empty()) body.push_back(first_line(*c));
    for (const std::string& l : body) block.push_back(md_fenced_line(l));
    block.push_back("```");
    block.push_back("");
    block.push_back("Reproduce: " + md_code(c->reproduce));
    block.push_back("</details>");
    if (lines.size() + block.size() + kTrailer > kGithubMaxLines) break;
    lines.insert(lines.end(), block.begin(), block.end());
    ++shown;
  }
  // The quantization classes' distances from the op's other contracts, one folded block each while the budget lasts.
  for (const AuditResult& r : results)
    for (const CheckResult& c : r.checks) {
      if (c.contract_distances.empty() || c.status == CheckStatus::kSkipped) continue;
      std::vector<std::string> block{"", "<details><summary>" + md_inline(r.plugin.kernel_name, 80) + " " +
                                             check_class_name(c.cls) + " " + ref::dtype_name(c.dtype) +
                                             ": distance from the op's other contracts</summary>", ""};
      for (const std::string& l : contract_distance_lines(c)) block.push_back(l);
      block.push_back("</details>");
      if (lines.size() + block.size() + kTrailer > kGithubMaxLines) break;
      lines.insert(lines.end(), block.begin(), block.end());
    }
  if (shown < bad.size()) {
    std::string rest;
    for (size_t i = shown; i < bad.size(); ++i) {
      const std::string one = (results.size() > 1 ? md_inline(bad[i].first->plugin.kernel_name, 80) + " " : "") +
                              check_class_name(bad[i].second->cls) + " " + ref::dtype_name(bad[i].second->dtype);
      if (rest.size() + one.size() > 400) {
        rest += ", ...";
        break;
      }
      rest += (rest.empty() ? "" : ", ") + one;
    }
    lines.push_back("");
    lines.push_back("… and " + std::to_string(bad.size() - shown) + " more failing checks not shown (" + rest +
                    "): the full `--report` and `--json` reports have every record and reproduce command.");
  }
  std::string out;
  for (const std::string& l : lines) {
    if (out.size() + l.size() + 1 > kGithubMaxChars) break;
    out += l + "\n";
  }
  return out;
}

std::string report_junit(const std::vector<AuditResult>& results, const std::string& reference_verdict,
                         const std::string& missing) {
  std::vector<junit::TestSuite> suites;
  if (!missing.empty()) {
    junit::TestSuite s;
    s.name = "fuseproof.audit";
    s.cases.push_back(junit::failed_case(
        s.name, "golden data", "incomplete", "INCOMPLETE (never a pass): " + missing,
        missing + "\nGolden data of a new architecture: scripts/capture_golden.py --out golden on its GPU (README, "
                  "\"Golden data\")"));
    suites.push_back(s);
  }
  if (!reference_verdict.empty()) {
    junit::TestSuite ref_suite;
    ref_suite.name = "fuseproof.reference";
    junit::TestCase c = junit::passed_case("fuseproof.reference", "self-audit",
                                           "the oracle against every captured GPU's golden data: " + reference_verdict);
    if (reference_verdict != "PASS") {
      const std::string out = c.system_out;
      c = junit::failed_case(c.classname, c.name, reference_verdict == "FAIL" ? "mismatch" : "incomplete",
                             "reference self-audit: " + reference_verdict +
                                 " (fuseproof reference-audit prints every row)",
                             "Reproduce: fuseproof reference-audit");
      c.system_out = out;
    }
    ref_suite.cases.push_back(c);
    suites.push_back(ref_suite);
  }
  for (const AuditResult& r : results) {
    junit::TestSuite suite;
    const std::string op = op_of(r);
    suite.name = "fuseproof.audit." + op + "." + r.contract;
    suite.seconds = r.seconds;
    suite.properties = {{"kernel", r.plugin.kernel_name},
                        {"op", op},
                        {"contract", r.contract},
                        {"claimed_contract", r.plugin.contract},
                        {"device", r.hardware},
                        {"backend", r.backend},
                        {"golden", r.golden},
                        {"plugin", r.plugin.path},
                        {"plugin_sha256", r.plugin.sha256},
                        {"seed", std::to_string(r.seed)},
                        {"command", r.command},
                        {"verdict", r.verdict()}};
    if (!r.load_fault.empty())
      suite.cases.push_back(junit::failed_case(
          suite.name, "load", "fault", r.load_fault,
          "The subject could not be loaded: no class ran.\n" + r.load_fault + "\nReproduce: " + r.command));
    if (!r.not_audited.empty())
      suite.cases.push_back(junit::failed_case(suite.name, "plugin", "incomplete", r.not_audited,
                                               "Not audited: no class ran.\n" + r.not_audited));
    for (const CheckResult& k : r.checks) {
      junit::TestCase c;
      c.classname = suite.name;
      c.name = std::string(check_class_name(k.cls)) + "[" + ref::dtype_name(k.dtype) + "]";
      c.seconds = k.seconds;
      const std::string scope = k.scope + (k.note.empty() ? "" : "; " + k.note);
      switch (k.status) {
        case CheckStatus::kPass:
          c.system_out = (k.cls == CheckClass::kRejection
                              ? std::to_string(k.cases) + " probes, every one as the ABI says."
                              : no_errors_line(k, op, r.contract)) +
                         (scope.empty() ? "" : "\nscope: " + scope);
          for (const std::string& l : contract_distance_lines(k)) c.system_out += "\n" + l;
          break;
        case CheckStatus::kSkipped:
          c.outcome = junit::Outcome::kSkipped;
          c.message = k.note.empty() ? k.scope : k.note;
          break;
        case CheckStatus::kFail:
        case CheckStatus::kIncomplete: {
          const bool fail = k.status == CheckStatus::kFail;
          c.outcome = junit::Outcome::kFailure;
          c.type = !fail ? "incomplete" : !k.fault.empty() ? "fault" : "mismatch";
          c.message = fail ? std::string(check_class_name(k.cls)) + " " + ref::dtype_name(k.dtype) + ": " +
                                 mismatch_count(k) + " mismatches in " + std::to_string(k.cases) + " cases: " +
                                 first_line(k)
                           : "INCOMPLETE after " + std::to_string(k.cases) + " cases (never a pass): " + first_line(k);
          std::string text;
          for (const std::string& l : failure_lines(k, k.records.size())) text += l + "\n";
          if (fail)
            text += std::string("distance from the contract (ulps") +
                    (k.stopped_early ? ", up to the early stop: --stop-after 0 for exact counts" : "") +
                    "): " + k.vs_contract.line() + "\n";
          if (!scope.empty()) text += "scope: " + scope + "\n";
          for (const std::string& l : contract_distance_lines(k)) text += l + "\n";
          text += "Reproduce: " + k.reproduce;
          c.text = text;
          break;
        }
      }
      suite.cases.push_back(c);
    }
    suites.push_back(suite);
  }
  return junit::to_xml(suites);
}

void write_reports(const std::vector<AuditResult>& results, const ReportFiles& files,
                   const std::string& reference_verdict) {
  if (!files.markdown.empty()) {
    std::string md;
    if (files.markdown_format == ReportFormat::kGithub) {
      md = report_github_markdown(results, reference_verdict);
    } else {
      for (const AuditResult& r : results) md += report_markdown(r) + "\n";
    }
    write_text_file(files.markdown, md);
  }
  if (!files.json.empty()) {
    nlohmann::json j = results.size() == 1 ? report_json_of(results[0], reference_verdict) : nlohmann::json::object();
    if (results.size() != 1) {
      j["tool"] = "fuseproof audit";
      j["audits"] = nlohmann::json::array();
      for (const AuditResult& r : results) j["audits"].push_back(report_json_of(r, reference_verdict));
    }
    write_text_file(files.json, j.dump(2) + "\n");
  }
  if (!files.junit.empty()) write_text_file(files.junit, report_junit(results, reference_verdict));
}

void write_incomplete_reports(const std::vector<AuditResult>& results, const ReportFiles& files,
                              const std::string& reference_verdict, const std::string& missing) {
  if (!files.markdown.empty() && files.markdown_format == ReportFormat::kGithub)
    write_text_file(files.markdown, report_github_markdown(results, reference_verdict, missing));
  if (!files.junit.empty()) write_text_file(files.junit, report_junit(results, reference_verdict, missing));
}

void write_text_file(const std::string& path, const std::string& text) {
  try {
    write_file_atomically(path, text);  // a run killed mid-write leaves the previous report intact
  } catch (const std::exception& e) {
    throw UsageError(std::string("audit: ") + e.what());
  }
}

}  // namespace fuseproof::audit
