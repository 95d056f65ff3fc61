// bias_gelu_tanh_launcher.h: validating launcher for out = gelu_tanh(round_T(x + bias)), on CUDA or the CPU emulation.
#pragma once

#include <cstdint>
#include <string>

#include "tensor_view.h"

namespace fuseproof {

/// Bytes per vector load/store: 16 before Blackwell, 32 on sm_100+; kAuto picks by the device (emulation: 16).
enum class VectorPolicy : int { kAuto = 0, kBytes16 = 16, kBytes32 = 32 };

/// How each element's GELU is computed: the math in registers (precise tanhf), or lookups in a table of that same math
/// built on the device at first use, with x brought into shared memory beside the table by bulk copies (a ring of
/// chunks, sm_90+) instead of through registers. kTableBulk holds all 65,536 patterns (128 KiB + a 93 KiB ring per
/// 1,024-thread block, 1 block per SM); kTableRangeBulk only |x| < 5.5 (65 KiB bf16, 69 KiB fp16, + a 124 KiB ring)
/// with the large-|x| rule (x, -0, NaN) selected without a branch, two elements per integer step, and a lean path when
/// the whole warp is below 5.5. Both are exact for every input and their speed does not depend on it (docs/
/// PERFORMANCE.md: the worst case over input distributions). kAuto: kDirect below kAutoTableMinElements elements,
/// kAutoLargeMath from there (kTableRangeBulk where the device cannot hold the full table, then kDirect).
enum class GeluMath : int { kAuto = 0, kDirect = 1, kTableBulk = 2, kTableRangeBulk = 3 };

/// Every explicit math, in the order the bench and the tests run them.
inline constexpr GeluMath kAllGeluMaths[] = {GeluMath::kDirect, GeluMath::kTableBulk, GeluMath::kTableRangeBulk};

/// kAuto's switch point (rows x width): below it the table's fixed cost (its copy into every SM) is not repaid.
/// On the H200 (docs/PERFORMANCE.md, kAuto): the table beat direct at 4,096 x 13,824 and up; at 256 x 13,824 it won
/// under graph replay with PDL and lost by 3% in stream timing, so the switch stays between the two.
inline constexpr int64_t kAutoTableMinElements = int64_t(1) << 23;

/// kAuto's table, set from the worst case over input distributions (N(0, 0.25..16), uniform 16-bit patterns, the e2e
/// pipeline's own FFN inputs) at the seed shapes on the H200 with fused and copy reps alternating (docs/PERFORMANCE.md,
/// kAuto): the full table ahead of the range table at every seed shape and dtype, by 0.9-4.4 %. (Timed in blocks of
/// one kernel after itself, the range table was ahead by ~1 % from 1.7e8 to 4.5e8 elements: docs/PERFORMANCE.md,
/// Timing protocol.)
inline constexpr GeluMath kAutoLargeMath = GeluMath::kTableBulk;

struct BiasGeluOptions {
  VectorPolicy vector = VectorPolicy::kAuto;
  bool pdl = true;               ///< programmatic dependent launch on sm_90+ (CUDA only)
  void* stream = nullptr;        ///< cudaStream_t; nullptr = legacy default stream
  int emulated_sms = 132;        ///< CPU emulation: simulated SM count for the grid size
  bool pdl_skip_wait_for_test = false;  ///< negative control only: PDL launch without griddepcontrol.wait (stale reads)
  int max_grid_for_test = 0;  ///< test only (CUDA): at most this many blocks (0: the occupancy-capped grid), so a small
                              ///< tensor makes each block of the bulk ring refill its slots many times
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

/// The math a launch of rows x width elements on `device` uses: kAuto becomes kAutoLargeMath from kAutoTableMinElements,
/// kDirect below (a table only where the device has its shared memory per block, else the smaller range table, else
/// kDirect; the emulation always can).
GeluMath bias_gelu_tanh_resolve_math(const Device& device, int64_t elements, GeluMath requested);

/// "auto", "direct", "table-bulk" or "table-range-bulk".
const char* gelu_math_name(GeluMath math);

/// The GeluMath named by gelu_math_name; false when `name` is none of them.
bool gelu_math_from_name(const std::string& name, GeluMath* math);

/// Elements per vector (bytes / element size); a width is valid when it is a positive multiple of this.
int bias_gelu_tanh_vector_elems(ScalarType dtype, VectorPolicy resolved);

}  // namespace fuseproof
