// streams_note.h: the streams class's note for both op families: how far the calls it ran at once overlapped in time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "audit/check_result.h"
#include "audit/kernel_runner.h"

namespace fuseproof::audit {

/// r.note for the set of `calls` concurrent calls that ran last (set `attempts` of up to `max_attempts`): `most` of
/// them in flight at once and `pairs` pairs on different lanes overlapping (overlap_of), the sum of their `spans`
/// against the wall time the spans cover, and the clock (`cuda`: events on each stream). A set with no overlap
/// (most < 2) tested no concurrency: the class is then incomplete when it passes.
inline void note_streams_overlap(CheckResult& r, const std::vector<Span>& spans, int calls, int attempts,
                                 int max_attempts, int most, uint64_t pairs, bool cuda) {
  const auto fixed1 = [](double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f", v);
    return std::string(b);
  };
  double first = 1e300, last = 0, busy = 0;
  for (const Span& sp : spans)
    first = std::min(first, sp.start_us), last = std::max(last, sp.end_us), busy += sp.end_us - sp.start_us;
  r.note = (attempts > 1 ? "set " + std::to_string(attempts) + " of up to " + std::to_string(max_attempts) + ": " : "") +
           "measured overlap: up to " + std::to_string(most) + " of the " + std::to_string(calls) +
           " calls in flight at once, " + std::to_string(pairs) + " pairs of calls on different lanes overlapping in "
           "time; the calls' spans add up to " + fixed1(busy) + " us in " + fixed1(last - first) + " us of wall time (" +
           (cuda ? "CUDA events recorded on each stream around each call" : "the host's steady clock around each call") +
           ")";
  if (most < 2) {
    r.incomplete_when_passing = true;
    r.note += "; the calls never overlapped, so concurrency was not tested";
  }
}

}  // namespace fuseproof::audit
