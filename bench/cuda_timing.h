// cuda_timing.h: CUDA-event timing for the benchmark: a gate that holds the stream while reps are queued, per-rep
// event pairs, medians, and CUDA-graph replay. CUDA builds only.
#pragma once

#include <cuda_runtime_api.h>

#include <atomic>
#include <memory>
#include <utility>
#include <vector>

namespace fuseproof::bench {

/// Throws std::runtime_error "bench: <what> failed: <error name>" when e is not cudaSuccess.
void cuda_check(cudaError_t e, const char* what);

/// Median of v (NaN when empty).
double median(std::vector<double> v);

/// Holds the stream in a host function until everything to be timed is queued, so that the host-side cost of
/// validation and launch never shows up between a start and a stop event (a 2-second bound keeps it from hanging).
class StreamGate {
 public:
  explicit StreamGate(cudaStream_t s);
  ~StreamGate() { open(); }
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;
  void open() { flag_->store(true); }

 private:
  std::shared_ptr<std::atomic<bool>> flag_ = std::make_shared<std::atomic<bool>>(false);
};

/// Per-rep event pairs on one stream; medians in microseconds.
class RepTimer {
 public:
  RepTimer(cudaStream_t s, int reps);
  ~RepTimer();
  RepTimer(const RepTimer&) = delete;
  RepTimer& operator=(const RepTimer&) = delete;
  void start(int i) { cuda_check(cudaEventRecord(ev_[size_t(2 * i)], s_), "cudaEventRecord"); }
  void stop(int i) { cuda_check(cudaEventRecord(ev_[size_t(2 * i + 1)], s_), "cudaEventRecord"); }
  double median_us();

 private:
  cudaStream_t s_;
  std::vector<cudaEvent_t> ev_;
};

/// Times `op(i)` for i < reps (the gate holds the stream while they are queued); median per op in microseconds.
template <class Op>
double time_reps(cudaStream_t s, int reps, Op op) {
  RepTimer timer(s, reps);
  StreamGate gate(s);
  for (int i = 0; i < reps; ++i) {
    timer.start(i);
    op(i);
    timer.stop(i);
  }
  gate.open();
  return timer.median_us();
}

/// Times a(i) and b(i) alternately for i < reps, each between its own pair of events on stream s and each after an
/// untimed before(i) (the gate holds the stream while they are queued): a slow drift of the card (clocks,
/// temperature) then moves both medians alike, and their ratio does not inherit it. {median of a, median of b} in
/// microseconds.
template <class OpA, class OpB, class Before>
std::pair<double, double> time_reps_interleaved(cudaStream_t s, int reps, OpA a, OpB b, Before before) {
  RepTimer ta(s, reps), tb(s, reps);
  StreamGate gate(s);
  for (int i = 0; i < reps; ++i) {
    before(i);
    ta.start(i);
    a(i);
    ta.stop(i);
    before(i);
    tb.start(i);
    b(i);
    tb.stop(i);
  }
  gate.open();
  return {ta.median_us(), tb.median_us()};
}

/// Captures `launches` calls of op(i) on stream s into a graph, replays it `reps` times; median per launch in us.
template <class Op>
double time_graph(cudaStream_t s, int launches, int reps, Op op) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cuda_check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  for (int i = 0; i < launches; ++i) op(i);
  cuda_check(cudaStreamEndCapture(s, &graph), "cudaStreamEndCapture");
  cuda_check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  cuda_check(cudaGraphLaunch(exec, s), "cudaGraphLaunch");  // warm-up
  cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  const double us = time_reps(s, reps, [&](int) { cuda_check(cudaGraphLaunch(exec, s), "cudaGraphLaunch"); });
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return us / launches;
}

}  // namespace fuseproof::bench
