// audit_report.h: the audit's Markdown and JSON reports: kernel, hardware, reference, every check, reproduce commands.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "audit/audit_engine.h"

namespace fuseproof::audit {

nlohmann::json report_json(const AuditResult& r);
std::string report_markdown(const AuditResult& r);

/// Throws std::runtime_error("audit: cannot write report PATH: reason") when `path` cannot be opened for writing.
void ensure_writable(const std::string& path);
/// Writes `text` to `path`; throws std::runtime_error (one line) on failure.
void write_text_file(const std::string& path, const std::string& text);

}  // namespace fuseproof::audit
