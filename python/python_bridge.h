// python_bridge.h: what both Python runners keep of their bridge object: the object (dropped under the GIL), where the
// subject's tensors live, the hardware the bridge names, and the device memory it reports.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>

namespace fuseproof::python {

/// The bridge a Python runner calls through (fuseproof._bridge.Bridge, fuseproof._quant_bridge.QuantBridge); a
/// runner's private base.
class PythonBridge {
 protected:
  /// `cuda`: the subject's tensors live on a CUDA device. Asks the bridge for its hardware and arch; on the CPU the
  /// host's CPU is appended to the hardware.
  PythonBridge(pybind11::object bridge, bool cuda);
  /// Drops the bridge object under the GIL.
  ~PythonBridge();
  PythonBridge(const PythonBridge&) = delete;
  PythonBridge& operator=(const PythonBridge&) = delete;

  /// `host` bytes, on CUDA at most half the device's free memory as the bridge reports it (`host` when it cannot).
  uint64_t capped_by_device(uint64_t host) const;

  pybind11::object bridge_;
  bool cuda_;
  std::string hardware_, arch_;
};

}  // namespace fuseproof::python
