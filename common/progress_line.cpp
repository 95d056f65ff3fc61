// progress_line.cpp: drawing and erasing the progress line.
#include "common/progress_line.h"

#include <unistd.h>

namespace fuseproof {

ProgressLine::ProgressLine(std::FILE* stream, std::string label, uint64_t total, bool enabled)
    : stream_(stream), label_(std::move(label)), total_(total ? total : 1), live_(enabled && isatty(fileno(stream))) {}

void ProgressLine::update(uint64_t done) {
  if (!live_) return;
  constexpr uint64_t kWidth = 40;
  const uint64_t filled = done * kWidth / total_;
  const std::string line = "[" + std::string(filled, '#') + std::string(kWidth - filled, ' ') + "] " +
                           std::to_string(done * 100 / total_) + "% " + label_ + " " + std::to_string(done) + "/" +
                           std::to_string(total_);
  std::fprintf(stream_, "\r%s", line.c_str());
  std::fflush(stream_);
  drawn_ = line.size();
}

void ProgressLine::finish() {
  if (!live_ || drawn_ == 0) return;
  std::fprintf(stream_, "\r%s\r", std::string(drawn_, ' ').c_str());
  std::fflush(stream_);
  drawn_ = 0;
}

}  // namespace fuseproof
