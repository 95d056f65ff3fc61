// python_runner.h: KernelRunner for a Python callable on torch tensors: the audit's guarded images placed by the
// bridge (python/fuseproof/_bridge.py).
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <utility>

#include "audit/kernel_runner.h"
#include "python/python_bridge.h"

namespace fuseproof::python {

/// Runs a subject through a fuseproof._bridge.Bridge: the runner owns the guarded host images of the op's buffers and
/// out (audit/kernel_runner.h CallImages, poisoned as for plugins); the bridge wraps them as torch tensors
/// (torch.frombuffer, zero-copy), moves them to the subject's device and back, and calls the subject with the op's
/// buffers (fn(x, bias) or fn(x) for a packed op: 2-D [rows, width], a bias [width]). An op with group-broadcast
/// inputs gets DiT's 3-D tensors: fn(x, gate, y) with x, y [rows / group_rows, group_rows, width] and gate
/// [rows / group_rows, 1, width], out [rows / group_rows, group_rows, width]. Guards and inputs are checked by the
/// image runner. Calls that torch tensors cannot express (negative or overflowing shapes, null or odd-byte pointers,
/// a misaligned half of a packed buffer, another input count, dtype codes other than bf16 and fp16, a group_rows
/// that does not divide rows) are answered by the runner itself: rc 1, "not applicable to a Python subject".
class PythonRunner final : public audit::ImageRunner, private PythonBridge {
 public:
  /// `bridge`: a fuseproof._bridge.Bridge; `cuda`: the subject's tensors live on a CUDA device.
  PythonRunner(pybind11::object bridge, bool cuda) : PythonBridge(std::move(bridge), cuda) {}

  /// The counter-generated call built as host images (in parallel), run as any call, its inputs checked by
  /// regenerating them, its output handed to `check` in chunks of rows from the out image.
  audit::LargeOutcome large_call(const audit::LargeSpec& spec, const audit::ChunkCheck& check) override;
  /// Host memory available; on CUDA at most half the device's free memory (the subject's temporaries, such as the
  /// x + bias of an eager op, need as much again as the inputs and out).
  uint64_t memory_available() const override;
  std::string hardware() const override { return hardware_; }
  std::string arch() const override { return arch_; }
  std::string buffers_per_call() const override;
  /// The calls on torch.cuda.Stream lanes, or on the CPU on Python threads (the bridge's call_concurrent).
  std::optional<audit::ConcurrentOutcome> call_concurrent(const std::vector<audit::CallSpec>& specs,
                                                          int lanes) override;
  /// On CUDA: the calls captured by torch.cuda.graph and replayed (the bridge's call_graph); nullopt on the CPU.
  std::optional<audit::GraphOutcome> call_graph(const std::vector<std::vector<audit::CallSpec>>& sets) override;

 private:
  std::string inexpressible(const audit::CallSpec& spec) const override;
  std::string run(const audit::CallSpec& spec, audit::CallImages& images, audit::CallOutcome* o) override;
  /// Places the images, calls the subject (watch_begin/watch_end around it), copies back: rc, message, fault.
  std::string call_bridge(std::vector<audit::GuardedImage*>& buffers, const std::vector<int64_t>& data_offsets,
                          const std::vector<std::vector<int64_t>>& shapes, audit::GuardedImage& out,
                          const std::vector<int64_t>& out_shape, int32_t dtype, const std::string& call, int* rc,
                          std::string* message);

  /// The bridge's arguments of one call on `images`: (buffers, (out image, offset, out shape), dtype).
  pybind11::tuple call_args(const audit::CallSpec& spec, audit::CallImages& images);
  /// call_args of every call, in order.
  pybind11::list call_list(const std::vector<audit::CallSpec>& specs, std::vector<audit::CallImages>& images);
};

}  // namespace fuseproof::python
