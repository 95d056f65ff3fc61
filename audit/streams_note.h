// streams_note.h: the streams class's attempts and note for both op families: sets of calls made at once until two
// overlapped, and how far they overlapped in time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "audit/call_watch.h"
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

/// What the streams class's attempts left: the last set's outcome, the calls of it checked, the sets run, and its
/// overlap.
template <class Outcome>
struct StreamsAttempts {
  std::optional<Outcome> co;
  int checked = 0, attempts = 0, most = 0;
  uint64_t pairs = 0;
};

/// The streams class's loop for both op families. A loaded host (2 cores, other tests beside it) may run the lanes'
/// calls one after another, so the set of `calls` calls is made at once (make(): the runner's call_concurrent, or
/// nullopt when it has none) and checked again, until two calls overlap or kAttempts sets have run. fault(outcome)
/// reports a fault and returns true to end the class; check(outcome, &checked) checks the set's calls in order and
/// returns true when the class should stop (a mismatch). Returns false when the class ended (no lanes: SKIPPED, or a
/// fault); else r.note has the overlap (note_streams_overlap).
template <class Outcome, class Make, class Fault, class Check>
bool streams_attempts(CheckResult& r, int calls, int lanes, bool cuda, const Make& make, const Fault& fault,
                      const Check& check, StreamsAttempts<Outcome>& s) {
  constexpr int kAttempts = 6;
  while (s.attempts < kAttempts) {
    ++s.attempts;
    watch_label("streams: " + std::to_string(calls) + " calls at once");
    s.co = make();
    if (!s.co) {
      r.status = CheckStatus::kSkipped;
      r.note = "this runner has no streams or threads to run calls at once on";
      return false;
    }
    if (fault(*s.co)) return false;
    s.checked = 0;
    if (check(*s.co, &s.checked) || s.checked < calls) break;  // a mismatch: the class fails on it
    std::tie(s.most, s.pairs) = overlap_of(s.co->spans, lanes);
    if (s.most >= 2) break;
  }
  if (s.checked == calls) std::tie(s.most, s.pairs) = overlap_of(s.co->spans, lanes);
  note_streams_overlap(r, s.co->spans, calls, s.attempts, kAttempts, s.most, s.pairs, cuda);
  return true;
}

}  // namespace fuseproof::audit
