// atomic_file.h: the one writer of every file the suite writes: regular files only, replaced atomically (temporary
// file in the same directory, then rename), so a failed or killed run leaves the previous file intact.
//
// The rules, the same for every writer (reports, tables, goldens, videos, e2e artifacts; python/fuseproof/_output.py
// applies them to the Python side):
// - An empty path is refused.
// - An existing target that is not a regular file (a directory, a character or block device, a FIFO, a socket) is
//   refused, and nothing is created or replaced: `/dev/null` or `/dev/full` named as a report stays a device.
// - A symbolic link is written through: it is resolved to its final target (realpath), which must be an existing
//   regular file; the temporary file goes beside the target and is renamed over it, so the link itself is never
//   replaced and the target never left stale. A dangling link (its target missing) is refused.
// - Two outputs of one command on the same file are refused before anything is written: a command claims its output
//   paths up front (claim_output_paths), and two writers open on one file at once are refused too.
// - Atomic: nothing is written to the target before commit(); on any failure the temporary file is removed, so no
//   partial or empty file is left behind.
// Every refusal and write error is a UsageError (exit 2: README, "Exit status": an unwritable report is bad setup),
// one line naming the file: `cannot write '/tmp/x/full': it is a character device (only a regular file is written)`.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace fuseproof {

/// The file that writing `path` replaces: `path` itself (a regular file or a new one), or the final target of a
/// symbolic link (which must be a regular file). Refuses an empty path, a non-regular file and a dangling link.
std::string resolve_output_target(const std::string& path);

/// One output of a command: the option that names it (for the message) and its path. An empty path means the option
/// was not given (a given empty value is refused by output_file_option(), common/cli_exit.h).
struct OutputArgument {
  std::string option;
  std::string path;
};

/// The output paths a command holds until it ends (claim_output_paths); released when destroyed.
class OutputClaims {
 public:
  OutputClaims() = default;
  OutputClaims(OutputClaims&& other) noexcept : canonical_(std::move(other.canonical_)) { other.canonical_.clear(); }
  OutputClaims& operator=(OutputClaims&&) = delete;
  OutputClaims(const OutputClaims&) = delete;
  ~OutputClaims();

 private:
  friend OutputClaims claim_output_paths(const std::vector<OutputArgument>& outputs);
  std::vector<std::string> canonical_;
};

/// Claims every output of a command before it runs: each must resolve (resolve_output_target), its directory must
/// take a new file (a temporary file is created there and removed), and no two may name one file (after resolving
/// links, `.` and `..`), nor one that another claim of this process holds. Throws UsageError naming the option;
/// on a refusal nothing is claimed and nothing is left on disk.
[[nodiscard]] OutputClaims claim_output_paths(const std::vector<OutputArgument>& outputs);

/// One atomic replacement of `path` (resolve_output_target: a symbolic link is written through). The bytes go to
/// `<target>.tmp.XXXXXX` beside the target; commit() flushes, fsync()s and rename()s it over the target. Destroyed
/// without commit() (an error, an exception), the temporary file is removed and the target is untouched; a process
/// killed before commit() leaves the target untouched too (and a stray `.tmp.` file).
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;
  ~AtomicFile();

  /// Appends bytes to the temporary file.
  void write(const void* data, size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }
  /// For writers that open files by name (libavformat): they write here, then commit() replaces the target.
  const std::string& temp_path() const { return temp_; }
  const std::string& path() const { return path_; }
  /// Makes the written bytes durable and replaces the target with them, in one rename().
  void commit();

 private:
  [[noreturn]] void fail(const std::string& why) const;
  void release() noexcept;
  std::string path_;
  std::string target_;
  std::string canonical_;  ///< the key of this writer in the process's registry of files being written
  std::string temp_;
  int fd_ = -1;
  bool committed_ = false;
};

/// Replaces `path` with `bytes` atomically (AtomicFile, write, commit).
void write_file_atomically(const std::string& path, std::string_view bytes);

}  // namespace fuseproof
