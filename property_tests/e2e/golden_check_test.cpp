// golden_check_test.cpp: the nightly gates pass a good run and fail each kind of bad run with the documented status.
#include <gtest/gtest.h>

#include "golden_check.h"
#include "run_manifest.h"

namespace fuseproof::e2e {
namespace {

nlohmann::json mode(const std::vector<std::string>& hashes) {
  return {{"frames", hashes.size()}, {"width", 4}, {"height", 2}, {"frame_sha256", hashes}, {"rgb24_sha256", "x"}};
}

nlohmann::json good_run() {
  return {{"schema", kRunSchema},
          {"config", {{"name", "small"}}},
          {"runs",
           {{"lossless", mode({"a0", "a1", "a2"})},
            {"high", mode({"b0", "b1", "b2"})},
            {"high-eager", mode({"b0", "b1", "b2"})},
            {kLosslessAfterUnmount, mode({"a0", "a1", "a2"})}}}};
}

TEST(E2E_GoldenCheck, GoodRunPassesWithAndWithoutGolden) {
  const nlohmann::json run = good_run();
  EXPECT_EQ(check_run(run, nullptr).outcome, CheckOutcome::kPass);
  const nlohmann::json golden = make_golden(run, "sm_90", nullptr, nullptr);
  EXPECT_EQ(golden["schema"], kGoldenSchema);
  const CheckReport r = check_run(run, &golden);
  EXPECT_EQ(r.outcome, CheckOutcome::kPass);
  EXPECT_GE(r.lines.size(), 5u);
}

TEST(E2E_GoldenCheck, FusedDifferingFromEagerIsAMismatch) {
  nlohmann::json run = good_run();
  run["runs"]["high"]["frame_sha256"][1] = "zz";
  const CheckReport r = check_run(run, nullptr);
  EXPECT_EQ(r.outcome, CheckOutcome::kMismatch);
  EXPECT_NE(r.lines[0].find("1 of 3 frames differ (frame 1"), std::string::npos) << r.lines[0];
}

TEST(E2E_GoldenCheck, NegativeControlFailsWhenLosslessEqualsHigh) {
  nlohmann::json run = good_run();
  run["runs"]["high"] = run["runs"]["lossless"];
  run["runs"]["high-eager"] = run["runs"]["lossless"];
  EXPECT_EQ(check_run(run, nullptr).outcome, CheckOutcome::kMismatch);
}

TEST(E2E_GoldenCheck, UnmountNotRestoringLosslessIsAMismatch) {
  nlohmann::json run = good_run();
  run["runs"][kLosslessAfterUnmount]["frame_sha256"][2] = "b2";
  EXPECT_EQ(check_run(run, nullptr).outcome, CheckOutcome::kMismatch);
}

TEST(E2E_GoldenCheck, GoldenHashOrConfigOrSchemaDiffers) {
  const nlohmann::json run = good_run();
  nlohmann::json golden = make_golden(run, "sm_90", nullptr, nullptr);
  golden["high"]["frame_sha256"][0] = "other";
  EXPECT_EQ(check_run(run, &golden).outcome, CheckOutcome::kMismatch);
  golden = make_golden(run, "sm_90", nullptr, nullptr);
  golden["config"]["name"] = "default";
  EXPECT_EQ(check_run(run, &golden).outcome, CheckOutcome::kForeign);
  golden = make_golden(run, "sm_90", nullptr, nullptr);
  golden["schema"] = "v0";
  EXPECT_EQ(check_run(run, &golden).outcome, CheckOutcome::kForeign);
}

TEST(E2E_GoldenCheck, Mp4HashIsComparedOnlyForTheSameEncoderBuild) {
  nlohmann::json run = good_run();
  run["runs"]["high"]["mp4_sha256"] = "m1";
  run["runs"]["high"]["mp4_encoder"] = "enc A";
  nlohmann::json golden = make_golden(run, "sm_90", nullptr, nullptr);
  EXPECT_EQ(check_run(run, &golden).outcome, CheckOutcome::kPass);
  golden["high"]["mp4_sha256"] = "m2";
  EXPECT_EQ(check_run(run, &golden).outcome, CheckOutcome::kMismatch);
  golden["high"]["mp4_encoder"] = "enc B";
  EXPECT_EQ(check_run(run, &golden).outcome, CheckOutcome::kPass);
}

TEST(E2E_GoldenCheck, MissingModesAreAnError) {
  nlohmann::json run = good_run();
  run["runs"].erase("high-eager");
  EXPECT_EQ(check_run(run, nullptr).outcome, CheckOutcome::kError);
}

}  // namespace
}  // namespace fuseproof::e2e
