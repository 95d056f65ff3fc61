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
  const nlohmann::json golden = make_golden(run, "sm_90", nullptr, nullptr, nullptr);
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
  EXPECT_NE(r.lines[1].find("1 of 3 frames differ (frame 1"), std::string::npos) << r.lines[1];
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
  nlohmann::json golden = make_golden(run, "sm_90", nullptr, nullptr, nullptr);
  golden["high"]["frame_sha256"][0] = "other";
  EXPECT_EQ(check_run(run, &golden).outcome, CheckOutcome::kMismatch);
  golden = make_golden(run, "sm_90", nullptr, nullptr, nullptr);
  golden["config"]["name"] = "default";
  EXPECT_EQ(check_run(run, &golden).outcome, CheckOutcome::kForeign);
  golden = make_golden(run, "sm_90", nullptr, nullptr, nullptr);
  golden["schema"] = "v0";
  EXPECT_EQ(check_run(run, &golden).outcome, CheckOutcome::kForeign);
}

// A frame list of another length than "frames" is corrupt data (4), never a mismatch (1); the same list with one
// hash changed is the mismatch (the control).
TEST(E2E_GoldenCheck, TruncatedFrameListIsForeignNotAMismatch) {
  const nlohmann::json run = good_run();
  nlohmann::json golden = make_golden(run, "sm_90", nullptr, nullptr, nullptr);
  ASSERT_EQ(check_run(run, &golden).outcome, CheckOutcome::kPass);
  golden["high"]["frame_sha256"].erase(2);
  CheckReport r = check_run(run, &golden);
  EXPECT_EQ(r.outcome, CheckOutcome::kForeign);
  EXPECT_EQ(static_cast<int>(r.outcome), 4);
  EXPECT_NE(r.json.dump().find("golden high.frame_sha256 lists 2 hashes for 3 frames"), std::string::npos) << r.json;
  golden = make_golden(run, "sm_90", nullptr, nullptr, nullptr);
  golden["high"]["frame_sha256"] = "b0";  // not a list at all
  EXPECT_EQ(check_run(run, &golden).outcome, CheckOutcome::kForeign);
  golden = make_golden(run, "sm_90", nullptr, nullptr, nullptr);
  golden.erase("high");  // the golden part is read as data: a missing member is foreign, not a usage error
  EXPECT_EQ(check_run(run, &golden).outcome, CheckOutcome::kForeign);
  golden = make_golden(run, "sm_90", nullptr, nullptr, nullptr);
  golden["high"]["frame_sha256"][2] = "other";
  EXPECT_EQ(check_run(run, &golden).outcome, CheckOutcome::kMismatch);
  // The run's own descriptions, too: high-eager listing fewer hashes than its frames.
  nlohmann::json short_run = good_run();
  short_run["runs"]["high-eager"]["frame_sha256"].erase(2);
  EXPECT_EQ(check_run(short_run, nullptr).outcome, CheckOutcome::kForeign);
}

TEST(E2E_GoldenCheck, Mp4HashIsComparedOnlyForTheSameEncoderBuild) {
  nlohmann::json run = good_run();
  run["runs"]["high"]["mp4_sha256"] = "m1";
  run["runs"]["high"]["mp4_encoder"] = "enc A";
  nlohmann::json golden = make_golden(run, "sm_90", nullptr, nullptr, nullptr);
  EXPECT_EQ(check_run(run, &golden).outcome, CheckOutcome::kPass);
  golden["high"]["mp4_sha256"] = "m2";
  EXPECT_EQ(check_run(run, &golden).outcome, CheckOutcome::kMismatch);
  golden["high"]["mp4_encoder"] = "enc B";
  EXPECT_EQ(check_run(run, &golden).outcome, CheckOutcome::kPass);
}

TEST(E2E_GoldenCheck, EagerFallbackInHighIsIncompleteNotAPass) {
  nlohmann::json run = good_run();
  run["runs"]["high"]["mounted"] = {"blocks.0.ffn"};
  EXPECT_EQ(check_run(run, nullptr).outcome, CheckOutcome::kPass);
  run["runs"]["high"]["fallbacks"] = {{{"site", "blocks.0.ffn"}, {"calls", 6}, {"reason", "x: dtype must be bf16"}}};
  const CheckReport r = check_run(run, nullptr);
  EXPECT_EQ(r.outcome, CheckOutcome::kIncomplete);
  EXPECT_EQ(static_cast<int>(r.outcome), 3);
  EXPECT_EQ(r.lines[0].rfind("FAIL high ran the fused op at every mounted site: INCOMPLETE", 0), 0u) << r.lines[0];
  // A mismatch found as well is not hidden behind "incomplete".
  run["runs"]["high"]["frame_sha256"][1] = "zz";
  EXPECT_EQ(check_run(run, nullptr).outcome, CheckOutcome::kMismatch);
}

