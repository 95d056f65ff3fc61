// kernel_runner.h: runs a plugin on host or CUDA memory with poisoned, guarded buffers, and reads everything back.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "audit/plugin_loader.h"

namespace fuseproof::audit {

/// Written over `out` and its guards before each call; a NaN pattern no correct kernel writes (NaN is 0x7FFF).
inline constexpr uint16_t kPoison = 0xFFA5;
/// Guard elements on each side of every buffer; writes there are out-of-bounds writes.
inline constexpr size_t kGuardElems = 256;

/// One call: the data to place, the arguments to pass, and how to spoil them for rejection probes.
struct CallSpec {
  int64_t rows = 0;
  int64_t width = 0;
  int32_t dtype = 0;
  std::vector<uint16_t> x;      ///< copied into the plugin's memory (may be shorter than rows * width for probes)
  std::vector<uint16_t> bias;
  size_t out_elems = 0;         ///< size of the out buffer
  uint32_t x_misalign = 0, bias_misalign = 0, out_misalign = 0;  ///< bytes added to the aligned pointers
  bool null_x = false, null_bias = false, null_out = false;
};

struct CallOutcome {
  int rc = 0;
  std::string message;          ///< the plugin's rejection message
  std::vector<uint16_t> out;    ///< out_elems elements read back
  uint64_t guard_writes = 0;    ///< guard elements of out no longer kPoison
  bool inputs_intact = true;    ///< x, bias and their guards unchanged
  std::string fault;            ///< non-empty when the backend itself failed (a CUDA error): the audit cannot go on
};

/// Domain block: x[r, c] = r for r < 65536, bias[c] = biases[c]; out_canonical[c * 65536 + r] (bias-major).
struct DomainBlock {
  std::vector<uint16_t> out_canonical;
  int rc = 0;
  std::string message;
  std::string fault;
};

class KernelRunner {
 public:
  virtual ~KernelRunner() = default;
  virtual CallOutcome call(const CallSpec& spec) = 0;
  /// Runs the plugin over all 65,536 x for each bias (biases.size() a multiple of the vector).
  virtual DomainBlock domain_block(int32_t dtype, const std::vector<uint16_t>& biases) = 0;
  /// PDL ordering probe (CUDA only): a producer on the plugin's stream releases dependents at once, waits `delay_ms`,
  /// then writes spec.x and spec.bias over `stale_x`/`stale_bias`; then the plugin runs. nullopt on host memory.
  virtual std::optional<CallOutcome> call_after_producer(const CallSpec& spec, const std::vector<uint16_t>& stale_x,
                                                         const std::vector<uint16_t>& stale_bias, int delay_ms) = 0;
  /// One line naming the hardware the plugin runs on.
  virtual std::string hardware() const = 0;
};

/// Host memory.
std::unique_ptr<KernelRunner> make_host_runner(const Plugin& plugin);

/// CUDA memory; throws PluginError (one line) when CUDA is not built in or no device is usable.
std::unique_ptr<KernelRunner> make_cuda_runner(const Plugin& plugin);

/// True when this build has CUDA and a device is usable.
bool cuda_runner_available(std::string* why);

/// CPU model name from /proc/cpuinfo, and the logical CPU count.
std::string host_cpu_description();

}  // namespace fuseproof::audit
