// atomic_file_test.cpp: common/atomic_file.h (its output rules, each with a control that writes), every writing
// command killed mid-write leaves the previous file, and standard output checked (a full device, a closed pipe).
#include "common/atomic_file.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/cli_exit.h"
#include "common/exit_status.h"

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

// --- The output rules (common/atomic_file.h). Every target is made in a scratch folder, never a real device.
namespace {

/// A fresh empty folder for one test.
fs::path scratch_dir(const std::string& name) {
  const fs::path d = scratch(name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

/// Names in `dir`, sorted: what a refusal must leave unchanged.
std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// `dir/full`: a character device 1:7 (what /dev/full is), or false where mknod is not permitted (not root).
bool make_full_device(const fs::path& node) {
  return ::mknod(node.c_str(), S_IFCHR | 0666, makedev(1, 7)) == 0;
}

void make_socket(const fs::path& node) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(node.string().size(), sizeof addr.sun_path);
  std::strcpy(addr.sun_path, node.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0) << std::strerror(errno);
  ::close(fd);
}

mode_t type_of(const fs::path& p) {
  struct stat st {};
  return ::lstat(p.c_str(), &st) == 0 ? (st.st_mode & S_IFMT) : 0;
}

/// write_file_atomically(path) must throw a one-line UsageError naming `path` and containing `why`.
void expect_refused(const fs::path& path, const std::string& why) {
  try {
    fuseproof::write_file_atomically(path.string(), "must not be written");
    ADD_FAILURE() << "no refusal for " << path;
  } catch (const fuseproof::UsageError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cannot write '" + path.string() + "'"), std::string::npos) << what;
    EXPECT_NE(what.find(why), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
}

}  // namespace

TEST(Common_AtomicFile, EmptyPathRefused) {
  try {
    fuseproof::AtomicFile f("");
    FAIL() << "an empty path was accepted";
  } catch (const fuseproof::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("the path is empty"), std::string::npos) << e.what();
  }
  // The validator of output options: a given empty value fails the parse (exit 2), a real path passes (the control).
  CLI::App app{"t", "t"};
  std::string json;
  app.add_option("--json", json)->check(fuseproof::output_file_option());
  const char* empty[] = {"t", "--json", ""};
  EXPECT_THROW(app.parse(3, const_cast<char**>(empty)), CLI::ValidationError);
  const std::string ok = scratch_dir("empty_control").string() + "/r.json";
  const char* given[] = {"t", "--json", ok.c_str()};
  EXPECT_NO_THROW(app.parse(3, const_cast<char**>(given)));
  EXPECT_EQ(json, ok);
}

TEST(Common_AtomicFile, NonRegularTargetsRefusedAndUntouched) {
  const fs::path dir = scratch_dir("non_regular");
  fs::create_directory(dir / "a_directory");
  ASSERT_EQ(::mkfifo((dir / "a_fifo").c_str(), 0644), 0);
  make_socket(dir / "a_socket");
  const bool device = make_full_device(dir / "full");
  const std::vector<std::string> before = listing(dir);
  expect_refused(dir / "a_directory", "it is a directory");
  expect_refused(dir / "a_fifo", "it is a FIFO");  // and it did not block: nothing opened the FIFO
  expect_refused(dir / "a_socket", "it is a socket");
  if (device) expect_refused(dir / "full", "it is a character device");
  EXPECT_EQ(listing(dir), before) << "a refusal created or removed a file";
  EXPECT_EQ(type_of(dir / "a_directory"), mode_t(S_IFDIR));
  EXPECT_EQ(type_of(dir / "a_fifo"), mode_t(S_IFIFO));
  EXPECT_EQ(type_of(dir / "a_socket"), mode_t(S_IFSOCK));
  if (device) EXPECT_EQ(type_of(dir / "full"), mode_t(S_IFCHR));
  // The control: a regular file in the same folder is written.
  fuseproof::write_file_atomically((dir / "regular").string(), "written");
  EXPECT_EQ(slurp(dir / "regular"), "written");
  if (!device) GTEST_SKIP() << "mknod not permitted here (not root): the character-device case did not run";
}

TEST(Common_AtomicFile, SymlinkWrittenThroughLinkKept) {
  const fs::path dir = scratch_dir("symlinks");
  put(dir / "target.json", kPrevious);
  fs::create_symlink("target.json", dir / "link.json");
  fs::create_symlink("link.json", dir / "link_to_link.json");
  fuseproof::write_file_atomically((dir / "link.json").string(), "through the link");
  EXPECT_TRUE(fs::is_symlink(dir / "link.json")) << "the link was replaced by a file";
  EXPECT_EQ(fs::read_symlink(dir / "link.json"), "target.json");
  EXPECT_EQ(slurp(dir / "target.json"), "through the link") << "the target was left stale";
  fuseproof::write_file_atomically((dir / "link_to_link.json").string(), "through two links");
  EXPECT_TRUE(fs::is_symlink(dir / "link_to_link.json"));
  EXPECT_EQ(slurp(dir / "target.json"), "through two links");
  EXPECT_TRUE(temporaries(dir / "target.json").empty());
  // A dangling link is refused, and its missing target is not created.
  fs::create_symlink("missing.json", dir / "dangling.json");
  expect_refused(dir / "dangling.json", "symbolic link to a missing file");
  EXPECT_FALSE(fs::exists(dir / "missing.json"));
  EXPECT_TRUE(fs::is_symlink(dir / "dangling.json"));
  // A link to a non-regular file is refused like the file itself.
  ASSERT_EQ(::mkfifo((dir / "a_fifo").c_str(), 0644), 0);
  fs::create_symlink("a_fifo", dir / "link_to_fifo");
  expect_refused(dir / "link_to_fifo", "it is a FIFO");
  EXPECT_EQ(type_of(dir / "a_fifo"), mode_t(S_IFIFO));
  EXPECT_TRUE(fs::is_symlink(dir / "link_to_fifo"));
}

TEST(Common_AtomicFile, SamePathClaimedTwiceRefused) {
  const fs::path dir = scratch_dir("claims");
  put(dir / "target.json", kPrevious);
  fs::create_symlink("target.json", dir / "alias.json");
  fs::create_directory(dir / "sub");
  const std::string r = (dir / "r.json").string();
  // One file named three ways, by two options each time: refused before anything is written.
  for (const std::string& second : {r, (dir / "sub" / ".." / "r.json").string()}) {
    try {
      const auto c = fuseproof::claim_output_paths({{"--json", r}, {"--junit", second}});
      ADD_FAILURE() << "claimed " << r << " twice";
    } catch (const fuseproof::UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--junit: cannot write '" + second + "': it is also the --json output"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(fuseproof::claim_output_paths({{"--json", (dir / "target.json").string()},
                                              {"--report", (dir / "alias.json").string()}}),
               fuseproof::UsageError);
  EXPECT_FALSE(fs::exists(r)) << "a refused claim created its file";
  EXPECT_EQ(slurp(dir / "target.json"), kPrevious);
  EXPECT_TRUE(temporaries(dir / "r.json").empty());
  // The control: distinct files are claimed; while held, a second claim of one of them is refused; released, it is not.
  {
    const auto held = fuseproof::claim_output_paths({{"--json", r}, {"--junit", (dir / "r.xml").string()}, {"--report", ""}});
    EXPECT_THROW(fuseproof::claim_output_paths({{"--out", r}}), fuseproof::UsageError);
    fuseproof::write_file_atomically(r, "claimed and written");  // the claimant writes its own file
  }
  EXPECT_NO_THROW(fuseproof::claim_output_paths({{"--out", r}}));
  // Two writers open on one file at once: the second is refused; one after the other is fine.
  fuseproof::AtomicFile first(r);
  EXPECT_THROW(fuseproof::AtomicFile second(r), fuseproof::UsageError);
  first.write("first");
  first.commit();
  {
    fuseproof::AtomicFile by_name((dir / "target.json").string());
    EXPECT_THROW(fuseproof::AtomicFile by_link((dir / "alias.json").string()), fuseproof::UsageError);
  }
  fuseproof::write_file_atomically(r, "second");
  EXPECT_EQ(slurp(r), "second");
}

TEST(Common_AtomicFile, FailedWriteLeavesNoFileAndNoTemporary) {
  // A write error (EFBIG under a file-size limit, in a child so the limit stays there): no target, no temporary.
  const fs::path dir = scratch_dir("failed_write");
  const fs::path fresh = dir / "fresh.bin", old = dir / "old.bin";
  put(old, kPrevious);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{16, 16};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    int refused = 0;
    for (const fs::path& p : {fresh, old}) {
      try {
        fuseproof::write_file_atomically(p.string(), std::string(4096, 'x'));
      } catch (const fuseproof::UsageError&) {
        ++refused;
      }
    }
    ::_exit(refused == 2 ? 0 : 1);
  }
  ASSERT_EQ(wait_exit(pid), 0) << "a write past the file-size limit did not fail";
  EXPECT_FALSE(fs::exists(fresh)) << "a failed write left a file";
  EXPECT_EQ(slurp(old), kPrevious) << "a failed write touched the previous file";
  EXPECT_EQ(listing(dir), std::vector<std::string>{"old.bin"}) << "a failed write left a temporary file";
  // The control: the same write without the limit succeeds.
  fuseproof::write_file_atomically(fresh.string(), std::string(4096, 'x'));
  EXPECT_EQ(fs::file_size(fresh), 4096u);
}

