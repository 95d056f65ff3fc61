// host_lanes.h: the host runners' concurrent calls (the streams class on a host plugin): one thread per lane,
// released together, each making its calls one after another, every call timed from a common origin.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <string>
#include <thread>
#include <vector>

#include "audit/call_watch.h"
#include "audit/kernel_runner.h"
#include "common/parallel_for.h"

namespace fuseproof::audit {

/// The words a concurrent outcome's `lanes` gets for `lanes` host threads.
inline std::string host_lanes_words(int lanes) {
  return std::to_string(lanes) + " host threads (one per lane, released together)";
}

/// call(i) for i in [0, n), call i on lane i % lanes, the lanes' threads released together once all have started;
/// spans[i]: when call i ran, in microseconds from the release. `lanes` is already clamped to [1, n].
template <class Call>
void run_host_lanes(size_t n, int lanes, const std::string& words, std::vector<Span>& spans, Call&& call) {
  using clock = std::chrono::steady_clock;
  spans.resize(n);
  std::atomic<int> ready{0};
  clock::time_point origin;
  watch_begin(std::to_string(n) + " calls on " + words);
  run_workers(unsigned(lanes), [&](unsigned lane) {
    if (ready.fetch_add(1) + 1 == lanes) origin = clock::now(), ready.fetch_add(1);
    while (ready.load() <= lanes) std::this_thread::yield();
    for (size_t i = size_t(lane); i < n; i += size_t(lanes)) {
      const auto t0 = clock::now();
      call(i);
      const auto t1 = clock::now();
      spans[i] = {std::chrono::duration<double, std::micro>(t0 - origin).count(),
                  std::chrono::duration<double, std::micro>(t1 - origin).count()};
    }
  });
  watch_end();
}

/// A host runner's call_concurrent (ConcurrentOutcome or QuantConcurrentOutcome): lanes clamped to [1, n], call i
/// made by call(i, &message) (its rc returned) on images[i] over run_host_lanes, then each call's images checked
/// (finish) into its outcome.
template <class Outcome, class Spec, class Images, class Call>
Outcome run_host_concurrent(const std::vector<Spec>& specs, int lanes, std::vector<Images>& images, Call&& call) {
  Outcome co;
  const size_t n = specs.size();
  lanes = std::max(1, std::min(lanes, int(n)));
  co.lanes = host_lanes_words(lanes);
  co.calls.resize(n);
  run_host_lanes(n, lanes, co.lanes, co.spans, [&](size_t i) { co.calls[i].rc = call(i, &co.calls[i].message); });
  for (size_t i = 0; i < n; ++i) images[i].finish(specs[i], co.calls[i]);
  return co;
}

}  // namespace fuseproof::audit
