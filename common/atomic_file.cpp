// atomic_file.cpp: temporary file beside the target, fsync, rename; a test hook pauses mid-write so a test can kill us.
#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

namespace fuseproof {
namespace {

// FUSEPROOF_TEST_PAUSE_MID_WRITE_MS=N: the first write of the process stops for N ms after half its bytes (or, for a
// writer that writes by name, before the rename), so a test can SIGKILL the command while a file is half written.
void maybe_pause(const std::string& temp) {
  static bool paused = false;
  const char* ms = std::getenv("FUSEPROOF_TEST_PAUSE_MID_WRITE_MS");
  if (paused || !ms || !*ms) return;
  paused = true;
  std::fprintf(stderr, "atomic_file: paused mid-write of '%s'\n", temp.c_str());
  std::fflush(stderr);
  std::this_thread::sleep_for(std::chrono::milliseconds(std::atol(ms)));
}

std::string directory_of(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  struct stat st {};
  const bool exists = ::stat(path_.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) fail("is a directory");
  std::vector<char> name(path_.begin(), path_.end());
  const char suffix[] = ".tmp.XXXXXX";
  name.insert(name.end(), suffix, suffix + sizeof suffix);  // with the terminating NUL
  fd_ = ::mkstemp(name.data());
  if (fd_ < 0) fail(std::strerror(errno));
  temp_ = name.data();
  // mkstemp creates 0600; give the file the mode the target has, or the one a plain open() would give.
  mode_t mode = 0;
  if (exists) {
    mode = st.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (::fchmod(fd_, mode) != 0) fail(std::strerror(errno));
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
}

void AtomicFile::fail(const std::string& why) const {
  throw std::runtime_error("cannot write '" + path_ + "': " + why);
}

void AtomicFile::write(const void* data, size_t size) {
  if (fd_ < 0) fail("already committed");
  const char* p = static_cast<const char*>(data);
  const size_t half = size / 2;
  size_t done = 0;
  while (done < size) {
    if (done == half && half > 0) maybe_pause(temp_);
    const size_t chunk = done < half ? half - done : size - done;
    const ssize_t n = ::write(fd_, p + done, chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail(n < 0 ? std::strerror(errno) : "short write");
    done += size_t(n);
  }
}

void AtomicFile::commit() {
  if (fd_ < 0) fail("already committed");
  maybe_pause(temp_);
  if (::fsync(fd_) != 0) fail(std::strerror(errno));
  if (::close(fd_) != 0) {
    fd_ = -1;
    fail(std::strerror(errno));
  }
  fd_ = -1;
  if (::rename(temp_.c_str(), path_.c_str()) != 0) fail(std::strerror(errno));
  committed_ = true;
  // The rename is durable once the directory is synced.
  const int dir = ::open(directory_of(path_).c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  AtomicFile f(path);
  f.write(bytes);
  f.commit();
}

}  // namespace fuseproof
