// kernel_runner.h: runs a plugin on host or CUDA memory with poisoned, guarded buffers, and reads everything back.
#pragma once

#include <cstdint>
#include <functional>
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
  std::string fault;            ///< non-empty when the backend failed (a CUDA error): the class cannot go on
  bool subject_fault = false;   ///< the fault arose in or after the subject's call (a defect of the subject)
  bool not_applicable = false;  ///< the runner cannot express this probe to its subject (a Python subject takes no
                                ///< null pointer or invalid dtype code); counted apart, never as a pass
};

/// A call too large to hold twice on the host: x[r * width + c] = counter_pattern(seed, r * width + c) and
/// bias[c] = counter_pattern(seed ^ kBiasSalt, c) (audit/counter_patterns.h), generated where the call runs.
struct LargeSpec {
  int64_t rows = 0;
  int64_t width = 0;
  int32_t dtype = 0;
  uint64_t seed = 0;
};

/// Receives the output in order, `rows` rows from `row0` at a time; returns false to stop early.
using ChunkCheck = std::function<bool(int64_t row0, int64_t rows, const uint16_t* out)>;

struct LargeOutcome {
  int rc = 0;
  std::string message;
  uint64_t guard_writes = 0;    ///< guard elements of out no longer kPoison
  uint64_t inputs_changed = 0;  ///< elements of x or bias (or their guards) the call changed
  std::string fault;
  bool subject_fault = false;
};

/// Domain block: x[r, c] = r for r < 65536, bias[c] = biases[c]; out_canonical[c * 65536 + r] (bias-major).
struct DomainBlock {
  std::vector<uint16_t> out_canonical;
  int rc = 0;
  std::string message;
  std::string fault;
  bool subject_fault = false;
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
  /// Runs a LargeSpec call and streams its output to `check` in row chunks (no second full copy anywhere).
  virtual LargeOutcome large_call(const LargeSpec& spec, const ChunkCheck& check) = 0;
  /// Bytes a large call may allocate (free device memory, or host memory available); 0 when unknown.
  virtual uint64_t memory_available() const = 0;
  /// One line naming the hardware the plugin runs on.
  virtual std::string hardware() const = 0;
};

/// Host memory.
std::unique_ptr<KernelRunner> make_host_runner(const Plugin& plugin);

/// CUDA memory; throws PluginError (one line) when CUDA is not built in or no device is usable.
std::unique_ptr<KernelRunner> make_cuda_runner(const Plugin& plugin);

/// "rows=R,width=W,dtype=D,x+M,bias+M,out+M" (+ which pointers are null): the call's arguments for a record.
std::string describe_call(const CallSpec& s);

/// True when this build has CUDA and a device is usable.
bool cuda_runner_available(std::string* why);

/// CPU model name from /proc/cpuinfo, and the logical CPU count.
std::string host_cpu_description();

}  // namespace fuseproof::audit
