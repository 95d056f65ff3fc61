// bias_gelu_tanh_launcher.h: validating launcher for out = gelu_tanh(round_T(x + bias)), on CUDA or the CPU emulation.
#pragma once

#include <cstdint>
#include <string>

#include "tensor_view.h"

namespace fuseproof {

/// Bytes per vector load/store: 16 before Blackwell, 32 on sm_100+; kAuto picks by the device (emulation: 16).
enum class VectorPolicy : int { kAuto = 0, kBytes16 = 16, kBytes32 = 32 };

/// How each element's GELU is computed: the math in registers (precise tanhf), or one lookup in a 65,536-entry table of
/// that same math (built on the device at first use, held in 128 KiB of shared memory per block); kAuto picks the table
/// from kAutoTableMinElements elements when the device allows 128 KiB of shared memory per block.
enum class GeluMath : int { kAuto = 0, kDirect = 1, kTable = 2 };

/// kAuto's switch point (rows x width): below it the table's fixed cost (128 KiB copied into every SM) is not repaid.
inline constexpr int64_t kAutoTableMinElements = int64_t(1) << 23;

struct BiasGeluOptions {
  VectorPolicy vector = VectorPolicy::kAuto;
  bool pdl = true;               ///< programmatic dependent launch on sm_90+ (CUDA only)
  void* stream = nullptr;        ///< cudaStream_t; nullptr = legacy default stream
  int emulated_sms = 132;        ///< CPU emulation: simulated SM count for the grid size
  bool pdl_skip_wait_for_test = false;  ///< negative control only: PDL launch without griddepcontrol.wait (stale reads)
  GeluMath math = GeluMath::kAuto;      ///< direct math or GELU table (both bit-exact; CUDA and emulation alike)
};

/// Result of validation or launch: ok, or a one-line message naming argument, rule and value.
struct LaunchStatus {
  bool ok = true;
  std::string message;
  explicit operator bool() const { return ok; }
};

/// Checks every rule (dtype, rank, shape, contiguity, alignment, devices, overlap, overflow) without touching memory.
LaunchStatus bias_gelu_tanh_can_implement(const TensorView& out, const TensorView& x, const TensorView& bias,
                                          const BiasGeluOptions& options = {});

/// Validates, then runs on x's device: CUDA kernel for DeviceKind::kCuda, CPU emulation for kCpu.
/// On rejection nothing is launched and `out` is untouched.
LaunchStatus bias_gelu_tanh(const TensorView& out, const TensorView& x, const TensorView& bias,
                            const BiasGeluOptions& options = {});

/// The policy a launch on `device` uses: kAuto becomes kBytes32 on sm_100+ and kBytes16 otherwise (CPU: kBytes16).
VectorPolicy bias_gelu_tanh_resolve_vector(const Device& device, VectorPolicy requested);

/// The math a launch of rows x width elements on `device` uses: kAuto becomes kTable from kAutoTableMinElements
/// elements (on CUDA only where the device allows 128 KiB of shared memory per block; the emulation always can),
/// kDirect below.
GeluMath bias_gelu_tanh_resolve_math(const Device& device, int64_t elements, GeluMath requested);

/// "auto", "direct" or "table".
const char* gelu_math_name(GeluMath math);

/// Elements per vector (bytes / element size); a width is valid when it is a positive multiple of this.
int bias_gelu_tanh_vector_elems(ScalarType dtype, VectorPolicy resolved);

/// True when a CUDA device is usable in this process (false when CUDA was not built or no device/driver).
bool cuda_device_available();

}  // namespace fuseproof
