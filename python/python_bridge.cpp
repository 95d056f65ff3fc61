// python_bridge.cpp: the bridge object both Python runners hold.
#include "python/python_bridge.h"

#include <algorithm>

#include "audit/kernel_runner.h"

namespace py = pybind11;

namespace fuseproof::python {

PythonBridge::PythonBridge(py::object bridge, bool cuda) : bridge_(std::move(bridge)), cuda_(cuda) {
  py::gil_scoped_acquire gil;
  hardware_ = bridge_.attr("hardware")().cast<std::string>();
  arch_ = bridge_.attr("arch")().cast<std::string>();
  if (!cuda_) hardware_ += "; host " + audit::host_cpu_description();
}

PythonBridge::~PythonBridge() {
  py::gil_scoped_acquire gil;
  bridge_ = py::object();
}

uint64_t PythonBridge::capped_by_device(uint64_t host) const {
  if (!cuda_) return host;
  py::gil_scoped_acquire gil;
  try {
    const uint64_t device_free = bridge_.attr("device_free_bytes")().cast<uint64_t>();
    return std::min(host, device_free / 2);
  } catch (const py::error_already_set&) {
    return host;
  }
}

}  // namespace fuseproof::python