// --- The commands: refusals create or replace nothing; standard output is checked.
namespace {

struct Outcome {
  int code = -1;
  std::string out, err;
};

/// Runs `argv` with stdout to `stdout_fd` (or a file it returns in `out`), stderr to a file, SIGPIPE at its default
/// (as a shell gives it), and returns the exit status and the stderr text.
Outcome run_command(const std::vector<std::string>& argv, int stdout_fd = -1) {
  static int n = 0;
  const fs::path out = scratch("cmd_" + std::to_string(++n) + ".out"), err = scratch("cmd_" + std::to_string(n) + ".err");
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::signal(SIGPIPE, SIG_DFL);
    const int o = stdout_fd >= 0 ? stdout_fd : ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    ::dup2(e, 2);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  Outcome r;
  r.code = wait_exit(pid);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

size_t lines(const std::string& s) { return size_t(std::count(s.begin(), s.end(), '\n')); }

std::vector<std::string> audit_command(const std::vector<std::string>& reports) {
  std::vector<std::string> cmd = {FUSEPROOF_AUDIT_BIN, "--op", "bias_gelu_tanh", "--plugin", FUSEPROOF_CONTROL_PLUGIN,
                                  "--only", "rejection", "--no-reference"};
  cmd.insert(cmd.end(), reports.begin(), reports.end());
  return cmd;
}

}  // namespace

TEST(Audit_Report, SamePathForTwoReportsRefusedBeforeRunning) {
  const fs::path dir = scratch_dir("audit_same_path");
  const std::string x = (dir / "x").string();
  const Outcome r = run_command(audit_command({"--json", x, "--report", x, "--junit", x}));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_NE(r.err.find("it is also the"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("verdict"), std::string::npos) << "the audit ran: " << r.out;
  EXPECT_TRUE(listing(dir).empty()) << "a refused command wrote a file";
  // The control: three files, three reports.
  const Outcome ok = run_command(audit_command({"--json", x + ".json", "--report", x + ".md", "--junit", x + ".xml"}));
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(listing(dir), (std::vector<std::string>{"x.json", "x.md", "x.xml"}));
}

TEST(Audit_Report, NonRegularReportRefusedNothingReplaced) {
  const fs::path dir = scratch_dir("audit_non_regular");
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0644), 0);
  const bool device = make_full_device(dir / "full");
  for (const std::string& name : {std::string("fifo"), std::string("full"), std::string("")}) {
    if (name == "full" && !device) continue;
    const std::string path = name.empty() ? "" : (dir / name).string();
    const Outcome r = run_command(audit_command({"--json", path}));
    EXPECT_EQ(r.code, 2) << name << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("--json"), std::string::npos) << r.err;
  }
  EXPECT_EQ(type_of(dir / "fifo"), mode_t(S_IFIFO));
  if (device) EXPECT_EQ(type_of(dir / "full"), mode_t(S_IFCHR));
  EXPECT_EQ(listing(dir).size(), device ? 2u : 1u);
  if (!device) GTEST_SKIP() << "mknod not permitted here (not root): the character-device case did not run";
}

