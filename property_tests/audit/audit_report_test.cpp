// audit_report_test.cpp: the JUnit and GitHub renderings of an AuditResult: one testcase per class and dtype, a
// zero-case class never a pass, failures carrying records and the reproduce command, a summary within GitHub's limits.
#include <gtest/gtest.h>

#include <iterator>
#include <string>

#include "audit/audit_report.h"

namespace fuseproof::audit {
namespace {

size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

size_t lines_of(const std::string& s) { return count_of(s, "\n"); }

/// Every class of both dtypes passing, as a clean audit of the built-in emulation reports it.
AuditResult passing_audit(const std::string& op = "bias_gelu_tanh") {
  AuditResult r;
  r.plugin.kernel_name = "control_host";
  r.plugin.path = "/lib/libcontrol_host.so";
  r.plugin.op = op;
  r.op = op;
  r.contract = "eager";
  r.backend = "emulated";
  r.hardware = "CPU (emulation)";
  r.golden = "golden/sm_90";
  for (ref::Dtype d : {ref::Dtype::kBf16, ref::Dtype::kFp16})
    for (CheckClass cls : kAllCheckClasses) {
      CheckResult c;
      c.cls = cls;
      c.dtype = d;
      c.cases = 1000;
      c.scope = "some scope";
      c.reproduce = "fuseproof audit --plugin P --only " + std::string(check_class_name(cls)) + " --no-reference";
      r.checks.push_back(c);
    }
  return r;
}

/// extreme bf16 fails with records (one with a control character and markup), pdl is skipped, domain fp16 ran zero
/// cases (incomplete).
AuditResult failing_audit() {
  AuditResult r = passing_audit();
  r.plugin.kernel_name = "host_gelu_unrounded_sum";
  for (CheckResult& c : r.checks) {
    if (c.cls == CheckClass::kExtreme && c.dtype == ref::Dtype::kBf16) {
      c.status = CheckStatus::kFail;
      c.mismatches = 1000;
      c.stopped_early = true;
      for (int i = 0; i < 8; ++i)
        c.records.push_back("bias_gelu_tanh bf16 [r=0,c=" + std::to_string(i) +
                            "] x=0x3F80 b=0x3C00 => 0x3F8A expected 0x3F8B (1 ulp)");
      c.records.push_back("odd \x01 <record> & ]]>");
    } else if (c.cls == CheckClass::kPdl) {
      c.status = CheckStatus::kSkipped;
      c.cases = 0;
      c.note = "host memory has no PDL";
    } else if (c.cls == CheckClass::kDomain && c.dtype == ref::Dtype::kFp16) {
      c.status = CheckStatus::kIncomplete;
      c.cases = 0;
      c.note = "ran zero cases";
    }
  }
  r.passed = false;
  return r;
}

TEST(Audit_Report, JunitHasOneTestcasePerClassAndDtype) {
  const AuditResult r = passing_audit();
  const std::string x = report_junit({r}, "");
  EXPECT_EQ(count_of(x, "<testcase "), r.checks.size());
  for (const CheckResult& c : r.checks)
    EXPECT_EQ(count_of(x, "classname=\"fuseproof.audit.bias_gelu_tanh.eager\" name=\"" +
                              std::string(check_class_name(c.cls)) + "[" + ref::dtype_name(c.dtype) + "]\""),
              1u);
  EXPECT_EQ(count_of(x, "<failure"), 0u);
  EXPECT_NE(x.find("In 1000 cases, no errors found in bias_gelu_tanh bf16 (contract eager)."), std::string::npos);
  for (const char* p : {"kernel", "op", "contract", "device"})
    EXPECT_NE(x.find("<property name=\"" + std::string(p) + "\""), std::string::npos) << p;
}

TEST(Audit_Report, JunitFailureCarriesRecordsAndTheReproduceCommand) {
  const std::string x = report_junit({failing_audit()}, "");
  EXPECT_EQ(count_of(x, "<failure "), 2u);  // extreme bf16 (mismatch) and domain fp16 (incomplete)
  EXPECT_EQ(count_of(x, "type=\"mismatch\""), 1u);
  EXPECT_EQ(count_of(x, "type=\"incomplete\""), 1u);
  EXPECT_EQ(count_of(x, "<skipped "), 2u);  // pdl in both dtypes
  EXPECT_NE(x.find("[r=0,c=7] x=0x3F80 b=0x3C00 =&gt; 0x3F8A expected 0x3F8B (1 ulp)"), std::string::npos) << x;
  EXPECT_NE(x.find("odd \\x01 &lt;record&gt; &amp; ]]&gt;"), std::string::npos);
  EXPECT_NE(x.find("... and 991 more"), std::string::npos);
  EXPECT_NE(x.find("Reproduce: fuseproof audit --plugin P --only extreme --no-reference"), std::string::npos);
  EXPECT_EQ(x.find('\x01'), std::string::npos);
}

TEST(Audit_Report, ZeroCaseClassIsNeverAPass) {
  AuditResult r = passing_audit();
  r.checks[1].status = CheckStatus::kIncomplete;
  r.checks[1].cases = 0;
  r.complete = false;
  const std::string x = report_junit({r}, "");
  EXPECT_EQ(count_of(x, "type=\"incomplete\""), 1u);
  EXPECT_EQ(combined_verdict({r}, ""), "INCOMPLETE");
  EXPECT_NE(report_github_markdown({r}, "").find("fuseproof audit: INCOMPLETE"), std::string::npos);
}

TEST(Audit_Report, ReferenceSelfAuditIsItsOwnSuite) {
  const AuditResult r = passing_audit();
  EXPECT_EQ(count_of(report_junit({r}, ""), "fuseproof.reference"), 0u);
  const std::string pass = report_junit({r}, "PASS");
  EXPECT_NE(pass.find("<testsuite name=\"fuseproof.reference\" tests=\"1\" failures=\"0\""), std::string::npos);
  const std::string fail = report_junit({r}, "FAIL");
  EXPECT_NE(fail.find("<testsuite name=\"fuseproof.reference\" tests=\"1\" failures=\"1\""), std::string::npos);
  EXPECT_EQ(combined_verdict({r}, "FAIL"), "FAIL");
  EXPECT_EQ(combined_verdict({r}, "INCOMPLETE"), "INCOMPLETE");
}

TEST(Audit_Report, LoadFaultIsAFailingCase) {
  AuditResult r = passing_audit();
  r.checks.clear();
  r.load_fault = "crash: signal 11 (SIGSEGV) while loading";
  const std::string x = report_junit({r}, "");
  EXPECT_NE(x.find("name=\"load\""), std::string::npos);
  EXPECT_EQ(count_of(x, "<failure "), 1u);
}

// `fuseproof audit` of every op where one op's built-in plugin is not built: that op is INCOMPLETE in every report,
// never a pass, and says why.
TEST(Audit_Report, NotAuditedOpIsIncompleteNeverAPass) {
  AuditResult r;
  r.op = "gated_residual";
  r.contract = "eager";
  r.plugin.kernel_name = "built-in gated_residual (emulated)";
  r.not_audited = "no built-in plugin lib/plugins/libgated_residual_emulated.so for op gated_residual (not built)";
  EXPECT_EQ(r.verdict(), "INCOMPLETE");
  EXPECT_EQ(combined_verdict({passing_audit(), r}, "PASS"), "INCOMPLETE");
  const std::string x = report_junit({r}, "");
  EXPECT_NE(x.find("name=\"plugin\""), std::string::npos) << x;
  EXPECT_EQ(count_of(x, "type=\"incomplete\""), 1u) << x;
  EXPECT_EQ(report_json_of(r).at("not_audited"), r.not_audited);
  EXPECT_EQ(report_json_of(r).at("verdict"), "incomplete");
  const std::string md = report_github_markdown({r}, "");
  EXPECT_NE(md.find("not audited: no built-in plugin"), std::string::npos) << md;
  // Negative control: the same result with nothing missing and no class run is not "not audited".
  r.not_audited.clear();
  EXPECT_EQ(report_json_of(r).count("not_audited"), 0u);
}

// An audit stopped by missing golden data (exit 3) before any class: both CI reports say INCOMPLETE and what is missing.
TEST(Audit_Report, MissingGoldenDataIsIncompleteNeverAPass) {
  const std::string missing = "golden/sm_100/digests.json is missing";
  const std::string x = report_junit({}, "", missing);
  EXPECT_NE(x.find("<testsuites tests=\"1\" failures=\"1\""), std::string::npos) << x;
  EXPECT_NE(x.find("name=\"golden data\""), std::string::npos);
  EXPECT_NE(x.find("type=\"incomplete\""), std::string::npos);
  EXPECT_NE(x.find(missing), std::string::npos);
  const std::string md = report_github_markdown({}, "", missing);
  EXPECT_EQ(md.rfind("⚠️ **fuseproof audit: INCOMPLETE**", 0), 0u) << md;
  EXPECT_NE(md.find(missing), std::string::npos);
  EXPECT_EQ(md.find("| kernel |"), std::string::npos);  // no empty table
  // An earlier op's pass does not turn it into a pass.
  EXPECT_EQ(report_github_markdown({passing_audit()}, "PASS", missing).rfind("⚠️ **fuseproof audit: INCOMPLETE**", 0),
            0u);
}

// Checks of an audit of every class on both dtypes (the classes grow: the count is the enum's).
const std::string kAllChecks = std::to_string(2 * std::size(kAllCheckClasses));

TEST(Audit_Report, GithubSummaryOfAPass) {
  const std::string md = report_github_markdown({passing_audit()}, "PASS");
  EXPECT_EQ(md.rfind("✅ **fuseproof audit: PASS**: " + kAllChecks + " checks, none failed; reference self-audit PASS", 0),
            0u) << md;
  EXPECT_EQ(md.find("<details>"), std::string::npos);
  std::string row = "| control_host | bias_gelu_tanh, eager | bf16 |";
  for (size_t k = 0; k < std::size(kAllCheckClasses); ++k) row += " ✅ |";
  EXPECT_NE(md.find(row + "\n"), std::string::npos) << md;
  EXPECT_LE(lines_of(md), kGithubMaxLines);
}

TEST(Audit_Report, GithubSummaryOfAFailureShowsRecordsAndReproduce) {
  const std::string md = report_github_markdown({failing_audit()}, "");
  EXPECT_EQ(md.rfind("❌ **fuseproof audit: FAIL**: 1 of " + kAllChecks + " checks failed, 1 incomplete, 2 skipped", 0),
            0u) << md;
  EXPECT_NE(md.find("| ❌ 1000+ |"), std::string::npos) << md;
  EXPECT_NE(md.find("<details><summary>❌ host_gelu_unrounded_sum extreme bf16: 1000+ mismatches in 1000 cases"),
            std::string::npos) << md;
  EXPECT_NE(md.find("[r=0,c=3] x=0x3F80"), std::string::npos);
  EXPECT_EQ(md.find("[r=0,c=4] x=0x3F80"), std::string::npos);  // the first few records only
  EXPECT_NE(md.find("Reproduce: `fuseproof audit --plugin P --only extreme --no-reference`"), std::string::npos);
  EXPECT_LE(lines_of(md), kGithubMaxLines);
}

// Every op failing every class with long records: the summary still fits a pull-request comment, and says what it
// left out.
TEST(Audit_Report, GithubSummaryStaysWithinTheCommentLimits) {
  std::vector<AuditResult> all;
  for (const char* op : {"bias_gelu_tanh", "bias_gelu_erf", "silu_and_mul", "gelu_tanh_and_mul", "gelu_and_mul"}) {
    AuditResult r = passing_audit(op);
    for (CheckResult& c : r.checks) {
      c.status = CheckStatus::kFail;
      c.mismatches = 5000;
      c.records.assign(8, std::string(5000, 'r'));
      c.reproduce = std::string(3000, 'p');
    }
    r.passed = false;
    all.push_back(r);
  }
  const std::string md = report_github_markdown(all, "PASS");
  EXPECT_LE(lines_of(md), kGithubMaxLines) << md;
  EXPECT_LE(md.size(), kGithubMaxChars);
  EXPECT_GE(count_of(md, "<details>"), 1u);
  EXPECT_EQ(count_of(md, "<details>"), count_of(md, "</details>"));
  EXPECT_NE(md.find("more failing checks not shown"), std::string::npos);
  EXPECT_EQ(count_of(md, "```") % 2, 0u);  // every fence closed
}

TEST(Audit_Report, ReportFormatNames) {
  EXPECT_EQ(parse_report_format("github"), ReportFormat::kGithub);
  EXPECT_EQ(parse_report_format("markdown"), ReportFormat::kMarkdown);
  EXPECT_FALSE(parse_report_format("html"));
}

TEST(Audit_Report, ProfilePhasesTravelWithTheCheckResult) {
  // A class child sends its result as JSON: --profile's phases must survive the trip, in order.
  CheckResult c = passing_audit().checks.at(0);
  c.phases.add("kernel", 1.5);
  c.phases.add("comparison", 0.25);
  const CheckResult back = check_from_json(check_to_json(c));
  ASSERT_EQ(back.phases.phases.size(), 2u);
  EXPECT_EQ(back.phases.phases[0].first, "kernel");
  EXPECT_EQ(back.phases.phases[0].second, 1.5);
  EXPECT_EQ(back.phases.phases[1].first, "comparison");
  // Negative control: a result without phases comes back without them.
  EXPECT_TRUE(check_from_json(check_to_json(passing_audit().checks.at(0))).phases.phases.empty());
  // The profile line names every phase and what the phases leave ("other").
  c.seconds = 2.0;
  c.cases = 1000;
  const std::string line = profile_line(c);
  EXPECT_NE(line.find("kernel 1.50 s"), std::string::npos) << line;
  EXPECT_NE(line.find("other 0.25 s"), std::string::npos) << line;
}

}  // namespace
}  // namespace fuseproof::audit

