// parallel_for.h: the one way code outside the subject spreads work over the machine's cores.
//
// Three shapes, all on plain std::thread, all rethrowing the first exception of any worker after every worker has
// stopped (no worker outlives the call, nothing is detached):
//   run_workers(k, fn)         fn(w) for w = 0..k-1, each on its own thread (k = 1 runs on the caller): the base of the
//                              other two, and of pipelines that need a producer/consumer shape (common/domain_sweep).
//   parallel_for(n, fn, grain) fn(w, lo, hi) over contiguous, ordered slices of [0, n), one per worker; on the caller
//                              alone when n < grain (small work is not worth a thread start).
//   parallel_items(n, fn)      fn(w, i) for every item i of [0, n), claimed one at a time: uneven items (rows of
//                              different cost, files) balance themselves. Once a worker throws, no new item starts.
//   run_beside(fn)             fn() on a thread of its own while the caller goes on (the next stage of a pipeline,
//                              work that overlaps the caller's): a std::future whose get() waits and rethrows, and
//                              whose destructor waits too, so the thread never outlives its owner.
// w identifies the worker (0..k-1), for per-worker scratch space. The count is worker_count() unless given.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <exception>
#include <future>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace fuseproof {

/// Threads a parallel loop uses: FUSEPROOF_THREADS when it is an integer in [1, 4096] (a test that pins the count, a
/// shared runner), else std::thread::hardware_concurrency(), at least 1.
inline unsigned worker_count() {
  if (const char* env = std::getenv("FUSEPROOF_THREADS"); env && *env) {
    char* end = nullptr;
    const long v = std::strtol(env, &end, 10);
    if (*end == '\0' && v >= 1 && v <= 4096) return unsigned(v);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

/// fn(w) for w in [0, workers), concurrently; the caller runs w = 0. Rethrows the first exception once all stopped.
template <class Fn>
void run_workers(unsigned workers, Fn&& fn) {
  workers = std::max(1u, workers);
  std::exception_ptr error;
  std::mutex mu;
  auto guarded = [&](unsigned w) {
    try {
      fn(w);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mu);
      if (!error) error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (unsigned w = 1; w < workers; ++w) pool.emplace_back(guarded, w);
  guarded(0);
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

/// fn(w, lo, hi) over [0, n) in contiguous slices, slice w = [n * w / k, n * (w + 1) / k); one slice on the caller
/// when n < grain. `workers` 0 means worker_count().
template <class Fn>
void parallel_for(size_t n, Fn&& fn, size_t grain = 1, unsigned workers = 0) {
  if (n == 0) return;
  size_t k = workers ? workers : worker_count();
  if (n < grain) k = 1;
  k = std::min(k, n);
  run_workers(unsigned(k), [&](unsigned w) {
    const size_t lo = n * w / k, hi = n * (w + 1) / k;
    if (lo < hi) fn(w, lo, hi);
  });
}

/// fn(w, i) for every i in [0, n), each claimed by the next free worker; after a worker throws no item starts.
template <class Fn>
void parallel_items(size_t n, Fn&& fn, unsigned workers = 0) {
  if (n == 0) return;
  const size_t k = std::min<size_t>(workers ? workers : worker_count(), n);
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  run_workers(unsigned(k), [&](unsigned w) {
    for (size_t i = next++; i < n && !stop.load(std::memory_order_relaxed); i = next++) {
      try {
        fn(w, i);
      } catch (...) {
        stop = true;
        throw;
      }
    }
  });
}

/// fn() on a thread of its own, beside the caller; the future's get() waits for it and rethrows what it threw.
template <class Fn>
auto run_beside(Fn&& fn) {
  return std::async(std::launch::async, std::forward<Fn>(fn));
}

}  // namespace fuseproof
