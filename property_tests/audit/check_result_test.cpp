// check_result_test.cpp: tests audit/check_result.h: the status a class's findings settle to (zero cases never a pass,
// a failed check that counts no case still a FAIL with its mismatch count untouched), and the JSON codec keeping it.
#include <gtest/gtest.h>

#include "audit/check_result.h"

namespace fuseproof::audit {
namespace {

/// A class that compared 1,000 cases, all equal, over two distinct expected outputs: the control, a PASS.
CheckResult clean(CheckClass c = CheckClass::kDomain) {
  CheckResult r;
  r.cls = c;
  r.cases = 1000;
  r.distinct_expected = 2;
  r.vs_contract.add_exact(1000);
  return r;
}

TEST(Audit_Settle, CleanClassPasses) {
  CheckResult r = clean();
  settle_check(r);
  EXPECT_EQ(r.status, CheckStatus::kPass);  // the negative control of the tests below
}

TEST(Audit_Settle, ZeroCasesIsNeverAPass) {
  for (CheckClass c : kAllCheckClasses) {
    CheckResult r = clean(c);
    r.cases = 0;
    settle_check(r);
    EXPECT_EQ(r.status, CheckStatus::kIncomplete) << check_class_name(c);
    EXPECT_EQ(r.note.rfind("ran zero cases", 0), 0u) << r.note;
    settle_check(r);  // a result settled twice (the child, then the parent) says it once
    EXPECT_EQ(r.note, "ran zero cases");
  }
}

TEST(Audit_Settle, FailedCheckFailsWithoutCountingACase) {
  CheckResult r = clean();
  r.failed_checks = 1;
  r.records.push_back("bias_gelu_tanh bf16 2^32-domain digest ab.. expected cd..");
  settle_check(r);
  EXPECT_EQ(r.status, CheckStatus::kFail);
  EXPECT_EQ(r.mismatches, 0u);
  EXPECT_EQ(r.mismatches, r.vs_contract.total() - r.vs_contract.count(Distance::kExact));
}

TEST(Audit_Settle, MismatchOrFaultFails) {
  CheckResult m = clean();
  m.mismatches = 3;
  settle_check(m);
  EXPECT_EQ(m.status, CheckStatus::kFail);
  CheckResult f = clean();
  f.fault = "crash: exit 0 without a result";
  settle_check(f);
  EXPECT_EQ(f.status, CheckStatus::kFail);
}

TEST(Audit_Settle, CheckThatCouldNotFailIsADefect) {
  CheckResult r = clean();
  r.distinct_expected = 1;
  settle_check(r);
  EXPECT_EQ(r.status, CheckStatus::kFail);
}

TEST(Audit_CheckJson, FailedChecksSurviveTheChildProtocol) {
  CheckResult r = clean();
  r.failed_checks = 2;
  const CheckResult back = check_from_json(check_to_json(r));
  EXPECT_EQ(back.failed_checks, 2u);
  EXPECT_EQ(back.mismatches, 0u);
  CheckResult settled = back;
  settle_check(settled);
  EXPECT_EQ(settled.status, CheckStatus::kFail);
}

// The parent's time outside a class's clock comes back from the JSON report and is said in the profile line; a class
// run in-process has none and says nothing of it.
TEST(Audit_CheckJson, TimeOutsideTheClassesClockSurvivesAndIsProfiled) {
  CheckResult r = clean();
  r.seconds = 2.0;
  EXPECT_EQ(profile_line(r).find("outside the class's clock"), std::string::npos) << profile_line(r);
  r.outside_seconds = 0.75;
  const CheckResult back = check_from_json(check_to_json(r));
  EXPECT_EQ(back.outside_seconds, 0.75);
  EXPECT_NE(profile_line(back).find("outside the class's clock (its child's start, models, teardown) 0.75 s"),
            std::string::npos) << profile_line(back);
}

}  // namespace
}  // namespace fuseproof::audit
