// call_watch.cpp: heartbeat lines "B <call>" and "E" on the descriptor named by FUSEPROOF_AUDIT_PROGRESS_FD.
#include "audit/call_watch.h"

#include <unistd.h>

#include <cstdlib>


namespace fuseproof::audit {

namespace {

int progress_fd() {
  static const int fd = [] {
    const char* e = std::getenv(kProgressFdEnv);
    return e && *e ? std::atoi(e) : -1;
  }();
  return fd;
}

std::string& label() {
  static std::string l;
  return l;
}

void send(const std::string& line) {
  const int fd = progress_fd();
  if (fd < 0) return;
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n <= 0) return;  // the parent is gone; the work goes on, unobserved
    done += size_t(n);
  }
}

}  // namespace

void watch_label(const std::string& l) { label() = l; }

void watch_begin(const std::string& call) {
  std::string line = "B " + label() + " [" + call + "]";
  for (char& c : line)
    if (c == '\n') c = ' ';
  send(line + "\n");
}

void watch_end() { send("E\n"); }

const std::string& watch_current_label() { return label(); }

}  // namespace fuseproof::audit
