// run_files_test.cpp: e2e/run_files.h on a small run directory made here (the same describe_frames and write_rgb24 as
// `e2e run`): the intact run verifies (the control), and each way of spoiling it is refused with its status.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/exit_status.h"
#include "common/path_inside.h"
#include "common/remove_tree.h"
#include "run_files.h"
#include "run_manifest.h"

namespace fuseproof::e2e {
namespace {

namespace fs = std::filesystem;

VideoFrames frames_of(int seed) {
  VideoFrames v;
  v.width = 4;
  v.height = 2;
  v.count = 3;
  v.rgb.resize(v.frame_bytes() * 3);
  for (size_t i = 0; i < v.rgb.size(); ++i) v.rgb[i] = uint8_t(i * 7 + seed);
  return v;
}

class E2E_RunFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    top_ = fs::path(::testing::TempDir()) / ("run_files_" + std::to_string(::getpid()) + "_" +
                                             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    remove_tree(top_);
    dir_ = top_ / "run";
    fs::create_directories(dir_);
    run_ = {{"schema", kRunSchema}, {"config", {{"name", "test"}, {"fps", 4}}}, {"runs", nlohmann::json::object()}};
    for (const auto& [mode, seed] : {std::pair<std::string, int>{"lossless", 1}, {"high", 2}, {"high-eager", 2}}) {
      const VideoFrames f = frames_of(seed);
      write_rgb24((dir_ / (mode + ".rgb24")).string(), f);
      run_["runs"][mode] = describe_frames(f);
      run_["runs"][mode]["files"]["rgb24"] = mode + ".rgb24";
    }
    save();
  }
  void TearDown() override { remove_tree(top_); }

  void save() const { write_json_file((dir_ / "run.json").string(), run_); }
  std::string dir() const { return dir_.string(); }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }
  /// read_run_manifest then verify_run_files, as `e2e check` does.
  void read_and_verify() const { verify_run_files(dir(), read_run_manifest(dir()), {"lossless", "high", "high-eager"}); }

  fs::path top_, dir_;
  nlohmann::json run_;
};

/// `f` throws E whose message contains every needle, on one line.
template <class E, class F>
void expect_refusal(F f, const std::vector<std::string>& needles) {
  try {
    f();
    ADD_FAILURE() << "no exception";
  } catch (const E& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    for (const auto& n : needles) EXPECT_NE(m.find(n), std::string::npos) << "'" << n << "' not in: " << m;
  }
}

TEST_F(E2E_RunFiles, IntactRunVerifies) {
  const nlohmann::json run = read_run_manifest(dir());
  EXPECT_EQ(verify_run_files(dir(), run, {"lossless", "high", "high-eager"}),
            "3 files, 9 frames re-hashed against run.json");
}

