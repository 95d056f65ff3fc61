// quant_runner.h: runs a quantization subject on guarded, poisoned buffers (host, CUDA or Python) and reads every
// byte back: the codes, the scales, their guards and the inputs.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
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

/// A quantization call too large to hold twice on the host (its codes may pass 2^31): buffer k's element i is
/// counter_pattern(buffer_seed(k), i) (audit/counter_patterns.h), generated where the call runs and regenerated where
/// it is checked. Linear scales, so that a run of rows holds its own scale cells.
struct QuantLargeSpec {
  QuantCallSpec view;               ///< the call's views, scalars and tensor sizes; no buffers
  std::vector<size_t> buffer_elems;  ///< elements of each buffer
  std::vector<size_t> row_elems;     ///< elements each row adds to a buffer (0: broadcast, one row for every row)
  uint64_t seed = 0;
  /// Buffer 0 draws from `seed`, buffer k > 0 from counter_hash(seed, k).
  uint64_t buffer_seed(int k) const;
  bool bf16() const { return view.dtype == FUSEPROOF_DTYPE_BF16; }
  /// Rows [row0, row0 + rows) as an ordinary call: per-row buffers regenerated from their rows' offsets, broadcast
  /// buffers whole; the same scalars.
  QuantCallSpec rows_of(int64_t row0, int64_t rows) const;
  /// Writes buffer k's counter stream into p (every core), and counts the elements of p that differ from it.
  void fill(int k, uint16_t* p) const;
  uint64_t changed(int k, const uint16_t* p) const;
};

/// A large call of (op, contract) of [rows, width], linear scales, with `scalars`.
QuantLargeSpec make_quant_large(const ref::QuantOpSpec& op, ref::QuantContract contract, int64_t rows, int64_t width,
                                int32_t dtype, uint64_t seed, const std::vector<float>& scalars);

/// Receives the codes and scales in order, `rows` rows from `row0` at a time (codes_bytes and scale_bytes of those
/// rows); returns false to stop early.
using QuantChunkCheck =
    std::function<bool(int64_t row0, int64_t rows, const uint8_t* codes, const uint8_t* scales)>;

struct QuantLargeOutcome {
  int rc = 0;
  std::string message;
  uint64_t guard_writes = 0;    ///< guard bytes of codes and scales no longer poison (an odd tensor's pad byte too)
  uint64_t inputs_changed = 0;  ///< elements of an input buffer (or its guards) the call changed
  std::string fault;
  bool subject_fault = false;
};

/// The calls of call_concurrent, in the order given.
struct QuantConcurrentOutcome {
  std::vector<QuantOutcome> calls;
  std::vector<Span> spans;     ///< per call: device time between events around it (CUDA), or the host's clock
  std::string lanes;           ///< "8 CUDA streams (non-blocking, one per lane)", "8 host threads"
  std::string fault;           ///< a backend failure; the calls are not valid then
  bool subject_fault = false;  ///< the fault arose in or after a subject's call
};

/// The replays of call_graph.
struct QuantGraphOutcome {
  std::string capture_error;                      ///< the capture or instantiation failed, named
  std::vector<QuantOutcome> warmup;               ///< the eager call of each spec before the capture
  std::vector<std::vector<QuantOutcome>> replays;  ///< [replay][call]
  std::string graph;                              ///< what was captured, in words
  std::string fault;
  bool subject_fault = false;
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
  /// Where each call's buffers live and whether a later call gets the same memory, in words (for the scopes of the
  /// classes that make many calls).
  virtual std::string buffers_per_call() const {
    return "every call on new guarded images (the allocator may hand back an earlier call's addresses)";
  }

  // The entry points of the calls-as-models-make-them classes (audit/quant_call_classes.h). Each default says the
  // runner cannot express it (nullopt, or 0 bytes): the class then reports SKIPPED or INCOMPLETE, never a pass.

  /// Runs a QuantLargeSpec call and streams its codes and scales to `check` in row chunks (no second full copy).
  virtual std::optional<QuantLargeOutcome> large_call(const QuantLargeSpec& spec, const QuantChunkCheck& check) {
    (void)spec, (void)check;
    return std::nullopt;
  }
  /// Bytes a large call may allocate (free device memory, or host memory available); 0 when unknown.
  virtual uint64_t memory_available() const { return 0; }
  /// The calls made at once, each on images of its own: call i on lane i % lanes (a CUDA stream, or a host thread),
  /// all enqueued with no synchronisation between them, then all read back.
  virtual std::optional<QuantConcurrentOutcome> call_concurrent(const std::vector<QuantCallSpec>& specs, int lanes) {
    (void)specs, (void)lanes;
    return std::nullopt;
  }
  /// CUDA graphs: each call of sets[0] made once eagerly, then captured on one stream (cudaStreamCaptureModeGlobal)
  /// into one graph on images of its own, instantiated, and replayed once per set: before replay r, set r's inputs
  /// are written into the captured buffers and codes and scales poisoned again. Every set has sets[0]'s shapes.
  virtual std::optional<QuantGraphOutcome> call_graph(const std::vector<std::vector<QuantCallSpec>>& sets) {
    (void)sets;
    return std::nullopt;
  }
};

/// Host memory: the plugin's calls on the images themselves, on every core.
std::unique_ptr<QuantRunner> make_host_quant_runner(const Plugin& plugin);
/// CUDA memory; throws PluginError (one line) when CUDA is not built in or no device is usable.
std::unique_ptr<QuantRunner> make_cuda_quant_runner(const Plugin& plugin);

}  // namespace fuseproof::audit