TEST(E2E_GoldenCheck, BlessRecordsMeasuredComparisonsAndARealCommit) {
  const nlohmann::json run = good_run();
  const nlohmann::json measured = {{"schema", "fuseproof.video.compare/2"}, {"frames_identical", true},
                                   {"psnr_all_min", "inf"},                 {"ssim_all_min", 1.0},
                                   {"ssim_r_mean", 1.0},                    {"per_frame", nlohmann::json::array()}};
  const std::string commit = "0123456789abcdef0123456789abcdef01234567";
  const nlohmann::json g = make_golden(run, "sm_90", nullptr, measured, {{"git_commit", commit}});
  EXPECT_EQ(g["high_vs_high_eager"]["psnr_all_min"], "inf");
  EXPECT_EQ(g["high_vs_high_eager"]["ssim_r_mean"], 1.0);
  EXPECT_FALSE(g["high_vs_high_eager"].contains("per_frame"));
  EXPECT_EQ(g["provenance"]["git_commit"], commit);
  for (const char* bad : {"HEAD", "", "0123456789abcdef"}) {
    EXPECT_THROW(make_golden(run, "sm_90", nullptr, nullptr, {{"git_commit", bad}}), std::runtime_error) << bad;
  }
}

TEST(E2E_GoldenCheck, MissingModesAreAnError) {
  nlohmann::json run = good_run();
  run["runs"].erase("high-eager");
  EXPECT_EQ(check_run(run, nullptr).outcome, CheckOutcome::kError);
}

size_t count_of(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(E2E_GoldenCheck, JunitHasOneTestcasePerGate) {
  nlohmann::json run = good_run();
  run["activation_dtype"] = "fp16";
  const nlohmann::json golden = make_golden(run, "sm_90", nullptr, nullptr, nullptr);
  const CheckReport r = check_run(run, &golden);
  const std::string x = check_junit(r, run, "out/e2e", "golden/e2e/sm_90.json", "fuseproof-e2e check ...");
  EXPECT_EQ(count_of(x, "<testcase "), r.json["gates"].size());
  EXPECT_EQ(count_of(x, "classname=\"fuseproof.e2e.small.fp16\""), r.json["gates"].size());
  EXPECT_EQ(count_of(x, "<failure "), 0u);
  EXPECT_EQ(count_of(x, "<skipped "), 1u);  // the MP4 gate: no MP4 on either side
  EXPECT_NE(x.find("name=\"high per-frame SHA-256 == golden\""), std::string::npos) << x;
  EXPECT_NE(x.find("<property name=\"golden\" value=\"golden/e2e/sm_90.json\"/>"), std::string::npos);
}

TEST(E2E_GoldenCheck, JunitFailureCarriesTheDetailAndReproduce) {
  const nlohmann::json run = good_run();
  nlohmann::json golden = make_golden(run, "sm_90", nullptr, nullptr, nullptr);
  golden["high"]["frame_sha256"][2] = "other";
  const CheckReport r = check_run(run, &golden);
  ASSERT_EQ(r.outcome, CheckOutcome::kMismatch);
  const std::string x =
      check_junit(r, run, "out/e2e", "g.json", "fuseproof-e2e check --run-dir out/e2e --golden g.json");
  EXPECT_EQ(count_of(x, "<failure "), 1u);
  EXPECT_NE(x.find("type=\"mismatch\""), std::string::npos);
  EXPECT_NE(x.find("1 of 3 frames differ (frame 2"), std::string::npos) << x;
  EXPECT_NE(x.find("Reproduce: fuseproof-e2e check --run-dir out/e2e --golden g.json"), std::string::npos);
}

TEST(E2E_GoldenCheck, MissingGoldenIsAnIncompleteGate) {
  const nlohmann::json run = good_run();
  CheckReport r = check_run(run, nullptr);
  add_gate(r, "golden per-frame SHA-256", "FAIL", "INCOMPLETE: no golden file", CheckOutcome::kNoGolden);
  EXPECT_EQ(r.outcome, CheckOutcome::kNoGolden);
  EXPECT_NE(check_junit(r, run, "d", "g.json", "r").find("type=\"incomplete\""), std::string::npos);
}

}  // namespace
}  // namespace fuseproof::e2e
