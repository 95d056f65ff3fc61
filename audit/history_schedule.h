// history_schedule.h: the history class's call schedule, one for every op family (the elementwise ops'
// check_history and the quantization ops' quant_history): which dtype, shape and repeat each call of the sequence
// gets, and the words of its scope.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>

namespace fuseproof::audit {

/// One call of the schedule.
struct HistoryCall {
  int which = 0;        ///< 0: the audited dtype, 1: the other (0 when only one dtype is audited)
  int64_t rows = 0;
  int64_t width = 0;
  bool repeat = false;  ///< the previous call's shape again, with new contents
};

/// kCalls calls in one process, as a model makes them: the first prefill-sized (2,048 or 4,096 elements, a multiple
/// of 64 and of `unit`: a kernel that picks a launch plan on its first call picks its widest one here), the second
/// the other dtype on the same shape, then either dtype at random, a third of them repeating the previous shape,
/// the others rows 1..200 and widths unit..max_units * unit in steps of unit (none a multiple of 16 when
/// `not_multiple_of_16`). `Rng` draws uint64_t; the draws are the schedule's alone, in call order.
template <class Rng>
class HistorySchedule {
 public:
  static constexpr int kCalls = 64;

  HistorySchedule(int64_t unit, bool not_multiple_of_16, bool both, Rng& rng)
      : unit_(unit), off16_(not_multiple_of_16), both_(both), rng_(rng),
        max_units_(std::max<int64_t>(2, 1024 / unit)) {
    const int64_t u64 = std::lcm(unit, int64_t(64));
    rows_ = 1 + int64_t(rng_() % 200);
    width_ = u64 * ((2048 + u64 - 1) / u64) * (1 + int64_t(rng_() % 2));
    first_width_ = width_;
  }

  /// Call i (0 .. kCalls - 1, in order).
  HistoryCall next(int i) {
    HistoryCall c;
    if (i == 1) {
      c.which = 1;  // the other dtype at once, on the same shape
      c.repeat = true;
    } else if (i > 1) {
      c.which = int(rng_() % 2);
      if (rng_() % 3 == 0) {
        c.repeat = true;
      } else {
        rows_ = 1 + int64_t(rng_() % 200);
        do width_ = unit_ * (1 + int64_t(rng_() % uint64_t(max_units_)));
        while (off16_ && width_ % 16 == 0);
      }
    }
    if (!both_) c.which = 0;
    c.rows = rows_;
    c.width = width_;
    repeats_ += c.repeat;
    ++made_[c.which];
    return c;
  }

  int64_t first_width() const { return first_width_; }
  int64_t max_units() const { return max_units_; }

  /// "64 calls in one process, 30 bf16 and 34 fp16 interleaved at random (the first bf16 at width 4096, a multiple
  /// of 64, the second fp16 on the same shape), then widths " (or, with one dtype, every call of it), then
  /// `widths` (the family's words for its widths), ", rows 1..200, " and `rest` after the count of repeats.
  std::string scope(const std::string& mine, const std::string& theirs, const std::string& widths,
                    const std::string& rest) const {
    const int made = made_[0] + made_[1];
    return (made < kCalls ? std::to_string(made) + " of " + std::to_string(kCalls) + " calls (stopped early)"
                          : std::to_string(kCalls) + " calls") +
           " in one process, " +
           (both_ ? std::to_string(made_[0]) + " " + mine + " and " + std::to_string(made_[1]) + " " + theirs +
                        " interleaved at random (the first " + mine + " at width " + std::to_string(first_width_) +
                        ", a multiple of 64, the second " + theirs + " on the same shape), then widths "
                  : "every one " + mine + " (--dtype " + mine + "; --dtype all interleaves " + theirs +
                        "), the first at width " + std::to_string(first_width_) +
                        ", a multiple of 64, the second on the same shape, then widths ") +
           widths + ", rows 1..200, " + std::to_string(repeats_) +
           " calls repeating the previous shape with new contents; " + rest;
  }

 private:
  int64_t unit_;
  bool off16_, both_;
  Rng& rng_;
  int64_t max_units_;
  int64_t rows_ = 0, width_ = 0, first_width_ = 0;
  int repeats_ = 0;
  int made_[2] = {0, 0};
};

}  // namespace fuseproof::audit
