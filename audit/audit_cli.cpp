// audit_cli.cpp: `fuseproof audit`: the option table on the command line, the reference self-audit, every op's
// audit in turn, the reports.
#include "audit/audit_cli.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <future>
#include <sstream>

#include "audit/audit_engine.h"
#include "audit/audit_report.h"
#include "audit/kernel_runner.h"
#include "audit/mutation_driver.h"
#include "audit/quant_classes.h"
#include "audit/reference_audit.h"
#include "common/cli_exit.h"
#include "common/exit_status.h"
#include "common/golden_library.h"
#include "common/parallel_for.h"
#include "common/parse_integer.h"
#include "reference/quant_spec.h"

namespace fuseproof::audit {

namespace {

struct CliState {
  AuditOptions opt;
  std::vector<std::string> numbers;
  std::function<std::vector<std::string>()> given;
  ReportFiles reports;
  std::string report_format = "markdown";
  std::string mutants;
  std::string child_spec;
  int mutant_timeout = 600;
  bool reference = true;         ///< run the reference self-audit first
  bool reference_domain = true;  ///< include its 2^32 digests
  std::vector<std::string> raw_args;
};

[[noreturn]] void usage_error(const std::string& line) { throw UsageError(line); }

void validate(CliState& s) {
  AuditOptions& o = s.opt;
  const ref::QuantOpSpec* quant = ref::find_quant_op(o.op);
  if (!o.op.empty() && o.op != "all" && !ref::find_op(o.op) && !quant)
    usage_error("audit: unknown --op " + o.op + " (" + ref::op_names() + ", " + ref::quant_op_names() + ", all)");
  // A contract of another op (fp32 of nvfp4_quant) is refused where the op is known (plugin_subject, the description).
  if (!o.contract.empty() && !ref::parse_contract(o.contract) && !ref::parse_quant_contract(o.contract)) {
    std::string quant_contracts;
    for (ref::QuantContract c : ref::kAllQuantContracts) quant_contracts += std::string(", ") + ref::quant_contract_name(c);
    usage_error("audit: unknown --contract " + o.contract + " (eager, fp32, fma" + quant_contracts + ")");
  }
  apply_cli_options(o, s.numbers, s.given());
  if (!s.mutants.empty() && !o.plugin.empty()) usage_error("audit: --mutants and --plugin exclude each other");
  if (o.op == "all" && !o.plugin.empty()) usage_error("audit: --op all audits the built-in kernels; drop --plugin");
  if (o.op == "all" && !o.contract.empty()) usage_error("audit: --contract needs one --op");
  const auto format = parse_report_format(s.report_format);
  if (!format) usage_error("audit: unknown --report-format " + s.report_format + " (markdown, github)");
  s.reports.markdown_format = *format;
  if (!s.mutants.empty() && (!s.reports.junit.empty() || *format != ReportFormat::kMarkdown))
    usage_error("audit: --junit and --report-format github report a kernel audit, not --mutants");
}

int run_mutation(CliState& s) {
  AuditOptions& o = s.opt;
  if (o.op == "all") o.op.clear();
  std::printf("fuseproof audit: mutants in %s\n", s.mutants.c_str());
  const MutationResult m = run_mutants(o, s.mutants, s.mutant_timeout);
  std::printf("Mutation score: %zu / %zu killed (%s)\n", m.killed, m.total, m.backend.c_str());
  if (!s.reports.markdown.empty()) write_text_file(s.reports.markdown, mutation_markdown(m));
  if (!s.reports.json.empty()) write_text_file(s.reports.json, mutation_json(m).dump(2) + "\n");
  for (const auto& mo : m.mutants)
    if (mo.status == MutantStatus::kError) usage_error("audit: mutant " + mo.plugin + " could not be audited: " + mo.first_record);
  if (m.total == 0) usage_error("audit: no " + m.backend + " mutant plugins in " + s.mutants);
  return m.killed == m.total ? kExitPass : kExitFail;
}

void run(CliState& s) {
  AuditOptions& o = s.opt;
  if (!s.child_spec.empty()) {  // the child side of isolation: one class, in this process
    Subject subject = plugin_subject(o);
    throw CLI::RuntimeError(run_audit_child(s.child_spec, subject));
  }
  if (o.op.empty() && o.plugin.empty()) o.op = "all";
  validate(s);
  std::ostringstream cmd;
  cmd << "fuseproof audit";
  for (const auto& a : s.raw_args) cmd << ' ' << a;
  o.command = cmd.str();
  // Every report path checked and claimed before anything runs: a refusal writes nothing.
  const OutputClaims claims = claim_output_paths(s.reports.outputs());
  if (!s.mutants.empty()) throw CLI::RuntimeError(run_mutation(s));
  // The oracle beside the first subject's classes (once it has loaded): a kernel audit means something only if the
  // reference predicts the captured GPUs, and the verdict needs both. The self-audit runs on a thread of this process
  // while the classes run in their children; its table is printed when the first op's audit has ended.
  std::string reference_verdict;
  bool reference_done = false;
  const bool every_op = o.op == "all";
  std::future<std::vector<VerdictRow>> reference_rows;  // waited for (and so joined) on every way out
  std::string reference_title;
  o.on_described = [&](const std::string& described_op, const std::string& described_contract) {
    if (reference_done) return;
    reference_done = true;
    if (!s.reference) {
      std::printf("\nreference self-audit: skipped (--no-reference)\n\n");
      return;
    }
    ReferenceAuditOptions ro;
    ro.golden_dir = o.golden_dir.empty() ? default_golden_dir() : o.golden_dir;
    ro.golden_build_dir = o.golden_build_dir.empty() ? default_golden_build_dir() : o.golden_build_dir;
    ro.whole_domain = s.reference_domain;
    // The audit of one op checks the golden data its verdict rests on; `--op all` checks every op's. A quantization
    // op rests on its activation stage's (a quantizer alone: on the tables only).
    if (!every_op) ro.ops = {described_op};
    if (!every_op) ro.dtypes = o.dtypes;  // the dtypes audited (resolved from --dtype)
    // Of an elementwise op, the digests of the contract judged (and eager's, which a non-eager contract's classes
    // also compute); the op's other contracts are `fuseproof reference-audit`'s and `--op all`'s.
    if (const auto c = ref::parse_contract(described_contract); c && !every_op && ref::find_op(described_op)) {
      ro.contracts[described_op] = {*c};
      if (*c != ref::Contract::kEager) ro.contracts[described_op].push_back(ref::Contract::kEager);
    }
    if (const ref::QuantOpSpec* q = ref::find_quant_op(described_op); q && !q->activation.family_op.empty() && !every_op)
      ro.ops.push_back(q->activation.family_op);
    reference_title = "reference self-audit (the oracle against golden data from GPUs: " + reference_audit_scope(ro) + ")";
    std::printf("\n%s: running beside the classes; its table follows them\n\n", reference_title.c_str());
    std::fflush(stdout);
    reference_rows = run_beside([ro] { return run_reference_audit(ro); });
  };
  // Waits for the self-audit and prints it (once); rethrows what it threw (MissingDataError: golden data missing).
  const auto finish_reference = [&] {
    if (!reference_rows.valid()) return;
    const std::vector<VerdictRow> rows = reference_rows.get();
    print_verdict_table(reference_title, rows);
    reference_verdict = overall_verdict(rows);
    std::printf("reference self-audit: %s\n\n", reference_verdict.c_str());
    std::fflush(stdout);
  };
  std::vector<std::string> ops;
  if (o.op == "all") {
    // Every elementwise op, then every quantization op's built-in kernel of its first contract.
    for (const ref::OpSpec& op : ref::op_registry()) ops.push_back(op.name);
    for (const ref::QuantOpSpec& op : ref::quant_op_registry()) ops.push_back(op.name);
  } else
    ops.push_back(o.op);
  std::vector<AuditResult> results;
  try {
    for (const std::string& op : ops) {
      AuditOptions one = o;
      one.op = op;
      // --only a class of one kind of op (blocks, layout; extreme, domain, ...): the ops of the other kind are not run.
      if (ops.size() > 1 && o.only_class) {
        const bool quant_op = ref::find_quant_op(op) != nullptr;
        const auto& qc = quant_check_classes();
        const bool runs = quant_op ? std::find(qc.begin(), qc.end(), *o.only_class) != qc.end()
                                   : std::find(std::begin(kAllCheckClasses), std::end(kAllCheckClasses),
                                               *o.only_class) != std::end(kAllCheckClasses);
        if (!runs) continue;
      }
      if (ops.size() > 1) {
        // Every op's built-in kernel: an op whose plugin is not built is reported (INCOMPLETE), and the others run.
        if (o.backend.empty()) one.backend = cuda_runner_available(nullptr) ? "cuda" : "emulated";
        const std::string path = builtin_plugin_path(op, one.backend);
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec)) {
          AuditResult missing;
          missing.op = op;
          missing.backend = one.backend;
          const ref::QuantOpSpec* q = ref::find_quant_op(op);
          missing.contract = q ? ref::quant_contract_name(q->contracts.front().contract)
                               : ref::contract_name(ref::find_op(op)->contracts.front().contract);
          missing.command = o.command;
          missing.seed = o.seed;
          missing.plugin.path = path;
          missing.plugin.op = op;
          missing.plugin.kernel_name = "built-in " + op + " (" + one.backend + ")";
          missing.not_audited = "no built-in plugin " + path + " for op " + op + " (not built)";
          std::printf("fuseproof audit: op %s: %s; not audited (INCOMPLETE)\n\n", op.c_str(),
                      missing.not_audited.c_str());
          std::fflush(stdout);
          results.push_back(std::move(missing));
          continue;
        }
      }
      Subject subject = plugin_subject(one);
      results.push_back(run_audit(one, subject));
      std::printf("\n");
      finish_reference();
    }
    finish_reference();
  } catch (const MissingDataError& e) {
    std::printf("\nverdict: INCOMPLETE (%s)\n", e.what());
    std::fflush(stdout);
    write_incomplete_reports(results, s.reports, reference_verdict, e.what());
    throw;
  }
  throw CLI::RuntimeError(report_audits(results, s.reports, reference_verdict));
}

}  // namespace

