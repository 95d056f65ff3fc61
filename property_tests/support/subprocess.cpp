// subprocess.cpp: fork + execv with stdout and stderr sent to temporary files (no pipes to drain, no deadlock).
#include "property_tests/support/subprocess.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace fuseproof::test {
namespace {

std::string slurp_and_remove(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  ::unlink(path.c_str());
  return s.str();
}

int temp_fd(std::string* path) {
  const char* dir = std::getenv("TMPDIR");
  std::string t = std::string(dir && *dir ? dir : "/tmp") + "/fuseproof_cmd.XXXXXX";
  const int fd = ::mkstemp(t.data());
  if (fd < 0) throw std::runtime_error("run_command: mkstemp failed");
  *path = t;
  return fd;
}

}  // namespace

std::vector<std::string> CommandResult::err_lines() const {
  std::vector<std::string> lines;
  std::istringstream s(err);
  for (std::string l; std::getline(s, l);) lines.push_back(l);
  return lines;
}

CommandResult run_command(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
  std::string out_path, err_path;
  const int out_fd = temp_fd(&out_path), err_fd = temp_fd(&err_path);
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(out_fd, 1);
    ::dup2(err_fd, 2);
    for (const std::string& e : env) ::putenv(const_cast<char*>(e.c_str()));
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::close(out_fd);
  ::close(err_fd);
  int status = 0;
  ::waitpid(pid, &status, 0);
  CommandResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp_and_remove(out_path);
  r.err = slurp_and_remove(err_path);
  return r;
}

}  // namespace fuseproof::test
