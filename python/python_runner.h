// python_runner.h: KernelRunner for a Python callable on torch tensors: guarded host images placed by the bridge.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "audit/kernel_runner.h"

namespace fuseproof::python {

/// Runs a subject through a fuseproof._bridge.Bridge: the runner owns guard + data + guard host images of x, bias
/// and out (poisoned as for plugins); the bridge wraps them as torch tensors (torch.frombuffer, zero-copy), moves them
/// to the subject's device and back, and calls the subject. Guards and inputs are checked here, on the images.
/// Calls that torch tensors cannot express (negative or overflowing shapes, null or odd-byte pointers, dtype codes
/// other than bf16 and fp16) are answered by the runner itself: rc 1, "not applicable to a Python subject".
class PythonRunner final : public audit::KernelRunner {
 public:
  /// `bridge`: a fuseproof._bridge.Bridge; `cuda`: the subject's tensors live on a CUDA device.
  PythonRunner(pybind11::object bridge, bool cuda);
  ~PythonRunner() override;

  audit::CallOutcome call(const audit::CallSpec& spec) override;
  audit::DomainBlock domain_block(int32_t dtype, const std::vector<uint16_t>& biases) override;
  /// nullopt: a Python subject has no PDL launch to order against a producer.
  std::optional<audit::CallOutcome> call_after_producer(const audit::CallSpec&, const std::vector<uint16_t>&,
                                                        const std::vector<uint16_t>&, int) override {
    return std::nullopt;
  }
  /// The counter-generated call built as host images (x generated in parallel), run as any call, its inputs checked by
  /// regenerating them, its output handed to `check` in chunks of rows from the out image.
  audit::LargeOutcome large_call(const audit::LargeSpec& spec, const audit::ChunkCheck& check) override;
  /// Host memory available; on CUDA at most half the device's free memory (the subject's temporaries, such as the
  /// x + bias of an eager op, need as much again as x and out).
  uint64_t memory_available() const override;
  std::string hardware() const override { return hardware_; }

 private:
  struct Images;
  /// Places the images, calls the subject (watch_begin/watch_end around it), copies back: rc, message, fault.
  void run(Images& im, int64_t rows, int64_t width, int32_t dtype, const std::string& call, int* rc,
           std::string* message, std::string* fault, bool* subject_fault);

  pybind11::object bridge_;
  bool cuda_;
  std::string hardware_;
};

/// Why `spec` cannot be passed as torch tensors ("" when it can).
std::string inexpressible_reason(const audit::CallSpec& spec);

}  // namespace fuseproof::python