int report_audits(const std::vector<AuditResult>& results, const ReportFiles& reports,
                  const std::string& reference_verdict) {
  write_reports(results, reports, reference_verdict);
  for (const AuditResult& r : results) {
    std::vector<VerdictRow> verdicts;
    if (!r.load_fault.empty()) verdicts.push_back({"load", "-", 0, 1, "FAIL", r.load_fault.substr(0, 100)});
    if (!r.not_audited.empty()) verdicts.push_back({"plugin", "-", 0, 0, "MISSING", r.not_audited.substr(0, 100)});
    for (const CheckResult& c : r.checks) {
      std::string detail = c.status == CheckStatus::kSkipped ? c.note : !c.fault.empty() ? c.fault : c.scope;
      if (detail.size() > 100) detail = detail.substr(0, 97) + "...";
      verdicts.push_back({check_class_name(c.cls), ref::dtype_name(c.dtype), c.cases, c.mismatches,
                          check_status_upper(c.status), detail});
    }
    print_verdict_table("kernel audit: " + r.plugin.kernel_name + ", op " + r.op + ", contract " + r.contract +
                            ", backend " + r.backend,
                        verdicts);
  }
  const std::string v = combined_verdict(results, reference_verdict);
  if (v == "PASS" && reference_verdict.empty()) {
    std::printf("\nverdict: PASS (the reference self-audit did not run in this command)\n");
  } else {
    std::printf("\nverdict: %s%s\n", v.c_str(),
                v == "INCOMPLETE" ? " (evidence missing: see the INCOMPLETE or MISSING rows)" : "");
  }
  std::fflush(stdout);
  if (v != "PASS") {  // every non-zero status says why on stderr, in one line
    std::vector<VerdictRow> rows;
    if (reference_verdict == "FAIL" || reference_verdict == "INCOMPLETE")
      rows.push_back({"reference self-audit", "", 0, 0, reference_verdict == "FAIL" ? "FAIL" : "INCOMPLETE", ""});
    for (const AuditResult& r : results) {
      const std::string of = results.size() > 1 ? r.op + " " : "";
      if (!r.load_fault.empty()) rows.push_back({of + "load", "", 0, 1, "FAIL", ""});
      if (!r.not_audited.empty()) rows.push_back({of + "plugin", "", 0, 0, "MISSING", ""});
      for (const CheckResult& c : r.checks)
        rows.push_back({of + check_class_name(c.cls), ref::dtype_name(c.dtype), c.cases, c.mismatches,
                        check_status_upper(c.status), ""});
    }
    std::fprintf(stderr, "%s\n",
                 verdict_summary_line("fuseproof audit", v, rows, "every class was skipped; nothing was judged").c_str());
  }
  return verdict_exit_status(v);
}

