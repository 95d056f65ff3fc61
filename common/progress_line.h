// progress_line.h: the one progress bar: "[####    ]  42% label 123/456" redrawn in place on a terminal stream.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace fuseproof {

/// Draws on `stream` only when `enabled` and the stream is a terminal, so logs and pipes stay clean.
class ProgressLine {
 public:
  ProgressLine(std::FILE* stream, std::string label, uint64_t total, bool enabled = true);
  ~ProgressLine() { finish(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  /// Redraws the line with `done` of `total` finished.
  void update(uint64_t done);
  /// Erases the line (idempotent).
  void finish();

 private:
  std::FILE* stream_;
  std::string label_;
  uint64_t total_;
  bool live_;
  size_t drawn_ = 0;  // characters on the line now
};

}  // namespace fuseproof