TEST_F(E2E_RunFiles, OneFlippedBitIsCorrupt) {
  {
    std::fstream f(file("high.rgb24"), std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(30);  // frame 1 (24 bytes a frame)
    char c = 0;
    f.read(&c, 1);
    c ^= 1;
    f.seekp(30);
    f.write(&c, 1);
  }
  expect_refusal<CorruptDataError>([&] { read_and_verify(); },
                                   {file("high.rgb24"), "1 of 3 frames differ", "first: frame 1"});
}

TEST_F(E2E_RunFiles, TruncatedLongerAndMissingFilesAreCorrupt) {
  ASSERT_NO_THROW(read_and_verify());
  fs::resize_file(file("high.rgb24"), 70);
  expect_refusal<CorruptDataError>([&] { read_and_verify(); }, {file("high.rgb24"), "is truncated: 70 bytes"});
  fs::resize_file(file("high.rgb24"), 73);
  expect_refusal<CorruptDataError>([&] { read_and_verify(); }, {file("high.rgb24"), "is longer", "72 bytes"});
  write_rgb24(file("high.rgb24"), frames_of(2));  // whole again
  fs::remove(file("high-eager.rgb24"));
  expect_refusal<CorruptDataError>([&] { read_and_verify(); }, {file("high-eager.rgb24"), "is missing"});
}

TEST_F(E2E_RunFiles, AFifoIsNotReadAsFrames) {
  fs::remove(file("high.rgb24"));
  ASSERT_EQ(::mkfifo(file("high.rgb24").c_str(), 0600), 0);
  expect_refusal<CorruptDataError>([&] { read_and_verify(); }, {file("high.rgb24"), "is not a regular file"});
}

TEST_F(E2E_RunFiles, WholeFileHashIsCheckedToo) {
  run_["runs"]["high"]["rgb24_sha256"] = std::string(64, '0');
  save();
  expect_refusal<CorruptDataError>([&] { read_and_verify(); }, {"runs.high.rgb24_sha256", std::string(64, '0')});
}

TEST_F(E2E_RunFiles, AbsentFrameFileOfAJudgedModeIsMissingEvidence) {
  run_["runs"]["high"].erase("files");
  save();
  expect_refusal<MissingDataError>([&] { read_and_verify(); }, {"runs.high.files.rgb24 is absent"});
}

TEST_F(E2E_RunFiles, TruncatedFrameListIsCorrupt) {
  run_["runs"]["high"]["frame_sha256"].erase(2);
  save();
  expect_refusal<CorruptDataError>([&] { read_run_manifest(dir()); },
                                   {file("run.json"), "runs.high.frame_sha256", "(3), got 2 entries"});
}

TEST_F(E2E_RunFiles, PathsThatLeaveTheRunAreCorrupt) {
  for (const std::string bad : {"../../../../etc/passwd", "/etc/passwd", "sub/../../run/high.rgb24x", "..", ".", "",
                                "./", "a/../.."}) {
    run_["runs"]["high"]["files"]["rgb24"] = bad;
    save();
    expect_refusal<CorruptDataError>([&] { read_run_manifest(dir()); },
                                     {file("run.json"), "runs.high.files.rgb24", "inside the run directory",
                                      "got '" + bad + "'"});
  }
  // Control: a path that stays inside after normalisation is accepted.
  run_["runs"]["high"]["files"]["rgb24"] = "sub/../high.rgb24";
  save();
  EXPECT_NO_THROW(read_and_verify());
}

TEST_F(E2E_RunFiles, SymlinkOutOfTheRunIsCorruptEvenWithTheRightBytes) {
  // A sibling whose name shares the run directory's as a string prefix ("run" and "run2"): only a component-wise test
  // sees that it is outside.
  fs::create_directories(top_ / "run2");
  fs::copy_file(file("high.rgb24"), top_ / "run2" / "high.rgb24");
  fs::remove(file("high.rgb24"));
  fs::create_symlink("../run2/high.rgb24", file("high.rgb24"));
  expect_refusal<CorruptDataError>([&] { read_run_manifest(dir()); }, {"runs.high.files.rgb24", "got 'high.rgb24'"});
  EXPECT_FALSE(path_inside(dir(), "high.rgb24"));
  // Control: a symlink to a file inside the run is followed.
  fs::create_directories(dir_ / "frames");
  fs::copy_file(top_ / "run2" / "high.rgb24", dir_ / "frames" / "high.rgb24");
  fs::remove(file("high.rgb24"));
  fs::create_symlink("frames/high.rgb24", file("high.rgb24"));
  EXPECT_NO_THROW(read_and_verify());
  EXPECT_EQ(*path_inside(dir(), "high.rgb24"), fs::weakly_canonical(dir_ / "frames" / "high.rgb24").string());
}

TEST_F(E2E_RunFiles, ModeNamesFollowTheGrammar) {
  for (const char* good : {"lossless", "high", "high-eager", "lossless-after-unmount", "mode_2", "9"})
    EXPECT_TRUE(is_mode_name(good)) << good;
  for (const char* bad : {"", "../evilmode", "High", "-high", "_x", "a/b", "a.b", "a b", "..", "high\n"})
    EXPECT_FALSE(is_mode_name(bad)) << bad;
  EXPECT_TRUE(is_mode_name(std::string(64, 'a')));
  EXPECT_FALSE(is_mode_name(std::string(65, 'a')));
  run_["runs"]["../evilmode"] = run_["runs"]["high"];
  save();
  expect_refusal<CorruptDataError>([&] { read_run_manifest(dir()); }, {file("run.json"), "mode names", "'../evilmode'"});
}

TEST_F(E2E_RunFiles, ManifestShapeIsChecked) {
  const auto refused = [&](const std::string& text, const std::string& needle) {
    std::ofstream(file("run.json"), std::ios::trunc) << text;
    expect_refusal<CorruptDataError>([&] { read_run_manifest(dir()); }, {file("run.json"), needle});
  };
  refused("{\"schema\": ", "not valid JSON");
  refused("[1, 2]", "must be a JSON object");
  refused("{\"schema\": \"other/1\", \"runs\": {}}", "schema must be fuseproof.e2e.run/1, got 'other/1'");
  refused(std::string("{\"schema\": \"") + kRunSchema + "\"}", "runs must be an object of modes, got nothing");
  nlohmann::json r = run_;
  r["runs"]["high"]["width"] = -4;
  refused(r.dump(), "runs.high.width must be an integer in [1, 16384], got '-4'");
  r = run_;
  r["runs"]["high"]["frame_sha256"][0] = "x\ny";
  refused(r.dump(), "runs.high.frame_sha256[0] must be a 64-hex SHA-256, got 'x\\x0ay'");
  r = run_;
  r["runs"]["high"]["files"]["exe"] = "high.rgb24";
  refused(r.dump(), "keys must be rgb24, y4m or mp4, got 'exe'");
  // A missing run.json is a missing input file (exit 2), not corrupt data.
  fs::remove(file("run.json"));
  expect_refusal<UsageError>([&] { read_run_manifest(dir()); }, {"--run-dir", "holds no run.json"});
}

}  // namespace
}  // namespace fuseproof::e2e
