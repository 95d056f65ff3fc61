// python_quant_runner.h: QuantRunner for a quantization op written in Python: the audit's calls handed to
// fuseproof._quant_bridge.QuantBridge, the subject's (codes, scales) read back as the kernel ABI's bytes.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "audit/quant_runner.h"
#include "python/python_bridge.h"

namespace fuseproof::python {

/// Runs a subject through a fuseproof._quant_bridge.QuantBridge (docs/SUBJECTS.md, Quantization subjects): each
/// call's input buffers are copied into host buffers the bridge wraps as torch tensors (torch.frombuffer, zero-copy;
/// on CUDA copied to the device and back), the contract's scalars passed as 0-dim float32 tensors, and the bridge's
/// conversion of the subject's result (packed E2M1 codes or E4M3 bytes, E4M3 or binary32 scales in the call's layout)
/// copied over poisoned codes and scales: every byte the conversion does not write stays kPoison. A Python subject
/// writes nothing outside its result, so guard_writes is 0; the inputs are compared with the call's buffers after it.
/// The rejection probes a torch tensor cannot carry (null or misaligned pointers, other input or scalar counts, a
/// layout code override, dtype codes other than bf16 and fp16, empty, negative or overflowing shapes) and the swizzled
/// layout of a subject that does not declare it are not_applicable, never counted as passes.
class PythonQuantRunner final : public audit::QuantRunner, private PythonBridge {
 public:
  /// `bridge`: a fuseproof._quant_bridge.QuantBridge; `cuda`: the subject's tensors live on a CUDA device.
  PythonQuantRunner(pybind11::object bridge, bool cuda) : PythonBridge(std::move(bridge), cuda) {}

  std::vector<audit::QuantOutcome> call_batch(const std::vector<audit::QuantCallSpec>& specs) override;
  std::string hardware() const override { return hardware_; }
  std::string arch() const override { return arch_; }

  /// The large call as one ordinary call: its rows regenerated on the host, the subject's result copied back, then
  /// handed to `check` in chunks. It holds the call about three times over (the spec, the bridge's images, the
  /// outcome), which memory_available accounts for.
  std::optional<audit::QuantLargeOutcome> large_call(const audit::QuantLargeSpec& spec,
                                                     const audit::QuantChunkCheck& check) override;
  /// A third of the host memory available (large_call holds a call three times), on CUDA at most half the device's
  /// free memory.
  uint64_t memory_available() const override;

  /// Why the runner cannot pass `spec` to a Python subject ("" when it can): the not_applicable message.
  std::string inexpressible(const audit::QuantCallSpec& spec) const;

 private:
  audit::QuantOutcome call(const audit::QuantCallSpec& spec);
};

/// The shape of buffer k of a quantization call as the subject receives it: [width] for a row-broadcast bias,
/// [rows, 2 * width] for the packed gate|up, else [rows, width].
std::vector<int64_t> quant_buffer_shape(const audit::QuantCallSpec& spec, int k);

}  // namespace fuseproof::python
