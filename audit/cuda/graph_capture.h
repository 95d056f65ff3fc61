// graph_capture.h: the graph class's capture, as both CUDA runners make it: a runner's calls captured on a stream of
// their own into one CUDA graph, instantiated, and named by its node counts; a refusal or a failed capture in words.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

#include "audit/call_watch.h"
#include "audit/cuda/device_kernels.cuh"
#include "audit/cuda/device_slot.h"

namespace fuseproof::audit {

// Internal linkage, as StreamSet's (audit/cuda/device_kernels.cuh).
namespace {

/// A graph captured from a runner's calls and its executable `x`, destroyed with this (executable first); the
/// capture's stream lives as long, after them.
struct CapturedGraph {
  StreamSet set;  // the capture's stream
  cudaGraph_t g = nullptr;
  cudaGraphExec_t x = nullptr;

  CapturedGraph() = default;
  CapturedGraph(const CapturedGraph&) = delete;
  CapturedGraph& operator=(const CapturedGraph&) = delete;
  ~CapturedGraph() {
    if (x) cudaGraphExecDestroy(x);
    if (g) cudaGraphDestroy(g);
  }

  /// Captures the calls issue(i, stream, &message), i < n (the subject's call i on `stream`; nonzero when it refused),
  /// on a stream of their own (cudaStreamCaptureModeGlobal) inside one watch_begin/watch_end, then instantiates the
  /// graph into `x`. A refused call (named by describe(i)), a failed cudaStreamEndCapture or cudaGraphInstantiate
  /// goes to *capture_error, and nothing is instantiated; else *what names the graph's nodes. Returns "" or a CUDA
  /// failure outside the subject's calls (FP_CUDA_TRY).
  template <class Issue, class Describe>
  std::string capture(size_t n, const Issue& issue, const Describe& describe, std::string* capture_error,
                      std::string* what) {
    // FP_CUDA_TRY's message quotes its expression (a report line shows it): renaming cs, graph, list, node or type
    // changes what a failure says.
    if (auto e = set.make(1, 0); !e.empty()) return e;
    cudaStream_t cs = set.streams[0];
    FP_CUDA_TRY(cudaStreamBeginCapture(cs, cudaStreamCaptureModeGlobal));
    watch_begin("capture of " + std::to_string(n) + " calls");
    std::string refused;
    for (size_t i = 0; i < n && refused.empty(); ++i) {
      std::string message;
      if (issue(i, cs, &message) != 0)
        refused = "call " + std::to_string(i) + " [" + describe(i) + "] returned an error while the stream was "
                  "capturing: " + message;
    }
    cudaGraph_t graph = nullptr;
    const cudaError_t end = cudaStreamEndCapture(cs, &graph);
    const cudaError_t pending = cudaGetLastError();  // clears an error the capture left (not sticky)
    watch_end();
    g = graph;
    if (!refused.empty() || end != cudaSuccess) {
      *capture_error = refused;
      if (end != cudaSuccess)
        *capture_error += std::string(refused.empty() ? "" : "; ") + "cudaStreamEndCapture: " +
                          cudaGetErrorName(end) + " (" + cudaGetErrorString(end) + ")";
      if (pending != cudaSuccess && pending != end)
        *capture_error += std::string("; first error during the capture: ") + cudaGetErrorName(pending) + " (" +
                          cudaGetErrorString(pending) + ")";
      return "";
    }
    if (const cudaError_t e = cudaGraphInstantiate(&x, graph, 0); e != cudaSuccess) {
      *capture_error = std::string("cudaGraphInstantiate: ") + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
      return "";
    }
    size_t nodes = 0;
    FP_CUDA_TRY(cudaGraphGetNodes(graph, nullptr, &nodes));
    std::vector<cudaGraphNode_t> list(nodes);
    size_t kernels = 0;
    if (nodes) {
      FP_CUDA_TRY(cudaGraphGetNodes(graph, list.data(), &nodes));
      for (cudaGraphNode_t node : list) {
        cudaGraphNodeType type;
        FP_CUDA_TRY(cudaGraphNodeGetType(node, &type));
        kernels += type == cudaGraphNodeTypeKernel;
      }
    }
    *what = "captured one CUDA graph of " + std::to_string(nodes) + " nodes (" + std::to_string(kernels) +
            " kernel nodes) for the " + std::to_string(n) + " calls";
    return "";
  }
};

}  // namespace

}  // namespace fuseproof::audit