void add_audit_subcommand(CLI::App& app) {
  auto state = std::make_shared<CliState>();
  CLI::App* sub = app.add_subcommand("audit", "Run the whole battery on a fused kernel (built in, or a plugin .so)");
  add_options(*sub, state->opt, state->numbers, &state->given);
  sub->add_flag("!--no-reference", state->reference, "Skip the reference self-audit that runs before the kernel's");
  sub->add_flag("!--quick", state->reference_domain, "Reference self-audit without its 2^32-pair digests");
  sub->add_option("--report", state->reports.markdown, "Write a Markdown report (--report-format)")->check(output_file_option());
  sub->add_option("--report-format", state->report_format,
                  "markdown (the full report) or github (short enough for a pull-request comment)")
      ->capture_default_str();
  sub->add_option("--json", state->reports.json, "Write a JSON report")->check(output_file_option());
  sub->add_option("--junit", state->reports.junit, "Write a JUnit XML report: a testcase per check class and dtype")->check(output_file_option());
  sub->add_option("--mutants", state->mutants, "Audit every mutant plugin in this folder and print the score");
  sub->add_option("--mutant-timeout", state->mutant_timeout, "Seconds per mutant before it is killed")
      ->check(integer_in<int>(1, 86400))
      ->capture_default_str();
  sub->add_option("--child-spec", state->child_spec, "(internal) run one class as an isolated child")->group("");
  sub->preparse_callback([state](size_t) { state->raw_args.clear(); });
  sub->callback([state, sub] {
    // Rebuild the command line for the report from what CLI11 parsed (defaults omitted).
    for (const CLI::Option* opt : sub->get_options()) {
      if (opt->count() == 0 || opt->get_name() == "--help") continue;
      if (opt->get_expected_min() == 0) {
        state->raw_args.push_back(opt->get_name());
        continue;
      }
      for (const auto& v : opt->results()) state->raw_args.push_back(opt->get_name() + " " + v);
    }
    run(*state);
  });
}

}  // namespace fuseproof::audit