TEST(Cli_GeluTable, RefusedOrFailedOutLeavesNoFile) {
  const fs::path dir = scratch_dir("table_refusals");
  const bool device = make_full_device(dir / "full");
  // A failure after the option parse (a bad --act) leaves no empty --out behind.
  Outcome r = run_command({FUSEPROOF_BIN, "table", "--dtype", "bf16", "--act", "bogus", "--out", (dir / "t.bin").string()});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  r = run_command({FUSEPROOF_BIN, "table", "--dtype", "bf16", "--out", ""});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("the path is empty"), std::string::npos) << r.err;
  if (device) {
    r = run_command({FUSEPROOF_BIN, "table", "--dtype", "bf16", "--out", (dir / "full").string()});
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("it is a character device"), std::string::npos) << r.err;
    EXPECT_EQ(type_of(dir / "full"), mode_t(S_IFCHR)) << "the device node was replaced";
  }
  EXPECT_EQ(listing(dir), device ? std::vector<std::string>{"full"} : std::vector<std::string>{});
  // The control, through a symbolic link: the link's target gets the table, the link stays.
  put(dir / "target.bin", kPrevious);
  fs::create_symlink("target.bin", dir / "link.bin");
  r = run_command({FUSEPROOF_BIN, "table", "--dtype", "bf16", "--out", (dir / "link.bin").string()});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir / "link.bin"));
  EXPECT_EQ(fs::file_size(dir / "target.bin"), 131072u);
  if (!device) GTEST_SKIP() << "mknod not permitted here (not root): the character-device case did not run";
}

