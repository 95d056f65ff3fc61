// audit_cli.cpp: option parsing and validation for `fuseproof audit`, the reference self-audit, the reports.
#include "audit/audit_cli.h"

#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>

#include "audit/audit_report.h"
#include "audit/mutation_driver.h"
#include "audit/reference_audit.h"
#include "common/exit_status.h"

namespace fuseproof::audit {

namespace {

struct CliState {
  AuditOptions opt;
  std::string dtype = "all";
  std::string only;
  std::string seed;
  std::string shapes;
  std::string model;
  std::string report_md;
  std::string report_json;
  std::string mutants;
  std::string child_spec;
  int mutant_timeout = 600;
  bool reference = true;         ///< run the reference self-audit first
  bool reference_domain = true;  ///< include its two 2^32 digests per dtype
  bool no_isolation = false;
  std::vector<std::string> raw_args;
};

[[noreturn]] void usage_error(const std::string& line) { throw UsageError(line); }

/// The options that shrink a check to nothing or lie outside their range are refused here, one line each.
void validate(CliState& s, const CLI::App& sub) {
  AuditOptions& o = s.opt;
  if (o.op != "bias_gelu_tanh") usage_error("audit: unknown --op " + o.op + " (known: bias_gelu_tanh)");
  if (s.dtype == "all") {
    o.dtypes = {ref::Dtype::kBf16, ref::Dtype::kFp16};
  } else if (auto d = ref::parse_dtype(s.dtype)) {
    o.dtypes = {*d};
  } else {
    usage_error("audit: unknown --dtype " + s.dtype + " (bf16, fp16, all)");
  }
  if (!o.backend.empty() && o.backend != "cuda" && o.backend != "emulated")
    usage_error("audit: unknown --backend " + o.backend + " (cuda, emulated)");
  if (!s.only.empty()) {
    o.only = parse_check_class(s.only);
    if (!o.only) usage_error("audit: unknown --only " + s.only + " (" + check_class_list() + ")");
  }
  if (!o.tanh_model.empty() && !ref::parse_tanh_model(o.tanh_model))
    usage_error("audit: unknown --tanh-model " + o.tanh_model + " (cuda, libm, exact)");
  if (!s.seed.empty()) {
    const bool digits = s.seed.find_first_not_of("0123456789") == std::string::npos && s.seed.size() <= 20;
    unsigned long long v = 0;
    bool ok = digits;
    if (ok) {
      try {
        size_t used = 0;
        v = std::stoull(s.seed, &used);
        ok = used == s.seed.size();
      } catch (const std::exception&) {
        ok = false;
      }
    }
    if (!ok) usage_error("audit: --seed must be an integer in [0, 18446744073709551615], got " + s.seed);
    o.seed = v;
  }
  auto given = [&](const char* name) { return sub.get_option(name)->count() > 0; };
  if (given("--max-width") && (o.max_width < 1 || o.max_width > (int64_t(1) << 20)))
    usage_error("audit: --max-width must be in [1, 1048576], got " + std::to_string(o.max_width));
  if (given("--domain-biases") && (o.domain_biases < 1 || o.domain_biases > 65536))
    usage_error("audit: --domain-biases must be in [1, 65536], got " + std::to_string(o.domain_biases));
  if (o.property_cases < 1 || o.property_cases > 1000000)
    usage_error("audit: --property-cases must be in [1, 1000000], got " + std::to_string(o.property_cases));
  if (o.records < 1 || o.records > 100000)
    usage_error("audit: --records must be in [1, 100000], got " + std::to_string(o.records));
  if (!(o.call_timeout_s > 0 && o.call_timeout_s <= 86400))
    usage_error("audit: --call-timeout must be in (0, 86400] seconds, got " + std::to_string(o.call_timeout_s));
  if (s.mutant_timeout < 1) usage_error("audit: --mutant-timeout must be >= 1, got " + std::to_string(s.mutant_timeout));
  if (!s.shapes.empty()) {
    auto v = parse_shapes(s.shapes);
    o.shapes.insert(o.shapes.end(), v.begin(), v.end());
  }
  if (!s.model.empty()) {
    auto v = model_shapes(s.model);
    o.shapes.insert(o.shapes.end(), v.begin(), v.end());
  }
  if (!o.default_shapes && o.shapes.empty() && (!o.only || *o.only == CheckClass::kShapes))
    usage_error("audit: --no-default-shapes leaves the shapes class empty; give --shapes or --model");
  if (!s.mutants.empty() && !o.plugin.empty()) usage_error("audit: --mutants and --plugin exclude each other");
  o.isolate = !s.no_isolation;
}

void run(CliState& s, CLI::App& sub) {
  AuditOptions& o = s.opt;
  if (!s.child_spec.empty()) {  // the child side of isolation: one class, in this process
    Subject subject = plugin_subject(o);
    throw CLI::RuntimeError(run_audit_child(s.child_spec, subject));
  }
  validate(s, sub);
  std::ostringstream cmd;
  cmd << "fuseproof audit";
  for (const auto& a : s.raw_args) cmd << ' ' << a;
  o.command = cmd.str();
  for (const auto& p : {s.report_md, s.report_json})
    if (!p.empty()) ensure_writable(p);
  if (!s.mutants.empty()) {
    std::printf("fuseproof audit: mutants in %s\n", s.mutants.c_str());
    const MutationResult m = run_mutants(o, s.mutants, s.mutant_timeout);
    std::printf("Mutation score: %zu / %zu killed (%s)\n", m.killed, m.total, m.backend.c_str());
    if (!s.report_md.empty()) write_text_file(s.report_md, mutation_markdown(m));
    if (!s.report_json.empty()) write_text_file(s.report_json, mutation_json(m).dump(2) + "\n");
    for (const auto& mo : m.mutants)
      if (mo.status == "error") usage_error("audit: mutant " + mo.plugin + " could not be audited: " + mo.first_record);
    if (m.total == 0) usage_error("audit: no " + m.backend + " mutant plugins in " + s.mutants);
    if (m.killed != m.total) throw CLI::RuntimeError(kExitFail);
    return;
  }
  // The oracle first (once the subject has loaded): a kernel audit means something only if the reference predicts
  // the captured GPUs.
  std::string reference_verdict;
  o.on_described = [&] {
    if (!s.reference) {
      std::printf("\nreference self-audit: skipped (--no-reference)\n\n");
      return;
    }
    ReferenceAuditOptions ro;
    ro.golden_dir = o.golden.dir;
    ro.golden_build_dir = o.golden.build_dir;
    ro.whole_domain = s.reference_domain;
    ro.progress = false;
    const auto rows = run_reference_audit(ro);
    print_verdict_table(std::string("reference self-audit (the oracle against golden data from GPUs") +
                            (s.reference_domain ? ")" : ", --quick: without the 2^32 digests)"),
                        rows);
    reference_verdict = overall_verdict(rows);
    std::printf("reference self-audit: %s\n\n", reference_verdict.c_str());
    std::fflush(stdout);
  };
  try {
    Subject subject = plugin_subject(o);
    const AuditResult r = run_audit(o, subject);
    throw CLI::RuntimeError(report_audit(r, s.report_md, s.report_json, reference_verdict));
  } catch (const MissingDataError& e) {
    std::printf("\nverdict: INCOMPLETE (%s)\n", e.what());
    std::fflush(stdout);
    throw;
  }
}

}  // namespace

int report_audit(const AuditResult& r, const std::string& report_md, const std::string& report_json,
                 const std::string& reference_verdict) {
  if (!report_md.empty()) write_text_file(report_md, report_markdown(r));
  if (!report_json.empty()) write_text_file(report_json, report_json_of(r, reference_verdict).dump(2) + "\n");
  std::vector<VerdictRow> verdicts;
  if (!r.load_fault.empty()) verdicts.push_back({"load", "-", 0, 1, "FAIL", r.load_fault.substr(0, 100)});
  for (const CheckResult& c : r.checks) {
    const std::string v = c.status == "pass" ? "PASS" : c.status == "fail" ? "FAIL"
                        : c.status == "skipped" ? "SKIPPED" : "INCOMPLETE";
    std::string detail = c.status == "skipped" ? c.note : !c.fault.empty() ? c.fault : c.scope;
    if (detail.size() > 100) detail = detail.substr(0, 97) + "...";
    verdicts.push_back({check_class_name(c.cls), ref::dtype_name(c.dtype), c.cases, c.mismatches, v, detail});
  }
  print_verdict_table("kernel audit: " + r.plugin.kernel_name + ", backend " + r.backend, verdicts);
  std::string v = r.verdict();
  if (v == "PASS" && !reference_verdict.empty() && reference_verdict != "PASS") v = reference_verdict;
  if (v == "PASS" && reference_verdict.empty()) {
    std::printf("\nverdict: PASS (the reference self-audit did not run in this command)\n");
  } else {
    std::printf("\nverdict: %s%s\n", v.c_str(),
                v == "INCOMPLETE" ? " (evidence missing: see the INCOMPLETE or MISSING rows)" : "");
  }
  return verdict_exit_status(v);
}

void add_audit_subcommand(CLI::App& app) {
  auto state = std::make_shared<CliState>();
  CLI::App* sub = app.add_subcommand("audit", "Run the whole battery on a fused kernel (built in, or a plugin .so)");
  AuditOptions& o = state->opt;
  sub->add_option("--op", o.op, "Op to audit (bias_gelu_tanh)")->capture_default_str();
  sub->add_flag("!--no-reference", state->reference, "Skip the reference self-audit that runs before the kernel's");
  sub->add_flag("!--quick", state->reference_domain, "Reference self-audit without its 2^32-pair digests");
  sub->add_option("--plugin", o.plugin, "Kernel plugin .so (kernels/fuseproof_kernel_abi.h); default: the built-in");
  sub->add_option("--backend", o.backend, "cuda or emulated; default: the plugin's memory, else cuda when a GPU works");
  sub->add_option("--dtype", state->dtype, "bf16, fp16 or all")->capture_default_str();
  sub->add_option("--report", state->report_md, "Write a Markdown report");
  sub->add_option("--json", state->report_json, "Write a JSON report");
  sub->add_option("--only", state->only, "Run one check class: " + check_class_list());
  sub->add_option("--seed", state->seed, "Seed of every random input (default 20261130)");
  sub->add_option("--tanh-model", o.tanh_model, "Reference tanh: cuda, libm, exact (default: by backend)");
  sub->add_option("--domain-biases", o.domain_biases, "Biases in the domain class, 1..65536 (65536 = all 2^32 pairs)");
  sub->add_option("--max-width", o.max_width, "Every valid width up to this (default 65536 on CUDA, 16384 on the host)");
  sub->add_option("--property-cases", o.property_cases, "Random shapes per dtype")->capture_default_str();
  sub->add_option("--shapes", state->shapes, "More shapes for the shapes class: ROWSxWIDTH[,ROWSxWIDTH...]");
  sub->add_option("--model", state->model, "A named catalogue of production shapes for the shapes class (wan2.2)");
  sub->add_flag("!--no-default-shapes", o.default_shapes, "The shapes class runs only --shapes and --model");
  sub->add_option("--call-timeout", o.call_timeout_s, "Seconds one call into the kernel may take before it is a hang")
      ->capture_default_str();
  sub->add_flag("--no-isolation", state->no_isolation, "Run every class in this process (a crash ends the audit)");
  sub->add_flag("--first-fail", o.first_fail, "Skip the classes after the first failure (mutation runs on a budget)");
  sub->add_option("--stop-after", o.stop_after, "Stop a check class after this many mismatches (0: never)")
      ->capture_default_str();
  sub->add_option("--records", o.records, "Mismatch lines kept per check")->capture_default_str();
  sub->add_option("--golden-dir", o.golden.dir, "golden/ (default: $FUSEPROOF_GOLDEN_DIR or the source tree)");
  sub->add_option("--golden-build-dir", o.golden.build_dir, "Unpacked golden archives (default: the build tree)");
  sub->add_option("--mutants", state->mutants, "Audit every mutant plugin in this folder and print the score");
  sub->add_option("--mutant-timeout", state->mutant_timeout, "Seconds per mutant before it is killed")
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
    run(*state, *sub);
  });
}

}  // namespace fuseproof::audit
