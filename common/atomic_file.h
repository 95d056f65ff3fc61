// atomic_file.h: writes a file atomically (temporary file in the same directory, then rename), so a failed or killed
// run leaves the previous file intact.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace fuseproof {

/// One atomic replacement of `path`. The bytes go to `<path>.tmp.XXXXXX` beside it; commit() flushes, fsync()s and
/// rename()s it over `path`. Destroyed without commit() (an error, an exception), the temporary file is removed and
/// `path` is untouched; a process killed before commit() leaves `path` untouched too (and a stray `.tmp.` file).
/// Errors throw std::runtime_error, one line naming the file: `cannot write 'p': No space left on device`.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  /// Appends bytes to the temporary file.
  void write(const void* data, size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }
  /// For writers that open files by name (libavformat): they write here, then commit() replaces `path`.
  const std::string& temp_path() const { return temp_; }
  const std::string& path() const { return path_; }
  /// Makes the written bytes durable and replaces `path` with them, in one rename().
  void commit();

 private:
  [[noreturn]] void fail(const std::string& why) const;
  std::string path_;
  std::string temp_;
  int fd_ = -1;
  bool committed_ = false;
};

/// Replaces `path` with `bytes` atomically (AtomicFile, write, commit).
void write_file_atomically(const std::string& path, std::string_view bytes);

}  // namespace fuseproof
