// phase_clock.h: where a piece of work spends its wall time, by named phase, for `fuseproof audit --profile`.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace fuseproof {

/// Seconds by phase, in the order each phase was first seen. The phases of one sink never overlap: time is
/// charged to the innermost running PhaseClock only (an outer phase pauses while an inner one runs), so the
/// phases add up to at most the wall time of the work they measured.
struct PhaseTimes {
  std::vector<std::pair<std::string, double>> phases;
  void add(const std::string& name, double seconds);
  double total() const;
  /// Adds every phase of `other` (a second lane's or process's times).
  void merge(const PhaseTimes& other);
};

/// Makes `sink` the current thread's profile sink for its lifetime (restoring the previous one after).
/// PhaseClocks on threads with no sink cost one thread-local read and record nothing.
class PhaseSinkScope {
 public:
  explicit PhaseSinkScope(PhaseTimes* sink);
  ~PhaseSinkScope();
  PhaseSinkScope(const PhaseSinkScope&) = delete;
  PhaseSinkScope& operator=(const PhaseSinkScope&) = delete;

 private:
  PhaseTimes* previous_;
};

/// Charges the wall time of its scope to `name` in the current thread's sink (exclusive of nested clocks).
class PhaseClock {
 public:
  explicit PhaseClock(const char* name);
  ~PhaseClock();
  PhaseClock(const PhaseClock&) = delete;
  PhaseClock& operator=(const PhaseClock&) = delete;

 private:
  using Clock = std::chrono::steady_clock;
  friend struct PhaseClockStack;
  const char* name_;
  PhaseClock* outer_ = nullptr;
  Clock::time_point since_{};
  bool active_ = false;
};

}  // namespace fuseproof
