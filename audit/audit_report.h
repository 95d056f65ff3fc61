// audit_report.h: the audit's Markdown and JSON reports: kernel, hardware, reference, every check, reproduce commands.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "audit/audit_engine.h"

namespace fuseproof::audit {

/// `reference_verdict`: the reference self-audit's verdict in this command ("" when it did not run).
nlohmann::json report_json_of(const AuditResult& r, const std::string& reference_verdict = "");
std::string report_markdown(const AuditResult& r);

/// Throws std::runtime_error("audit: cannot write report PATH: reason") when `path` cannot be opened for writing.
void ensure_writable(const std::string& path);
/// Writes `text` to `path` atomically (a temporary file beside it, then rename); throws std::runtime_error (one line)
/// on failure, leaving any previous file intact.
void write_text_file(const std::string& path, const std::string& text);

}  // namespace fuseproof::audit
