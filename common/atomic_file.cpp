// atomic_file.cpp: the output rules (regular files only, links written through, one writer per file), then a
// temporary file beside the target, fsync, rename; a test hook pauses mid-write so a test can kill us.
#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common/exit_status.h"

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

[[noreturn]] void refuse(const std::string& path, const std::string& why) {
  throw UsageError("cannot write '" + path + "': " + why);
}

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// The process's files being written or claimed, by canonical path: open AtomicFiles, and claims of commands.
struct Registry {
  std::mutex mutex;
  std::set<std::string> open;
  std::map<std::string, std::string> claimed;  ///< canonical path -> the option that claimed it
};

Registry& registry() {
  static Registry r;
  return r;
}

std::string canonical_of(const std::string& target) {
  std::error_code ec;
  const std::filesystem::path p = std::filesystem::weakly_canonical(std::filesystem::absolute(target, ec), ec);
  return ec ? target : p.string();
}

/// Creates `<target>.tmp.XXXXXX` (0600); its name in `temp`. Returns the descriptor, or -1 with errno set.
int make_temporary(const std::string& target, std::string& temp) {
  std::vector<char> name(target.begin(), target.end());
  const char suffix[] = ".tmp.XXXXXX";
  name.insert(name.end(), suffix, suffix + sizeof suffix);  // with the terminating NUL
  const int fd = ::mkstemp(name.data());
  if (fd >= 0) temp = name.data();
  return fd;
}

}  // namespace

std::string resolve_output_target(const std::string& path) {
  if (path.empty()) refuse(path, "the path is empty (name a file)");
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return path;  // a new file; a missing directory fails when the file is created
    refuse(path, std::strerror(errno));
  }
  std::string target = path;
  if (S_ISLNK(st.st_mode)) {
    char* real = ::realpath(path.c_str(), nullptr);
    if (!real) {
      if (errno == ENOENT) refuse(path, "it is a symbolic link to a missing file (only a link to a regular file is written through)");
      refuse(path, std::strerror(errno));
    }
    target = real;
    std::free(real);
    if (::stat(target.c_str(), &st) != 0) refuse(path, std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    refuse(path, std::string("it is ") + kind_of(st.st_mode) +
                     (target == path ? "" : " ('" + target + "', the link's target)") +
                     " (only a regular file is written)");
  }
  return target;
}

OutputClaims::~OutputClaims() {
  if (canonical_.empty()) return;
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  for (const std::string& c : canonical_) r.claimed.erase(c);
}

OutputClaims claim_output_paths(const std::vector<OutputArgument>& outputs) {
  std::vector<std::pair<std::string, const OutputArgument*>> wanted;  // canonical path, its argument
  for (const OutputArgument& o : outputs) {
    if (o.path.empty()) continue;  // not given
    std::string target;
    try {
      target = resolve_output_target(o.path);
    } catch (const UsageError& e) {
      throw UsageError(o.option + ": " + e.what());
    }
    // The directory must take a new file: found now, not after a long run.
    std::string probe;
    const int fd = make_temporary(target, probe);
    if (fd < 0) throw UsageError(o.option + ": cannot write '" + o.path + "': " + std::strerror(errno));
    ::close(fd);
    ::unlink(probe.c_str());
    const std::string canonical = canonical_of(target);
    for (const auto& w : wanted)
      if (w.first == canonical)
        throw UsageError(o.option + ": cannot write '" + o.path + "': it is also the " + w.second->option +
                         " output (give each output its own file)");
    wanted.emplace_back(canonical, &o);
  }
  OutputClaims claims;
  Registry& r = registry();
  const std::lock_guard<std::mutex> lock(r.mutex);
  for (const auto& w : wanted) {
    const auto held = r.claimed.find(w.first);
    if (held != r.claimed.end() || r.open.count(w.first))
      throw UsageError(w.second->option + ": cannot write '" + w.second->path + "': " +
                       (held != r.claimed.end() ? "it is also the " + held->second + " output"
                                                : std::string("it is being written already")) +
                       " (give each output its own file)");
  }
  for (const auto& w : wanted) {
    r.claimed.emplace(w.first, w.second->option);
    claims.canonical_.push_back(w.first);
  }
  return claims;
}

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  target_ = resolve_output_target(path_);
  canonical_ = canonical_of(target_);
  {
    Registry& r = registry();
    const std::lock_guard<std::mutex> lock(r.mutex);
    if (!r.open.insert(canonical_).second) {
      canonical_.clear();
      refuse(path_, "it is being written already by this command (give each output its own file)");
    }
  }
  try {
    struct stat st {};
    const bool exists = ::stat(target_.c_str(), &st) == 0;
    fd_ = make_temporary(target_, temp_);
    if (fd_ < 0) fail(std::strerror(errno));
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
  } catch (...) {
    release();
    throw;
  }
}

void AtomicFile::release() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!committed_ && !temp_.empty()) ::unlink(temp_.c_str());
  if (!canonical_.empty()) {
    Registry& r = registry();
    const std::lock_guard<std::mutex> lock(r.mutex);
    r.open.erase(canonical_);
    canonical_.clear();
  }
}

AtomicFile::~AtomicFile() { release(); }

void AtomicFile::fail(const std::string& why) const { refuse(path_, why); }

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
  if (::rename(temp_.c_str(), target_.c_str()) != 0) fail(std::strerror(errno));
  committed_ = true;
  // The rename is durable once the directory is synced.
  const int dir = ::open(directory_of(target_).c_str(), O_RDONLY | O_DIRECTORY);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
  release();
}

void write_file_atomically(const std::string& path, std::string_view bytes) {
  AtomicFile f(path);
  f.write(bytes);
  f.commit();
}

}  // namespace fuseproof
