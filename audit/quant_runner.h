// quant_runner.h: runs a quantization subject on guarded, poisoned buffers (host, CUDA or Python) and reads every
// byte back: the codes, the scales, their guards and the inputs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "audit/kernel_runner.h"
#include "audit/plugin_loader.h"
#include "audit/quant_call.h"

namespace fuseproof::audit {

struct QuantOutcome {
  int rc = 0;
  std::string message;           ///< the subject's rejection message
  std::vector<uint8_t> codes;    ///< codes_bytes read back (kPoison bytes where the subject wrote nothing)
  std::vector<uint8_t> scales;   ///< scale_bytes read back
  uint64_t guard_writes = 0;     ///< guard bytes of codes and scales no longer poison
  bool inputs_intact = true;     ///< every input buffer and its guards unchanged
  std::string modified;          ///< the buffers that changed, by name, when !inputs_intact
  std::string fault;             ///< a backend failure (a CUDA error): the class cannot go on
  bool subject_fault = false;    ///< the fault arose in or after the subject's call
  bool not_applicable = false;   ///< the runner cannot express this probe to its subject; never counted as a pass
};

class QuantRunner {
 public:
  virtual ~QuantRunner() = default;
  /// Runs every call, each on guarded images of its own (inputs with their guard fills, codes and scales poisoned
  /// with kPoison bytes), and reads everything back; outcomes in the order given. A runner may overlap the calls
  /// (host threads, CUDA streams). Every call is inside watch_begin/watch_end (audit/call_watch.h).
  virtual std::vector<QuantOutcome> call_batch(const std::vector<QuantCallSpec>& specs) = 0;
  QuantOutcome call(const QuantCallSpec& s) { return std::move(call_batch({s})[0]); }
  /// One line naming the hardware the subject runs on.
  virtual std::string hardware() const = 0;
  /// The GPU architecture ("sm_90"); empty on the host.
  virtual std::string arch() const { return ""; }
  /// Calls a batch should hold at most to keep the runner's lanes busy (the classes batch their calls by it).
  virtual int preferred_batch() const { return 16; }
};

/// Host memory: the plugin's calls on the images themselves, on every core.
std::unique_ptr<QuantRunner> make_host_quant_runner(const Plugin& plugin);
/// CUDA memory; throws PluginError (one line) when CUDA is not built in or no device is usable.
std::unique_ptr<QuantRunner> make_cuda_quant_runner(const Plugin& plugin);

}  // namespace fuseproof::audit
