// audit_report.h: the audit's reports, all rendered from the AuditResult: Markdown (full, or GitHub-flavoured for a
// pull-request comment), JSON and JUnit XML: kernel, hardware, reference, every check, reproduce commands.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "audit/audit_engine.h"
#include "common/atomic_file.h"

namespace fuseproof::audit {

/// How `--report` renders: the full Markdown report, or GitHub-flavoured Markdown short enough for a pull-request
/// comment (a verdict line, the class x dtype table, the first records of each failure, the reproduce commands).
enum class ReportFormat { kMarkdown, kGithub };
/// "markdown", "github".
const char* report_format_name(ReportFormat f);
std::optional<ReportFormat> parse_report_format(const std::string& s);

/// The report files of one audit command ("": not written).
struct ReportFiles {
  std::string markdown;  ///< --report
  ReportFormat markdown_format = ReportFormat::kMarkdown;
  std::string json;      ///< --json
  std::string junit;     ///< --junit
  std::vector<OutputArgument> outputs() const;  ///< the files to be written, by option (empty: not given)
};

/// The verdict of a command's audits and its reference self-audit ("" when it did not run): FAIL if an audit or the
/// reference self-audit failed, else INCOMPLETE if one is incomplete, else the reference self-audit's when that is
/// not PASS, else PASS.
std::string combined_verdict(const std::vector<AuditResult>& results, const std::string& reference_verdict);

/// `reference_verdict`: the reference self-audit's verdict in this command ("" when it did not run).
nlohmann::json report_json_of(const AuditResult& r, const std::string& reference_verdict = "");
std::string report_markdown(const AuditResult& r);

/// GitHub's comment limit is 65,536 characters; the summary stays under both figures whatever the audit found.
inline constexpr size_t kGithubMaxLines = 60;
inline constexpr size_t kGithubMaxChars = 65000;
/// GitHub-flavoured Markdown: one verdict line, a table of class x dtype per kernel, each failing check's first
/// records and reproduce command in a <details> block while the line budget lasts, then a line naming the rest.
/// `missing`: the evidence a run lacked when it stopped before its classes (golden data of the architecture): the
/// verdict is then INCOMPLETE and the summary says what is missing.
std::string report_github_markdown(const std::vector<AuditResult>& results, const std::string& reference_verdict,
                                   const std::string& missing = "");

/// JUnit XML: a <testsuite> per audit (properties: kernel, op, contract, device, ...), a <testcase> per check class
/// and dtype (classname `fuseproof.audit.<op>.<contract>`, name `<class>[<dtype>]`): a pass; <failure> with the
/// records, histogram and reproduce command; <failure type="incomplete"> for a class that ran zero cases or not all
/// it was asked (never a pass); <skipped> for a class skipped for a stated reason. A subject that could not load is
/// a failing `load` case; the reference self-audit, when it ran, a suite of one case; `missing` (as above), a failing
/// `golden data` case of type incomplete.
std::string report_junit(const std::vector<AuditResult>& results, const std::string& reference_verdict,
                         const std::string& missing = "");

/// Writes every report of `files` (atomically; several audits: one Markdown after the other, JSON {"audits": [...]}).
void write_reports(const std::vector<AuditResult>& results, const ReportFiles& files,
                   const std::string& reference_verdict);
/// A run that stopped for missing evidence (exit 3) before its classes: the JUnit and GitHub reports still say so
/// (INCOMPLETE, never a pass, with what is missing); the full Markdown and JSON reports are not written.
void write_incomplete_reports(const std::vector<AuditResult>& results, const ReportFiles& files,
                              const std::string& reference_verdict, const std::string& missing);

/// Writes `text` to `path` atomically (a temporary file beside it, then rename); throws std::runtime_error (one line)
/// on failure, leaving any previous file intact.
void write_text_file(const std::string& path, const std::string& text);

/// The Markdown lines of a quantization class's distances from the op's other contracts (CheckResult::
/// contract_distances), one contract after another; defined with the quantization classes (audit/quant_report.cpp).
std::vector<std::string> contract_distance_lines(const CheckResult& r);

}  // namespace fuseproof::audit
