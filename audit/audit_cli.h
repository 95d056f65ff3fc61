// audit_cli.h: the `audit` subcommand of the fuseproof CLI (CLI11), and the verdict report shared with front ends.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "audit/audit_engine.h"
#include "audit/audit_report.h"

namespace fuseproof::audit {

/// Adds `audit` to `app`. Its callback runs the audit (every op's built-in kernel unless --op or --plugin names one)
/// and reports its status by throwing CLI::RuntimeError: 0 pass, 1 a check failed (a mismatch, a fault, a hang) or a
/// mutant survived, 2 a usage or setup error, 3 evidence missing (golden data absent; verdict INCOMPLETE), 4 a corrupt
/// or foreign data file; every non-zero status after one line.
void add_audit_subcommand(CLI::App& app);

/// Writes the reports (write_reports), prints the verdict table of each result and returns the exit status (0, 1 or
/// 3). `reference_verdict` is the reference self-audit's ("PASS", "FAIL", "INCOMPLETE", or "" when it did not run).
int report_audits(const std::vector<AuditResult>& results, const ReportFiles& reports,
                  const std::string& reference_verdict);

}  // namespace fuseproof::audit
