// phase_clock.cpp: the thread-local sink and the stack of running clocks (the innermost one is charged).
#include "common/phase_clock.h"

namespace fuseproof {

namespace {
thread_local PhaseTimes* t_sink = nullptr;
thread_local PhaseClock* t_top = nullptr;
}  // namespace

struct PhaseClockStack {
  static void charge(PhaseClock& c, PhaseClock::Clock::time_point now) {
    if (t_sink) t_sink->add(c.name_, std::chrono::duration<double>(now - c.since_).count());
    c.since_ = now;
  }
};

void PhaseTimes::add(const std::string& name, double seconds) {
  for (auto& p : phases)
    if (p.first == name) {
      p.second += seconds;
      return;
    }
  phases.emplace_back(name, seconds);
}

double PhaseTimes::total() const {
  double s = 0;
  for (const auto& p : phases) s += p.second;
  return s;
}

void PhaseTimes::merge(const PhaseTimes& other) {
  for (const auto& p : other.phases) add(p.first, p.second);
}

PhaseSinkScope::PhaseSinkScope(PhaseTimes* sink) : previous_(t_sink) { t_sink = sink; }
PhaseSinkScope::~PhaseSinkScope() { t_sink = previous_; }

PhaseClock::PhaseClock(const char* name) : name_(name) {
  if (!t_sink) return;
  active_ = true;
  const auto now = Clock::now();
  if (t_top) PhaseClockStack::charge(*t_top, now);  // the outer phase pauses here
  outer_ = t_top;
  t_top = this;
  since_ = now;
}

PhaseClock::~PhaseClock() {
  if (!active_) return;
  const auto now = Clock::now();
  PhaseClockStack::charge(*this, now);
  t_top = outer_;
  if (outer_) outer_->since_ = now;  // and resumes here
}

}  // namespace fuseproof
