// parallel_for_test.cpp: common/parallel_for.h: every index exactly once, slices in order, the first error rethrown.
#include "common/parallel_for.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <stdexcept>
#include <vector>

namespace fuseproof {
namespace {

TEST(Common_ParallelFor, EveryIndexOnceInOrderedSlices) {
  for (size_t n : {size_t(0), size_t(1), size_t(7), size_t(1000), size_t(12345)}) {
    for (unsigned k : {1u, 2u, 3u, 16u}) {
      std::vector<int> hits(n, 0);
      std::vector<size_t> lo_of(k, n), hi_of(k, 0);
      parallel_for(n, [&](unsigned w, size_t lo, size_t hi) {
        lo_of[w] = lo;
        hi_of[w] = hi;
        for (size_t i = lo; i < hi; ++i) ++hits[i];
      }, 1, k);
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i], 1) << "n=" << n << " k=" << k << " i=" << i;
      // Slices are contiguous and ordered by worker: slice w ends where slice w + 1 begins.
      size_t at = 0;
      for (unsigned w = 0; w < k; ++w) {
        if (hi_of[w] == 0) continue;
        EXPECT_EQ(lo_of[w], at) << "n=" << n << " k=" << k << " w=" << w;
        at = hi_of[w];
      }
      EXPECT_EQ(at, n);
    }
  }
}

TEST(Common_ParallelFor, BelowTheGrainRunsOneSlice) {
  int calls = 0;
  parallel_for(100, [&](unsigned w, size_t lo, size_t hi) {
    ++calls;
    EXPECT_EQ(w, 0u);
    EXPECT_EQ(lo, 0u);
    EXPECT_EQ(hi, 100u);
  }, 1000, 8);
  EXPECT_EQ(calls, 1);
}

TEST(Common_ParallelFor, ItemsEachOnce) {
  std::vector<std::atomic<int>> hits(5000);
  parallel_items(hits.size(), [&](unsigned, size_t i) { ++hits[i]; }, 4);
  for (size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i].load(), 1) << i;
}

TEST(Common_ParallelFor, FirstErrorRethrownAfterAllStop) {
  // Negative control of the loops above: a worker's exception reaches the caller instead of being lost.
  EXPECT_THROW(parallel_for(1000, [](unsigned w, size_t, size_t) {
                 if (w == 2) throw std::runtime_error("worker 2");
               }, 1, 4),
               std::runtime_error);
  std::atomic<int> started{0};
  EXPECT_THROW(parallel_items(100000, [&](unsigned, size_t i) {
                 ++started;
                 if (i == 10) throw std::runtime_error("item 10");
               }, 2),
               std::runtime_error);
  EXPECT_LT(started.load(), 100000);  // the items after the error were not run
}

TEST(Common_ParallelFor, WorkerCountReadsTheEnvironment) {
  ::setenv("FUSEPROOF_THREADS", "3", 1);
  EXPECT_EQ(worker_count(), 3u);
  for (const char* bad : {"0", "-1", "x", "3x", "5000"}) {
    ::setenv("FUSEPROOF_THREADS", bad, 1);
    EXPECT_GE(worker_count(), 1u) << bad;
    EXPECT_NE(worker_count(), 0u) << bad;
  }
  ::unsetenv("FUSEPROOF_THREADS");
  EXPECT_GE(worker_count(), 1u);
}

}  // namespace
}  // namespace fuseproof
