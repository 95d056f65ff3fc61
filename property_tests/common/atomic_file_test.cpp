// atomic_file_test.cpp: common/atomic_file.h, and every writing command killed mid-write leaves the previous file.
#include "common/atomic_file.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace fs = std::filesystem;

namespace {

const std::string kPrevious = "previous contents: a run killed mid-write must leave these bytes\n";

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("atomic_file_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir / name;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void put(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << text;
}

/// Files named `<target>.tmp.*` beside `target`.
std::vector<fs::path> temporaries(const fs::path& target) {
  std::vector<fs::path> out;
  const std::string prefix = target.filename().string() + ".tmp.";
  for (const auto& e : fs::directory_iterator(target.parent_path()))
    if (e.path().filename().string().rfind(prefix, 0) == 0) out.push_back(e.path());
  return out;
}

struct Child {
  pid_t pid = -1;
  fs::path log;
};

Child spawn(const std::vector<std::string>& argv, const fs::path& log, const char* pause_ms) {
  Child c;
  c.log = log;
  c.pid = ::fork();
  if (c.pid == 0) {
    if (pause_ms) ::setenv("FUSEPROOF_TEST_PAUSE_MID_WRITE_MS", pause_ms, 1);
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return c;
}

int wait_exit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// Runs `argv` (which writes `target`) with the mid-write pause, waits until it says it paused, checks that the
/// temporary file holds part of the output while `target` still holds kPrevious, SIGKILLs it, and checks `target`.
void expect_kill_mid_write_keeps_previous(const std::vector<std::string>& argv, const fs::path& target) {
  put(target, kPrevious);
  const Child c = spawn(argv, target.string() + ".log", "60000");
  ASSERT_GT(c.pid, 0);
  std::string log;
  const std::string marker = "atomic_file: paused mid-write of '";
  const auto t0 = std::chrono::steady_clock::now();
  while ((log = slurp(c.log)).find(marker) == std::string::npos) {
    int status = 0;
    if (::waitpid(c.pid, &status, WNOHANG) == c.pid) FAIL() << "command ended before writing; log:\n" << log;
    if (std::chrono::steady_clock::now() - t0 > std::chrono::seconds(120)) {
      ::kill(c.pid, SIGKILL);
      wait_exit(c.pid);
      FAIL() << "command never reached its write; log:\n" << log;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const size_t at = log.find(marker) + marker.size();
  const fs::path temp = log.substr(at, log.find('\'', at) - at);
  EXPECT_EQ(temp.parent_path(), target.parent_path()) << "the temporary file must sit beside its target";
  EXPECT_TRUE(fs::exists(temp)) << temp;
  EXPECT_EQ(slurp(target), kPrevious) << "the target changed before the rename";
  ASSERT_EQ(::kill(c.pid, SIGKILL), 0);
  EXPECT_EQ(wait_exit(c.pid), 128 + SIGKILL);
  EXPECT_EQ(slurp(target), kPrevious) << argv[0] << " killed mid-write lost " << target;
  fs::remove(temp);
}

/// The same command, not killed, replaces `target` (the control: the command does write there).
void expect_completed_run_replaces(const std::vector<std::string>& argv, const fs::path& target, int code = 0) {
  put(target, kPrevious);
  const Child c = spawn(argv, target.string() + ".log", nullptr);
  EXPECT_EQ(wait_exit(c.pid), code) << slurp(c.log);
  EXPECT_NE(slurp(target), kPrevious) << argv[0] << " did not write " << target;
  EXPECT_TRUE(temporaries(target).empty()) << "a completed run left a temporary file";
}

}  // namespace

TEST(Common_AtomicFile, CommitReplacesTarget) {
  const fs::path p = scratch("commit.txt");
  put(p, kPrevious);
  fuseproof::AtomicFile f(p.string());
  f.write("new ");
  f.write(std::string("bytes"));
  EXPECT_EQ(slurp(p), kPrevious) << "written bytes must not reach the target before commit()";
  EXPECT_EQ(temporaries(p).size(), 1u);
  f.commit();
  EXPECT_EQ(slurp(p), "new bytes");
  EXPECT_TRUE(temporaries(p).empty());
}

TEST(Common_AtomicFile, NoCommitLeavesPreviousAndNoTemporary) {
  const fs::path p = scratch("abandoned.txt");
  put(p, kPrevious);
  try {
    fuseproof::AtomicFile f(p.string());
    f.write("half of a report");
    throw std::runtime_error("the writer failed");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(slurp(p), kPrevious);
  EXPECT_TRUE(temporaries(p).empty());
}

TEST(Common_AtomicFile, NewFileGetsUmaskModeExistingKeepsItsMode) {
  const fs::path fresh = scratch("fresh.txt");
  fs::remove(fresh);
  const mode_t mask = ::umask(022);
  fuseproof::write_file_atomically(fresh.string(), "x");
  struct stat st {};
  ASSERT_EQ(::stat(fresh.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0644u);
  ::chmod(fresh.c_str(), 0600);
  fuseproof::write_file_atomically(fresh.string(), "y");
  ASSERT_EQ(::stat(fresh.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  ::umask(mask);
}

TEST(Common_AtomicFile, UnwritableIsOneLineErrorNamingTheFile) {
  for (const std::string bad : {std::string("/nonexistent/dir/x.bin"), scratch("").string()}) {
    try {
      fuseproof::write_file_atomically(bad, "x");
      FAIL() << "no error for " << bad;
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("cannot write '" + bad + "'"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
  }
}

// --- Every command that writes a report, table or data file, killed while it writes.
TEST(Cli_GeluTable, KilledMidWriteKeepsPreviousTable) {
  const fs::path out = scratch("gelu_bf16.bin");
  const std::vector<std::string> cmd = {FUSEPROOF_BIN, "gelu-table", "--dtype", "bf16", "--out", out.string()};
  expect_kill_mid_write_keeps_previous(cmd, out);
  expect_completed_run_replaces(cmd, out);
  EXPECT_EQ(fs::file_size(out), 131072u);
}

TEST(Cli_Sweep, KilledMidWriteKeepsPreviousOutput) {
  const fs::path out = scratch("sweep.bin");
  const std::vector<std::string> cmd = {FUSEPROOF_BIN, "sweep", "--dtype", "bf16", "--bias-count", "2", "--out",
                                        out.string()};
  expect_kill_mid_write_keeps_previous(cmd, out);
  expect_completed_run_replaces(cmd, out);
  EXPECT_EQ(fs::file_size(out), 2u * 131072u);
}

TEST(Audit_Report, KilledMidWriteKeepsPreviousReport) {
  for (const std::string flag : {"--report", "--json"}) {
    const fs::path out = scratch("report" + std::string(flag == "--json" ? ".json" : ".md"));
    const std::vector<std::string> cmd = {FUSEPROOF_AUDIT_BIN, "--op", "bias_gelu_tanh", "--plugin",
                                          FUSEPROOF_CONTROL_PLUGIN, "--only", "rejection", "--no-reference", flag,
                                          out.string()};
    expect_kill_mid_write_keeps_previous(cmd, out);
    expect_completed_run_replaces(cmd, out);
  }
}

#ifdef FUSEPROOF_VIDEO_BIN
TEST(Video_Compare, KilledMidWriteKeepsPreviousJson) {
  // A 2-frame 16x16 4:4:4 Y4M, written by hand: the comparator's input, not its output.
  const fs::path y4m = scratch("clip.y4m");
  std::string clip = "YUV4MPEG2 W16 H16 F16:1 Ip A1:1 C444\n";
  for (int f = 0; f < 2; ++f) clip += "FRAME\n" + std::string(3 * 16 * 16, char(100 + f));
  put(y4m, clip);
  const fs::path out = scratch("compare.json");
  const std::vector<std::string> cmd = {FUSEPROOF_VIDEO_BIN, "compare", y4m.string(), y4m.string(), "--json",
                                        out.string()};
  expect_kill_mid_write_keeps_previous(cmd, out);
  expect_completed_run_replaces(cmd, out);
}
#endif