#ifdef FUSEPROOF_VIDEO_BIN
TEST(Video_Compare, NonRegularJsonRefused) {
  const fs::path dir = scratch_dir("video_non_regular");
  const fs::path y4m = dir / "clip.y4m";
  std::string clip = "YUV4MPEG2 W16 H16 F16:1 Ip A1:1 C444\n";
  clip += "FRAME\n" + std::string(3 * 16 * 16, char(100));
  put(y4m, clip);
  ASSERT_EQ(::mkfifo((dir / "fifo").c_str(), 0644), 0);
  const Outcome r = run_command({FUSEPROOF_VIDEO_BIN, "compare", y4m.string(), y4m.string(), "--json", (dir / "fifo").string()});
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_EQ(lines(r.err), 1u) << r.err;
  EXPECT_EQ(type_of(dir / "fifo"), mode_t(S_IFIFO));
  const Outcome same = run_command({FUSEPROOF_VIDEO_BIN, "compare", y4m.string(), y4m.string(), "--json",
                                    (dir / "r").string(), "--markdown-file", (dir / "r").string()});
  EXPECT_EQ(same.code, 2) << same.err;
  EXPECT_FALSE(fs::exists(dir / "r"));
  const Outcome ok = run_command({FUSEPROOF_VIDEO_BIN, "compare", y4m.string(), y4m.string(), "--json", (dir / "r").string()});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_TRUE(fs::is_regular_file(dir / "r"));
}
#endif

TEST(Cli_StandardOutput, FullDeviceAndClosedPipeExit2) {
  const fs::path dir = scratch_dir("stdout");
  const bool device = make_full_device(dir / "full");
  const std::vector<std::vector<std::string>> commands = {
      {FUSEPROOF_BIN, "ops"}, {FUSEPROOF_BIN, "ops", "--json"}, audit_command({})};
  for (const auto& cmd : commands) {
    // The control: to a regular file, exit 0 with output.
    const Outcome ok = run_command(cmd);
    EXPECT_EQ(ok.code, 0) << cmd[1] << ": " << ok.err;
    EXPECT_FALSE(ok.out.empty());
    if (device) {
      const int full = ::open((dir / "full").c_str(), O_WRONLY);
      ASSERT_GE(full, 0);
      const Outcome r = run_command(cmd, full);
      ::close(full);
      EXPECT_EQ(r.code, 2) << cmd[1] << ": " << r.err;
      EXPECT_EQ(lines(r.err), 1u) << r.err;
      EXPECT_NE(r.err.find("cannot write standard output: No space left on device"), std::string::npos) << r.err;
    }
    int p[2];
    ASSERT_EQ(::pipe(p), 0);
    ::close(p[0]);  // nobody reads: every write is EPIPE (and SIGPIPE, at its default in the child)
    const Outcome r = run_command(cmd, p[1]);
    ::close(p[1]);
    EXPECT_EQ(r.code, 2) << cmd[1] << ": " << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("cannot write standard output: Broken pipe"), std::string::npos) << r.err;
  }
  EXPECT_EQ(type_of(dir / "full"), device ? mode_t(S_IFCHR) : mode_t(0));
  if (!device) GTEST_SKIP() << "mknod not permitted here (not root): the full-device cases did not run";
}
