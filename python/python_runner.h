// python_runner.h: KernelRunner for a Python callable on torch tensors: guarded host images, placed by fuseproof._bridge.
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
  std::string hardware() const override { return hardware_; }

 private:
  pybind11::object bridge_;
  bool cuda_;
  std::string hardware_;
};

/// Why `spec` cannot be passed as torch tensors ("" when it can).
std::string inexpressible_reason(const audit::CallSpec& spec);

}  // namespace fuseproof::python
