// audit_isolation.cpp: posix_spawn, a heartbeat pipe, poll, and SIGKILL to the child's process group.
#include "audit/audit_isolation.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "audit/call_watch.h"

extern char** environ;

namespace fuseproof::audit {

namespace {
constexpr const char* kParentPidEnv = "FUSEPROOF_AUDIT_PARENT_PID";
}  // namespace

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string tail_of(const std::string& path, size_t lines) {
  std::ifstream in(path);
  std::deque<std::string> last;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    if (line.size() > 400) line = line.substr(0, 400) + "...";
    last.push_back(line);
    if (last.size() > lines) last.pop_front();
  }
  std::string s;
  for (const auto& l : last) s += (s.empty() ? "" : " | ") + l;
  return s;
}

}  // namespace

std::string signal_description(int sig) {
  const char* name = sig == SIGSEGV ? "SIGSEGV" : sig == SIGABRT ? "SIGABRT" : sig == SIGBUS ? "SIGBUS"
                   : sig == SIGFPE  ? "SIGFPE"  : sig == SIGILL  ? "SIGILL"  : sig == SIGKILL ? "SIGKILL"
                   : sig == SIGTERM ? "SIGTERM" : nullptr;
  return "signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : "");
}

std::vector<std::string> child_environment(char** parent_env, int progress_fd, long parent_pid) {
  auto starts = [](const char* e, const char* name) { return std::strncmp(e, name, std::strlen(name)) == 0; };
  std::vector<std::string> env;
  bool malloc_set = false;
  for (char** e = parent_env; e && *e; ++e) {
    if (starts(*e, kProgressFdEnv) || starts(*e, kParentPidEnv)) continue;
    if (starts(*e, "MALLOC_MMAP_THRESHOLD_=") || starts(*e, "MALLOC_TRIM_THRESHOLD_=") || starts(*e, "GLIBC_TUNABLES="))
      malloc_set = true;
    env.emplace_back(*e);
  }
  env.push_back(std::string(kProgressFdEnv) + "=" + std::to_string(progress_fd));
  env.push_back(std::string(kParentPidEnv) + "=" + std::to_string(parent_pid));
  if (!malloc_set) {
    env.push_back("MALLOC_MMAP_THRESHOLD_=2147483647");
    env.push_back("MALLOC_TRIM_THRESHOLD_=2147483647");
  }
  return env;
}

ChildOutcome run_child(const std::vector<std::string>& argv, const std::string& log_path, double call_timeout_s,
                       double stall_timeout_s) {
  constexpr int kChildFd = 3;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("audit: cannot create a pipe: " + std::string(std::strerror(errno)));
  std::vector<std::string> env_s = child_environment(environ, kChildFd, long(getpid()));
  std::vector<char*> envp, args;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy(argv);
  for (auto& a : argv_copy) args.push_back(a.data());
  args.push_back(nullptr);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_adddup2(&fa, fds[1], kChildFd);  // dup2 clears O_CLOEXEC on the copy
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  pid_t pid = 0;
  const auto t0 = Clock::now();
  const int sp = posix_spawn(&pid, args[0], &fa, &attr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  close(fds[1]);
  if (sp != 0) {
    close(fds[0]);
    throw std::runtime_error("audit: cannot start " + argv[0] + ": " + std::strerror(sp));
  }

  ChildOutcome o;
  bool in_call = false, pipe_open = true;
  auto call_t0 = Clock::now(), heard = Clock::now();
  std::string buffer;
  int status = 0;
  for (;;) {
    if (pipe_open) {
      pollfd p{fds[0], POLLIN, 0};
      if (poll(&p, 1, 50) > 0) {
        char chunk[4096];
        const ssize_t n = read(fds[0], chunk, sizeof chunk);
        if (n <= 0) {
          pipe_open = false;
        } else {
          buffer.append(chunk, size_t(n));
          heard = Clock::now();
          size_t nl;
          while ((nl = buffer.find('\n')) != std::string::npos) {
            const std::string line = buffer.substr(0, nl);
            buffer.erase(0, nl + 1);
            if (line.rfind("B ", 0) == 0) {
              in_call = true;
              call_t0 = Clock::now();
              o.last_call = line.substr(2);
            } else if (line == "E") {
              in_call = false;
            }
          }
        }
      }
    } else {
      usleep(20000);
    }
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    const bool call_over = in_call && since(call_t0) > call_timeout_s;
    const bool stall = !in_call && since(heard) > stall_timeout_s;
    if (call_over || stall) {
      o.timed_out = call_over;
      o.stalled = stall;
      o.call_seconds = in_call ? since(call_t0) : 0;
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
  }
  kill(-pid, SIGKILL);  // helpers the child started (compile workers) go with it
  // What the child wrote before it ended.
  for (pollfd p{fds[0], POLLIN, 0}; pipe_open && poll(&p, 1, 0) > 0;) {
    char chunk[4096];
    const ssize_t n = read(fds[0], chunk, sizeof chunk);
    if (n <= 0) break;
    buffer.append(chunk, size_t(n));
  }
  for (size_t nl; (nl = buffer.find('\n')) != std::string::npos; buffer.erase(0, nl + 1)) {
    const std::string line = buffer.substr(0, nl);
    if (line.rfind("B ", 0) == 0) in_call = true, call_t0 = Clock::now(), o.last_call = line.substr(2);
    else if (line == "E") in_call = false;
  }
  close(fds[0]);
  if (in_call && !o.timed_out) o.call_seconds = since(call_t0);
  if (!in_call) o.last_call.clear();
  o.seconds = since(t0);
  if (WIFSIGNALED(status)) o.signal = WTERMSIG(status);
  else if (WIFEXITED(status)) o.exit_code = WEXITSTATUS(status);
  o.output_tail = tail_of(log_path, 4);
  return o;
}

std::string audit_child_exe() {
  static const std::string exe = [] {
    namespace fs = std::filesystem;
    const std::string self_link = "/proc/self/exe";
    if (const char* e = std::getenv("FUSEPROOF_AUDIT_CHILD"); e && std::strcmp(e, "self") == 0) return self_link;
    std::error_code ec;
    const fs::path self = fs::read_symlink(self_link, ec);
    if (ec || self.filename() == "fuseproof-audit") return self_link;
    const fs::path sibling = self.parent_path() / "fuseproof-audit";
    const fs::path library = FUSEPROOF_AUDIT_LIBRARY;
    if (!fs::is_regular_file(sibling, ec) || ::access(sibling.c_str(), X_OK) != 0) return self_link;
    const auto t_lib = fs::last_write_time(library, ec);
    if (ec) return self_link;
    const auto t_self = fs::last_write_time(self, ec);
    if (ec || t_self < t_lib) return self_link;
    const auto t_sibling = fs::last_write_time(sibling, ec);
    if (ec || t_sibling < t_lib) return self_link;
    return sibling.string();
  }();
  return exe;
}

void die_with_parent() {
  const char* parent = std::getenv(kParentPidEnv);  // set by run_child only
  if (!parent) return;
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (std::to_string(getppid()) != parent) _exit(128 + SIGKILL);  // the parent ended before prctl took effect
}

}  // namespace fuseproof::audit
