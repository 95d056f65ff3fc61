// phase_clock_test.cpp: common/phase_clock.h: time goes to the innermost running clock, only where a sink is set.
#include "common/phase_clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace fuseproof {
namespace {

void busy(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

double of(const PhaseTimes& t, const std::string& name) {
  for (const auto& p : t.phases)
    if (p.first == name) return p.second;
  return -1;
}

TEST(Common_PhaseClock, InnerClockPausesTheOuterOne) {
  PhaseTimes t;
  const auto t0 = std::chrono::steady_clock::now();
  {
    const PhaseSinkScope sink(&t);
    const PhaseClock outer("outer");
    busy(30);
    {
      const PhaseClock inner("inner");
      busy(60);
    }
    busy(30);
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(t.phases.size(), 2u);
  EXPECT_EQ(t.phases[0].first, "outer");  // first seen first
  // Exclusive: the phases never add up to more than the wall time they measured, and the outer phase is not
  // charged for the inner one (it would be >= 120 ms then).
  EXPECT_LE(t.total(), wall);
  EXPECT_GE(of(t, "inner"), 0.060);
  EXPECT_GE(of(t, "outer"), 0.060);
  EXPECT_LT(of(t, "outer"), 0.110);
}

TEST(Common_PhaseClock, RepeatedPhasesAddUp) {
  PhaseTimes t;
  const PhaseSinkScope sink(&t);
  for (int i = 0; i < 3; ++i) {
    const PhaseClock c("step");
    busy(10);
  }
  ASSERT_EQ(t.phases.size(), 1u);
  EXPECT_GE(of(t, "step"), 0.030);
}

TEST(Common_PhaseClock, NoSinkRecordsNothing) {
  PhaseTimes t;
  {
    const PhaseClock c("unseen");  // no sink on this thread
    busy(5);
  }
  {
    const PhaseSinkScope sink(&t);
    std::thread other([] {
      const PhaseClock c("other thread");  // sinks are per thread
      busy(5);
    });
    other.join();
  }
  EXPECT_TRUE(t.phases.empty());
  // Negative control: the same clock with a sink records.
  {
    const PhaseSinkScope sink(&t);
    const PhaseClock c("seen");
  }
  EXPECT_EQ(t.phases.size(), 1u);
}

TEST(Common_PhaseClock, MergeAddsByName) {
  PhaseTimes a, b;
  a.add("kernel", 1.0);
  a.add("copies", 2.0);
  b.add("copies", 0.5);
  b.add("digests", 0.25);
  a.merge(b);
  EXPECT_EQ(of(a, "copies"), 2.5);
  EXPECT_EQ(of(a, "digests"), 0.25);
  EXPECT_EQ(a.total(), 3.75);
}

}  // namespace
}  // namespace fuseproof
