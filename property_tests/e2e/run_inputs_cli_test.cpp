// run_inputs_cli_test.cpp: `e2e check`, `bless`, `compare` and `video encode` given a run directory spoiled one way at
// a time (a flipped bit, a truncated or deleted frame file, paths and mode names that leave the run, short hash lists,
// a missing mode, one mode twice, a bad --arch): each is refused with its README status and exactly one stderr line,
// and bless writes nothing. The intact run passes every command (the control). One CPU run of the small config,
// made once (the ctest fixture E2E_Inputs.MakeRun) and copied per test.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/remove_tree.h"
#include "property_tests/support/subprocess.h"

namespace fuseproof::test {
namespace {

namespace fs = std::filesystem;

class E2E_Inputs : public ::testing::Test {
 protected:
  static fs::path root() { return fs::path(::testing::TempDir()) / ("e2e_inputs_" + std::to_string(::getpid())); }
  /// The run every test copies: made by the ctest fixture E2E_Inputs.MakeRun, or here when run outside ctest.
  static fs::path master() { return FUSEPROOF_E2E_INPUTS_RUN; }

  static void SetUpTestSuite() {
    remove_tree(root());
    fs::create_directories(root());
    if (fs::exists(master() / "run.json")) return;
    const CommandResult r = run_command({FUSEPROOF_E2E_BIN, "run", "--config", "small", "--device", "cpu", "--modes",
                                         "lossless,high,high-eager,lossless-after-unmount", "--formats", "rgb24",
                                         "--out", master().string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() { remove_tree(root()); }

  void SetUp() override {
    if (!fs::exists(master() / "run.json")) GTEST_SKIP() << "the suite's run was not made";
    top_ = root() / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    remove_tree(top_);
    fs::create_directories(top_);
    fs::copy(master(), run_dir(), fs::copy_options::recursive);
  }

  fs::path run_dir() const { return top_ / "run"; }
  std::string dir() const { return run_dir().string(); }
  std::string at(const std::string& name) const { return (top_ / name).string(); }
  std::string file(const std::string& name) const { return (run_dir() / name).string(); }

  nlohmann::json manifest() const { return nlohmann::json::parse(std::ifstream(file("run.json"))); }
  void save(const nlohmann::json& run) const { std::ofstream(file("run.json"), std::ios::trunc) << run.dump(2); }

  CommandResult e2e(std::vector<std::string> args) const {
    args.insert(args.begin(), FUSEPROOF_E2E_BIN);
    return run_command(args);
  }
  CommandResult check(const std::string& golden = "") const {
    return golden.empty() ? e2e({"check", "--run-dir", dir()}) : e2e({"check", "--run-dir", dir(), "--golden", golden});
  }
  CommandResult bless(const std::string& out, const std::string& arch = "sm_90") const {
    return e2e({"bless", "--run-dir", dir(), "--arch", arch, "--out", out});
  }
  /// A golden file blessed from the intact run, outside this test's run directory.
  std::string intact_golden() const {
    const std::string g = at("golden.json");
    const CommandResult r = run_command({FUSEPROOF_E2E_BIN, "bless", "--run-dir", master().string(), "--arch", "sm_90",
                                         "--out", g});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return g;
  }

  void flip_bit(const std::string& name, std::streamoff byte) const {
    std::fstream f(file(name), std::ios::in | std::ios::out | std::ios::binary);
    char c = 0;
    f.seekg(byte);
    f.read(&c, 1);
    c = char(c ^ 0x10);
    f.seekp(byte);
    f.write(&c, 1);
  }

  fs::path top_;
};

/// Exit `code`, exactly one stderr line, no final period, containing every needle.
void expect_refusal(const CommandResult& r, int code, const std::vector<std::string>& needles) {
  EXPECT_EQ(r.exit_code, code) << "stdout:\n" << r.out << "stderr:\n" << r.err;
  const auto lines = r.err_lines();
  ASSERT_EQ(lines.size(), 1u) << "expected one stderr line, got:\n" << r.err;
  EXPECT_NE(lines[0].back(), '.') << lines[0];
  for (const std::string& n : needles) EXPECT_NE(lines[0].find(n), std::string::npos) << "'" << n << "' not in: " << lines[0];
}

void expect_pass(const CommandResult& r) {
  EXPECT_EQ(r.exit_code, 0) << "stdout:\n" << r.out << "stderr:\n" << r.err;
  EXPECT_EQ(r.err, "");
}

// The control: the intact run passes check (with and without its golden), bless, and compare; through both binaries.
TEST_F(E2E_Inputs, IntactRunPassesEveryCommand) {
  const CommandResult c = check();
  expect_pass(c);
  EXPECT_NE(c.out.find("PASS frame files == run.json SHA-256: 3 files, 243 frames re-hashed"), std::string::npos)
      << c.out;
  expect_pass(bless(at("g.json")));
  EXPECT_TRUE(fs::exists(at("g.json")));
  expect_pass(check(at("g.json")));
  expect_pass(e2e({"compare", "--run-dir", dir(), "--baseline", "high", "--candidate", "high-eager"}));
  expect_pass(run_command({FUSEPROOF_BIN, "e2e", "check", "--run-dir", dir(), "--golden", at("g.json")}));
}

// One flipped bit in one frame file: check (alone and against golden), compare and bless all refuse it (4), and
// bless writes nothing.
TEST_F(E2E_Inputs, OneFlippedBitIsCorruptAndNeverBlessed) {
  const std::string golden = intact_golden();
  flip_bit("high.rgb24", 40 * 64 * 64 * 3 + 17);  // frame 40 of 81 (64x64 rgb24)
  const std::vector<std::string> what = {file("high.rgb24"), "1 of 81 frames differ", "first: frame 40"};
  expect_refusal(check(), 4, what);
  expect_refusal(check(golden), 4, what);
  expect_refusal(run_command({FUSEPROOF_BIN, "e2e", "check", "--run-dir", dir()}), 4, what);
  expect_refusal(e2e({"compare", "--run-dir", dir(), "--baseline", "high", "--candidate", "high-eager"}), 4, what);
  expect_refusal(bless(at("g.json")), 4, what);
  EXPECT_FALSE(fs::exists(at("g.json")));
}

TEST_F(E2E_Inputs, TruncatedOrDeletedFrameFileIsCorrupt) {
  fs::resize_file(file("high.rgb24"), fs::file_size(file("high.rgb24")) - 1);
  expect_refusal(check(), 4, {file("high.rgb24"), "is truncated: 995327 bytes"});
  expect_refusal(bless(at("g.json")), 4, {file("high.rgb24"), "is truncated"});
  EXPECT_FALSE(fs::exists(at("g.json")));
  fs::copy_file(master() / "high.rgb24", file("high.rgb24"), fs::copy_options::overwrite_existing);
  fs::remove(file("high-eager.rgb24"));
  expect_refusal(check(), 4, {file("high-eager.rgb24"), "is missing"});
  expect_refusal(bless(at("g.json")), 4, {file("high-eager.rgb24"), "is missing"});
  EXPECT_FALSE(fs::exists(at("g.json")));
}

// A run whose modes record no rgb24 file cannot have its hashes verified: incomplete (3), never a pass.
TEST_F(E2E_Inputs, NoFrameFilesIsIncomplete) {
  nlohmann::json run = manifest();
  run["runs"]["high"].erase("files");
  save(run);
  expect_refusal(check(), 3, {"runs.high.files.rgb24 is absent"});
  expect_refusal(bless(at("g.json")), 3, {"runs.high.files.rgb24 is absent"});
  EXPECT_FALSE(fs::exists(at("g.json")));
}

// Paths in run.json that leave the run directory: corrupt data (4) naming run.json, the field and the value.
TEST_F(E2E_Inputs, PathsOutOfTheRunAreCorrupt) {
  for (const std::string bad : {"../../../../etc/passwd", "/etc/passwd", "../master/high.rgb24"}) {
    nlohmann::json run = manifest();
    run["runs"]["high"]["files"]["rgb24"] = bad;
    save(run);
    const std::vector<std::string> what = {file("run.json"), "runs.high.files.rgb24", "'" + bad + "'"};
    expect_refusal(check(), 4, what);
    if (bad != "/etc/passwd") continue;  // one value through the other readers (each start loads libtorch)
    expect_refusal(e2e({"compare", "--run-dir", dir()}), 4, what);
    expect_refusal(bless(at("g.json")), 4, what);
    EXPECT_FALSE(fs::exists(at("g.json")));
  }
  // A symlink out of the run, to a file with the very bytes run.json records: refused for where it points. The
  // outside folder's name extends the run's ("run" and "run2"): a string-prefix test would take it for inside.
  const fs::path outside = top_ / "run2";
  fs::create_directories(outside);
  fs::copy_file(master() / "high.rgb24", outside / "high.rgb24");
  fs::remove(file("high.rgb24"));
  fs::create_symlink("../run2/high.rgb24", file("high.rgb24"));
  nlohmann::json run = manifest();
  run["runs"]["high"]["files"]["rgb24"] = "high.rgb24";
  save(run);
  expect_refusal(check(), 4, {"runs.high.files.rgb24", "inside the run directory", "'high.rgb24'"});
  // Control: the same symlink pointing inside the run is followed.
  fs::create_directories(run_dir() / "frames");
  fs::copy_file(outside / "high.rgb24", run_dir() / "frames" / "high.rgb24");
  fs::remove(file("high.rgb24"));
  fs::create_symlink("frames/high.rgb24", file("high.rgb24"));
  expect_pass(check());
}

// A mode named to leave the run: refused before anything is read or written (video encode would write
// <run>/../evilmode.mp4).
TEST_F(E2E_Inputs, ModeNameOutOfTheRunIsCorrupt) {
  nlohmann::json run = manifest();
  run["runs"]["../evilmode"] = run["runs"]["high"];
  save(run);
  const std::vector<std::string> what = {file("run.json"), "mode names", "'../evilmode'"};
  expect_refusal(check(), 4, what);
  expect_refusal(bless(at("g.json")), 4, what);
#ifdef FUSEPROOF_VIDEO_BIN
  expect_refusal(run_command({FUSEPROOF_VIDEO_BIN, "encode", "--run-dir", dir()}), 4, what);
  EXPECT_FALSE(fs::exists(top_ / "evilmode.mp4"));
#endif
  EXPECT_FALSE(fs::exists(at("g.json")));
}

// A frame_sha256 list shorter than its frames, in run.json or in the golden file: corrupt data (4), never a MISMATCH.
TEST_F(E2E_Inputs, TruncatedFrameListIsCorruptNotAMismatch) {
  const std::string golden = intact_golden();
  nlohmann::json g = nlohmann::json::parse(std::ifstream(golden));
  g["high"]["frame_sha256"].erase(80);
  std::ofstream(at("short.json")) << g.dump();
  expect_refusal(check(at("short.json")), 4, {at("short.json"), "golden high.frame_sha256 lists 80 hashes for 81 frames"});
  // Control: the same golden with one hash changed, not removed, is the mismatch.
  g = nlohmann::json::parse(std::ifstream(golden));
  g["high"]["frame_sha256"][80] = std::string(64, '0');
  std::ofstream(at("other.json")) << g.dump();
  expect_refusal(check(at("other.json")), 1, {"MISMATCH", "high per-frame SHA-256 == golden", "frame 80"});
  nlohmann::json run = manifest();
  run["runs"]["high"]["frame_sha256"].erase(80);
  save(run);
  expect_refusal(check(), 4, {file("run.json"), "runs.high.frame_sha256", "(81), got 80 entries"});
}

// The frames differ: exit 1 with its one stderr line, from check (and bless refuses), compare, video compare.
TEST_F(E2E_Inputs, MismatchIsOneStderrLine) {
  nlohmann::json run = manifest();
  fs::copy_file(file("lossless.rgb24"), file("high-eager.rgb24"), fs::copy_options::overwrite_existing);
  run["runs"]["high-eager"] = run["runs"]["lossless"];
  run["runs"]["high-eager"]["files"]["rgb24"] = "high-eager.rgb24";
  save(run);
  expect_refusal(check(), 1, {"MISMATCH", "high == high-eager", "81 of 81 frames differ"});
  expect_refusal(bless(at("g.json")), 1, {"refusing to bless", "high == high-eager"});
  EXPECT_FALSE(fs::exists(at("g.json")));
  expect_refusal(e2e({"compare", "--run-dir", dir(), "--baseline", "lossless", "--candidate", "high"}), 1,
                 {"e2e compare: 'lossless.rgb24' and 'high.rgb24' differ in 81 of 81 frames (first: frame 0"});
}

// The same mode twice measures nothing: bad input (2). A mode the run lacks, or a run without run.json: 2 as well.
TEST_F(E2E_Inputs, CompareNeedsTwoModes) {
  expect_refusal(e2e({"compare", "--run-dir", dir(), "--baseline", "high", "--candidate", "high"}), 2,
                 {"--candidate must name another mode than --baseline, got 'high' for both"});
  expect_refusal(e2e({"compare", "--run-dir", dir(), "--candidate", "nosuchmode"}), 2, {"no mode 'nosuchmode'"});
  expect_refusal(e2e({"compare", "--run-dir", at("nothing")}), 2, {"holds no run.json"});
  expect_pass(e2e({"compare", "--run-dir", dir(), "--baseline", "high", "--candidate", "high-eager"}));
}

// A run without a mode the gates need is bad input (exit 2, README), said on stderr in one line.
TEST_F(E2E_Inputs, MissingModeIsExitTwoOnStderr) {
  nlohmann::json run = manifest();
  run["runs"].erase("high-eager");
  save(run);
  const CommandResult r = check();
  expect_refusal(r, 2, {"--run-dir '" + dir() + "'", "run.json must hold modes lossless, high and high-eager"});
  EXPECT_NE(r.out.find("e2e check: ERROR"), std::string::npos) << r.out;
}

TEST_F(E2E_Inputs, RunJsonThatIsNotJsonIsCorrupt) {
  std::ofstream(file("run.json"), std::ios::trunc) << "{\"schema\": ";
  expect_refusal(check(), 4, {file("run.json"), "not valid JSON"});
  fs::remove(file("run.json"));
  expect_refusal(check(), 2, {"--run-dir", "holds no run.json"});
}

// --arch is an architecture name, never a path: bless refuses it (2) before reading or writing anything.
TEST_F(E2E_Inputs, BlessArchIsAnArchitectureName) {
  for (const std::string bad : {"../../x", "sm_90/../sm_90"}) {  // the grammar itself: Common_ArchName.*
    expect_refusal(bless(at("g.json"), bad), 2, {"--arch: must be sm_<digits> (e.g. sm_90), got '" + bad + "'"});
    EXPECT_FALSE(fs::exists(at("g.json"))) << bad;
  }
  expect_pass(bless(at("g.json"), "sm_100a"));
  EXPECT_EQ(nlohmann::json::parse(std::ifstream(at("g.json")))["arch"], "sm_100a");
}

#ifdef FUSEPROOF_VIDEO_BIN
// video encode re-hashes the frames it encodes; the MP4 it records is re-hashed by check afterwards.
TEST_F(E2E_Inputs, EncodeVerifiesFramesAndCheckVerifiesTheMp4) {
  flip_bit("lossless.rgb24", 5);
  expect_refusal(run_command({FUSEPROOF_VIDEO_BIN, "encode", "--run-dir", dir(), "--modes", "lossless"}), 4,
                 {file("lossless.rgb24"), "1 of 81 frames differ"});
  EXPECT_FALSE(fs::exists(file("lossless.mp4")));
  fs::copy_file(master() / "lossless.rgb24", file("lossless.rgb24"), fs::copy_options::overwrite_existing);
  expect_pass(run_command({FUSEPROOF_VIDEO_BIN, "encode", "--run-dir", dir(), "--modes", "high"}));
  expect_pass(check());
  const std::string mp4 = file("high.mp4");
  std::ofstream(mp4, std::ios::app | std::ios::binary) << '\0';
  expect_refusal(check(), 4, {mp4, "runs.high.mp4_sha256"});
}
#endif

}  // namespace
}  // namespace fuseproof::test
