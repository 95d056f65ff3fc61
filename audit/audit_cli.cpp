// audit_cli.cpp: option parsing and validation for `fuseproof audit`, and the report files.
#include "audit/audit_cli.h"

#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

#include "audit/audit_engine.h"
#include "audit/audit_report.h"
#include "audit/mutation_driver.h"
#include "audit/reference_audit.h"

namespace fuseproof::audit {

namespace {

struct CliState {
  AuditOptions opt;
  std::string dtype = "all";
  std::string only;
  std::string report_md;
  std::string report_json;
  std::string mutants;
  int mutant_timeout = 300;
  bool reference = true;       ///< run the reference self-audit first (built-in kernel only)
  bool reference_domain = true;  ///< include its two 2^32 digests per dtype
  std::vector<std::string> raw_args;
};

[[noreturn]] void usage_error(const std::string& line) {
  std::cerr << line << '\n';
  throw CLI::RuntimeError(2);
}

void run(CliState& s, CLI::App& sub) {
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
    if (!o.only) usage_error("audit: unknown --only " + s.only + " (rejection, extreme, property, widths, domain, pdl)");
  }
  if (!o.tanh_model.empty() && !ref::parse_tanh_model(o.tanh_model))
    usage_error("audit: unknown --tanh-model " + o.tanh_model + " (cuda, libm, exact)");
  if (!s.mutants.empty() && !o.plugin.empty()) usage_error("audit: --mutants and --plugin exclude each other");
  std::ostringstream cmd;
  cmd << "fuseproof audit";
  for (const auto& a : s.raw_args) cmd << ' ' << a;
  o.command = cmd.str();
  try {
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
      if (m.killed != m.total) throw CLI::RuntimeError(1);
      return;
    }
    // The oracle first: a kernel audit means something only if the reference predicts the captured GPUs.
    std::vector<VerdictRow> rows;
    bool reference_ok = true;
    if (s.reference && o.plugin.empty() && !o.only) {
      ReferenceAuditOptions ro;
      ro.golden_dir = o.golden.dir;
      ro.golden_build_dir = o.golden.build_dir;
      ro.whole_domain = s.reference_domain;
      ro.progress = false;
      rows = run_reference_audit(ro);
      reference_ok = print_verdict_table("reference self-audit (the oracle against golden data from GPUs)", rows);
      std::printf("\n");
    }
    const AuditResult r = run_audit(o);
    if (!s.report_md.empty()) write_text_file(s.report_md, report_markdown(r));
    if (!s.report_json.empty()) write_text_file(s.report_json, report_json(r).dump(2) + "\n");
    std::vector<VerdictRow> verdicts;
    for (const CheckResult& c : r.checks)
      verdicts.push_back({check_class_name(c.cls), ref::dtype_name(c.dtype), c.cases, c.mismatches,
                          c.status == "pass" ? "PASS" : c.status == "fail" ? "FAIL" : "SKIPPED",
                          c.status == "skipped" ? c.note : c.scope.substr(0, 72) + (c.scope.size() > 72 ? "..." : "")});
    print_verdict_table("kernel audit: " + r.plugin.kernel_name + ", backend " + r.backend, verdicts);
    std::printf("\nverdict: %s\n", r.passed && reference_ok ? "PASS" : "FAIL");
    if (!r.passed || !reference_ok) throw CLI::RuntimeError(1);
  } catch (const CLI::RuntimeError&) {
    throw;
  } catch (const std::exception& e) {
    usage_error(e.what());
  }
  (void)sub;
}

}  // namespace

void add_audit_subcommand(CLI::App& app) {
  auto state = std::make_shared<CliState>();
  CLI::App* sub = app.add_subcommand("audit", "Run the whole battery on a fused kernel (built in, or a plugin .so)");
  AuditOptions& o = state->opt;
  sub->add_option("--op", o.op, "Op to audit (bias_gelu_tanh)")->capture_default_str();
  sub->add_flag("!--no-reference", state->reference, "Skip the reference self-audit that runs before the built-in kernel's");
  sub->add_flag("!--quick", state->reference_domain, "Reference self-audit without its 2^32-pair digests");
  sub->add_option("--plugin", o.plugin, "Kernel plugin .so (kernels/fuseproof_kernel_abi.h); default: the built-in");
  sub->add_option("--backend", o.backend, "cuda or emulated; default: the plugin's memory, else cuda when a GPU works");
  sub->add_option("--dtype", state->dtype, "bf16, fp16 or all")->capture_default_str();
  sub->add_option("--report", state->report_md, "Write a Markdown report");
  sub->add_option("--json", state->report_json, "Write a JSON report");
  sub->add_option("--only", state->only, "Run one check class: rejection, extreme, property, widths, domain, pdl");
  sub->add_option("--seed", o.seed, "Seed of every random input")->capture_default_str();
  sub->add_option("--tanh-model", o.tanh_model, "Reference tanh: cuda, libm, exact (default: by backend)");
  sub->add_option("--domain-biases", o.domain_biases, "Biases in the domain class (65536 = all 2^32 pairs)");
  sub->add_option("--max-width", o.max_width, "Every valid width up to this");
  sub->add_option("--property-cases", o.property_cases, "Random shapes per dtype")->capture_default_str();
  sub->add_option("--stop-after", o.stop_after, "Stop a check class after this many mismatches (0: never)")
      ->capture_default_str();
  sub->add_option("--records", o.records, "Mismatch lines kept per check")->capture_default_str();
  sub->add_option("--golden-dir", o.golden.dir, "golden/ (default: $FUSEPROOF_GOLDEN_DIR or the source tree)");
  sub->add_option("--golden-build-dir", o.golden.build_dir, "Unpacked golden archives (default: the build tree)");
  sub->add_option("--mutants", state->mutants, "Audit every mutant plugin in this folder and print the score");
  sub->add_option("--mutant-timeout", state->mutant_timeout, "Seconds per mutant before it is killed")
      ->capture_default_str();
  sub->preparse_callback([state, sub](size_t) { state->raw_args.clear(); (void)sub; });
  sub->callback([state, sub] {
    // Rebuild the command line for the report from what CLI11 parsed (defaults omitted).
    for (const CLI::Option* opt : sub->get_options()) {
      if (opt->count() == 0 || opt->get_name() == "--help") continue;
      for (const auto& v : opt->results()) state->raw_args.push_back(opt->get_name() + " " + v);
    }
    run(*state, *sub);
  });
}

}  // namespace fuseproof::audit
