// lane_calls.h: the streams and graph classes' calls as both CUDA runners make them (kernel ops and quantization
// ops): each call on device images of its own, the calls enqueued on several streams behind one gate, or captured
// into one graph and replayed with each set's images.
//
// A runner supplies its image types: Images (a call's guarded host images, with finish(spec, outcome)) and Dev (the
// same on the device, with upload(Images&, stream) and download(Images&)), and how a call is issued on a Dev.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "audit/call_watch.h"
#include "audit/cuda/device_kernels.cuh"
#include "audit/cuda/graph_capture.h"

namespace fuseproof::audit {

// Internal linkage, as CapturedGraph's (audit/cuda/graph_capture.h).
namespace {

/// Copies images[i] into dev[i] (allocated on its first use), asynchronously on `s`.
template <class Images, class Dev>
std::string upload_images(std::vector<Images>& images, std::vector<Dev>& dev, cudaStream_t s) {
  dev.resize(images.size());
  for (size_t i = 0; i < images.size(); ++i)
    if (auto e = dev[i].upload(images[i], s); !e.empty()) return e;
  return "";
}

/// The streams class: every call on device images of its own (`dev`, uploaded from `images` on `origin_stream`),
/// call i on stream i % lanes, all enqueued from this thread after one event that every stream waits on (behind a
/// gate kernel on origin_stream); events around each call time it. issue(i, dev[i], stream, &message) makes call i
/// and returns its rc. Fills co's lanes, calls, spans and subject_fault; returns "" or a CUDA failure.
template <class Outcome, class Spec, class Images, class Dev, class Issue>
std::string concurrent_on_streams(cudaStream_t origin_stream, const std::vector<Spec>& specs, int lanes,
                                  std::vector<Images>& images, std::vector<Dev>& dev, const Issue& issue, Outcome& co) {
  const size_t n = specs.size();
  lanes = std::max(1, std::min(lanes, int(n)));
  co.lanes = std::to_string(lanes) + " CUDA streams (non-blocking, one per lane)";
  if (auto e = upload_images(images, dev, origin_stream); !e.empty()) return e;
  StreamSet set;
  if (auto e = set.make(lanes, 2 * n + 1); !e.empty()) return e;
  FP_CUDA_TRY(cudaStreamSynchronize(origin_stream));
  cudaEvent_t origin = set.events[2 * n];
  constexpr uint64_t kGateNs = 10'000'000;  // 10 ms: far longer than enqueuing 32 calls
  spin_ns<<<1, 1, 0, origin_stream>>>(kGateNs);
  FP_CUDA_TRY(cudaGetLastError());
  FP_CUDA_TRY(cudaEventRecord(origin, origin_stream));
  for (cudaStream_t ls : set.streams) FP_CUDA_TRY(cudaStreamWaitEvent(ls, origin, 0));
  co.calls.resize(n);
  co.spans.resize(n);
  watch_begin(std::to_string(n) + " calls on " + co.lanes);
  co.subject_fault = true;
  const auto e0 = std::chrono::steady_clock::now();
  for (size_t i = 0; i < n; ++i) {
    cudaStream_t ls = set.streams[i % size_t(lanes)];
    FP_CUDA_TRY(cudaEventRecord(set.events[2 * i], ls));
    co.calls[i].rc = issue(i, dev[i], ls, &co.calls[i].message);
    FP_CUDA_TRY(cudaEventRecord(set.events[2 * i + 1], ls));
  }
  const double enqueue_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - e0).count();
  const bool gate_open = cudaEventQuery(origin) == cudaSuccess;  // the gate ended before the last enqueue
  char gate[160];
  std::snprintf(gate, sizeof gate, ", held behind a %.0f ms gate kernel on the origin stream; all enqueued in %.2f ms%s",
                double(kGateNs) / 1e6, enqueue_ms, gate_open ? " (after the gate had opened)" : " (before it opened)");
  co.lanes += gate;
  FP_CUDA_TRY(cudaDeviceSynchronize());
  FP_CUDA_TRY(cudaGetLastError());
  watch_end();
  for (size_t i = 0; i < n; ++i) {
    if (auto e = dev[i].download(images[i]); !e.empty()) return e;
    float t0 = 0, t1 = 0;
    FP_CUDA_TRY(cudaEventElapsedTime(&t0, origin, set.events[2 * i]));
    FP_CUDA_TRY(cudaEventElapsedTime(&t1, origin, set.events[2 * i + 1]));
    co.spans[i] = {double(t0) * 1000.0, double(t1) * 1000.0};
  }
  co.subject_fault = false;
  for (size_t i = 0; i < n; ++i) images[i].finish(specs[i], co.calls[i]);
  return "";
}

/// The graph class: warm(spec) makes each call of sets[0] once eagerly (an outcome with its fault); then sets[0]'s
/// calls are captured on device images of their own (`dev`) into one graph, and the graph replayed on `stream` once
/// per set, each set's images (images_of(set)) uploaded into `dev` first. issue(i, dev[i], stream, &message) makes
/// call i of sets[0]; describe(spec) names a call. Fills g; returns "" or a CUDA failure.
template <class Outcome, class Spec, class Dev, class ImagesOf, class Warm, class Issue, class Describe>
std::string graph_replays(cudaStream_t stream, const std::vector<std::vector<Spec>>& sets, const ImagesOf& images_of,
                          const Warm& warm, const Issue& issue, const Describe& describe, std::vector<Dev>& dev,
                          Outcome& g) {
  if (sets.empty()) return "";
  const std::vector<Spec>& first = sets[0];
  const size_t n = first.size();
  for (const auto& s : first) {
    g.warmup.push_back(warm(s));
    if (!g.warmup.back().fault.empty()) {
      g.subject_fault = g.warmup.back().subject_fault;
      return "in a warm-up call: " + g.warmup.back().fault;
    }
  }
  auto images = images_of(first);
  if (auto e = upload_images(images, dev, stream); !e.empty()) return e;
  FP_CUDA_TRY(cudaStreamSynchronize(stream));
  CapturedGraph owned;
  const auto issue_i = [&](size_t i, cudaStream_t cs, std::string* message) { return issue(i, dev[i], cs, message); };
  const auto describe_i = [&](size_t i) { return describe(first[i]); };
  // A capture error leaves nothing to replay: the class reports it, not a fault.
  if (auto e = owned.capture(n, issue_i, describe_i, &g.capture_error, &g.graph); !e.empty() || !g.capture_error.empty())
    return e;
  for (size_t k = 0; k < sets.size(); ++k) {
    auto im = images_of(sets[k]);
    if (auto e = upload_images(im, dev, stream); !e.empty()) return e;
    watch_begin("graph replay " + std::to_string(k));
    g.subject_fault = true;
    FP_CUDA_TRY(cudaGraphLaunch(owned.x, stream));
    FP_CUDA_TRY(cudaStreamSynchronize(stream));
    FP_CUDA_TRY(cudaGetLastError());
    watch_end();
    g.replays.emplace_back(n);
    for (size_t i = 0; i < n; ++i) {
      if (auto e = dev[i].download(im[i]); !e.empty()) return e;
      im[i].finish(sets[k][i], g.replays.back()[i]);
    }
    g.subject_fault = false;
  }
  return "";
}

}  // namespace

}  // namespace fuseproof::audit
