// host_lanes.h: the host runners' concurrent calls (the streams class on a host plugin): one thread per lane,
// released together, each making its calls one after another, every call timed from a common origin.
#pragma once

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

}  // namespace fuseproof::audit
