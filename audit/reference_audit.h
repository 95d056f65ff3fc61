// reference_audit.h: the reference self-audit — does the CPU oracle predict the captured GPU bit for bit?
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "reference/op_spec.h"

namespace CLI { class App; }

namespace fuseproof::audit {

/// One row of the verdict table.
struct VerdictRow {
  std::string check;
  std::string dtype;
  uint64_t cases = 0;
  uint64_t mismatches = 0;
  std::string verdict;  ///< PASS, FAIL, INFO (reported, not asserted) or MISSING (no golden data for the arch)
  std::string detail;
};

struct ReferenceAuditOptions {
  std::string golden_dir;
  std::string golden_build_dir;
  bool whole_domain = true;  ///< the 2^32 digests of every tabulated op and contract, per dtype
  bool progress = false;
  /// The ops whose whole-domain digests are checked (an audit of one op checks the golden data its verdict rests
  /// on); empty: every op, and `x + bias` (add_round) too. Activation tables and NaN patterns are always checked.
  std::vector<std::string> ops;
  /// An op named here has only these contracts' whole-domain digests checked (every contract of an op not named).
  std::map<std::string, std::vector<ref::Contract>> contracts;
  /// The dtypes whose whole-domain digests are checked (empty: both).
  std::vector<ref::Dtype> dtypes;
};

/// Runs the reference checks against every captured architecture's golden data (options.ops: which ops' digests).
/// The scope in words: "every op" or "the whole-domain digests of silu_and_mul".
std::string reference_audit_scope(const ReferenceAuditOptions& options);
/// Runs every reference check against every captured architecture's golden data.
std::vector<VerdictRow> run_reference_audit(const ReferenceAuditOptions& options);

/// Prints rows as an aligned table; returns true when no row is FAIL.
bool print_verdict_table(const std::string& title, const std::vector<VerdictRow>& rows);

/// FAIL when a row failed, else INCOMPLETE when a row is MISSING (or there are no rows), else PASS.
std::string overall_verdict(const std::vector<VerdictRow>& rows);
/// The exit status of a verdict: PASS 0, FAIL 1, INCOMPLETE 3.
int verdict_exit_status(const std::string& verdict);

/// The one stderr line of a verdict other than PASS, naming the rows behind it: "fuseproof audit: FAIL: 2 of 13 checks
/// failed (domain bf16, extreme fp16)"; INCOMPLETE names the MISSING and INCOMPLETE rows, or `when_none` when no row
/// says why. "" for PASS.
std::string verdict_summary_line(const std::string& tool, const std::string& verdict,
                                 const std::vector<VerdictRow>& rows, const std::string& when_none);

/// `fuseproof reference-audit`.
void add_reference_audit_command(CLI::App& app);

}  // namespace fuseproof::audit