namespace fuseproof::audit {
namespace {

/// A quantization op's audit whose stages class measured its distance from two other contracts.
AuditResult quant_audit() {
  AuditResult r;
  r.plugin.kernel_name = "built-in nvfp4_quant (emulated)";
  r.plugin.path = "/lib/libnvfp4_quant_emulated.so";
  r.plugin.op = r.op = "nvfp4_quant";
  r.contract = "vllm-ref";
  r.backend = "emulated";
  r.golden = "golden/sm_90";
  for (ref::Dtype d : {ref::Dtype::kBf16, ref::Dtype::kFp16})
    for (CheckClass cls : {CheckClass::kRejection, CheckClass::kWidths, CheckClass::kStages, CheckClass::kBlocks,
                           CheckClass::kLayout}) {
      CheckResult c;
      c.cls = cls;
      c.dtype = d;
      c.cases = 4096;
      c.distinct_expected = 16;
      c.scope = "some scope";
      if (cls == CheckClass::kStages) {
        ContractDistance te;
        te.contract = "te";
        te.cases = 4096;
        te.codes_differ = 17;
        te.code_steps = {{0, 4079}, {1, 17}};
        te.blocks = 256;
        te.scales_differ = 3;
        te.scale_steps = {{0, 253}, {1, 3}};
        te.pairs = {"x=0x3F80 scale=0x7E => 0x5 other 0x6"};
        te.pairs_total = 17;
        ContractDistance fi = te;
        fi.contract = "flashinfer-exact";
        fi.codes_differ = 0;
        c.contract_distances = {te, fi};
      }
      settle_check(c);
      r.checks.push_back(c);
    }
  return r;
}

/// Every line the quantization report renders for the distances appears in the Markdown report, the JUnit testcase of
/// the class and the GitHub summary; a result without distances adds none (negative control).
TEST(Audit_Report_Quant, ContractDistancesAppearInEveryReport) {
  const AuditResult r = quant_audit();
  const CheckResult& stages = r.checks[2];
  ASSERT_EQ(stages.cls, CheckClass::kStages);
  const std::vector<std::string> lines = contract_distance_lines(stages);
  ASSERT_FALSE(lines.empty());
  const std::string md = report_markdown(r);
  const std::string junit = report_junit({r}, "PASS");
  const std::string github = report_github_markdown({r}, "PASS");
  EXPECT_NE(md.find("Distance from the op's other contracts, stages bf16"), std::string::npos) << md;
  EXPECT_NE(github.find("stages bf16: distance from the op's other contracts"), std::string::npos) << github;
  for (const std::string& l : lines) {
    if (l.empty()) continue;
    EXPECT_NE(md.find(l), std::string::npos) << l;
    EXPECT_NE(github.find(l), std::string::npos) << l;
    // JUnit escapes XML; a line free of markup must appear as it is.
    if (l.find_first_of("<>&\"'") == std::string::npos) EXPECT_NE(junit.find(l), std::string::npos) << l;
  }
  AuditResult plain = r;
  for (auto& c : plain.checks) c.contract_distances.clear();
  EXPECT_EQ(report_markdown(plain).find("other contracts"), std::string::npos);
  EXPECT_EQ(report_github_markdown({plain}, "PASS").find("other contracts"), std::string::npos);
}

}  // namespace
}  // namespace fuseproof::audit
