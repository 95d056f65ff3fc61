// kernel_runner.h: runs a subject on host or CUDA memory with poisoned, guarded buffers, and reads everything back.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "audit/call_spec.h"
#include "audit/guarded_image.h"
#include "audit/plugin_loader.h"
#include "common/domain_sweep.h"
#include "reference/op_plan.h"

namespace fuseproof::audit {

struct CallOutcome {
  int rc = 0;
  std::string message;          ///< the subject's rejection message
  std::vector<uint16_t> out;    ///< out_elems elements read back
  uint64_t guard_writes = 0;    ///< guard bytes of out no longer kPoison
  bool inputs_intact = true;    ///< every input buffer and its guards unchanged
  std::string modified;         ///< the buffers that changed, by name ("x, bias"), when !inputs_intact
  std::string fault;            ///< non-empty when the backend failed (a CUDA error): the class cannot go on
  bool subject_fault = false;   ///< the fault arose in or after the subject's call (a defect of the subject)
  bool not_applicable = false;  ///< the runner cannot express this probe to its subject (a Python subject takes no
                                ///< null pointer or invalid dtype code); counted apart, never as a pass
};

/// How a LargeSpec's inputs are made (audit/counter_patterns.h), each element on its own, where the call runs.
enum class Patterns : uint8_t {
  kCounter,   ///< buffer k's element i is counter_pattern(buffer_seed(k), i)
  kWeighted,  ///< weighted_pattern_at(buffer_seed(k), i): what fill_counter_random writes (the widths class's calls)
  kGrid,      ///< a 2-input op's grid: input 0 at (r, c) is r, input 1 is grid_col0 + c (the domain class's blocks);
              ///< buffer elements no view covers are kCounter's
  kWitness,   ///< a stage's pairs (check_stages), flat: see WitnessPairs
};

/// The pairs of one stage of a 3-input op (ref::Stage) as the stages class lays them out in its calls: element i (row-
/// major over [rows, width]) of a call is pair p = i, or i % pairs past the call's pairs (padding, not compared);
/// its a index is p % na and its b index b_index[b_first + p / na]; its inputs are a's tuple with b's in the bits of
/// b_bits (ref::Stage::inputs: a's witness, b's depends from b's witness, the neutral inputs elsewhere).
struct WitnessPairs {
  uint32_t na = 0;
  uint32_t b_bits = 0;
  std::vector<std::array<uint16_t, ref::kMaxOpInputs>> a, b;  ///< per a index, per b index: every input
  std::vector<uint32_t> b_index;              ///< the b values the stage compares, in order
};

/// A call too large to hold twice on the host, or one of many made where they run: its inputs are generated there
/// (`patterns`) and regenerated where they are checked.
struct LargeSpec {
  const ref::OpSpec* op = nullptr;
  int64_t rows = 0;
  int64_t width = 0;
  int32_t dtype = 0;
  uint64_t seed = 0;
  int64_t group_rows = 1;  ///< rows per row of a group-broadcast input (1 for ops without one)
  Patterns patterns = Patterns::kCounter;
  uint32_t grid_col0 = 0;  ///< kGrid: input 1's value at column 0 (rows <= 65,536, grid_col0 + width <= 65,536)
  const WitnessPairs* witness = nullptr;  ///< kWitness: the stage's pairs
  uint64_t pairs = 0;                     ///< kWitness: the pairs of this call (the elements past them repeat them)
  uint32_t b_first = 0;                   ///< kWitness: the call's first b, a position in witness->b_index
  /// Buffer 0 draws from `seed`, buffer k > 0 from `seed ^ (kBiasSalt * k)` (the bias stream of the first op).
  uint64_t buffer_seed(int k) const;
  /// Elements of buffer k.
  size_t buffer_elems(int k) const;
  /// Input i's element (r, c), regenerated.
  uint16_t input(int i, int64_t r, int64_t c) const;
  /// Every declared input's element (r, c): in[0 .. inputs-1].
  void inputs(int64_t r, int64_t c, uint16_t* in) const {
    for (int i = 0; i < int(op->inputs.size()); ++i) in[i] = input(i, r, c);
  }
  /// input(i, r, c0 + j) for j in [0, n), into out[j]: one row's run, its offset computed once (every layout's
  /// offset is the row's plus the column: ref::OpSpec::input_offset).
  void input_run(int i, int64_t r, int64_t c0, int64_t n, uint16_t* out) const;
  /// The call's views (no buffers): what a runner passes to abi_call with its own buffer pointers.
  CallSpec view() const;
};

/// One rate of this machine measured in the audit's own run (`--profile`): what was copied or hashed, in GB/s.
struct Throughput {
  std::string what;
  double gb_per_s = 0;
};

/// Receives the output in order, `rows` rows from `row0` at a time; returns false to stop early.
using ChunkCheck = std::function<bool(int64_t row0, int64_t rows, const uint16_t* out)>;

struct LargeOutcome {
  int rc = 0;
  std::string message;
  uint64_t guard_writes = 0;    ///< guard bytes of out no longer kPoison
  uint64_t inputs_changed = 0;  ///< elements of an input buffer (or its guards) the call changed
  std::string fault;
  bool subject_fault = false;
};

/// What large_call_compared found where the output lives.
struct DeviceComparison {
  uint64_t compared = 0;       ///< output elements compared with the table
  uint64_t mismatches = 0;     ///< of them, the ones that differ
  std::vector<uint8_t> seen;   ///< 65,536 flags: e was the expected value of a sampled element (Sampling)
};

/// Which elements' expected values a device comparison flags in DeviceComparison::seen (the distinct-output guard):
/// element (r, c) when r % row_every == 0 and (r * width + c) % index_every == 0. The shapes class samples every
/// 61st element, the widths class every element, the domain class every 7th first input (its digest pass's rule).
struct Sampling {
  int64_t row_every = 1;
  int64_t index_every = 61;
};

/// The expected outputs a device comparison reads: table[in1 * 65536 + in0] = row(in1)[in0] (kWitness: the b index
/// and the a index), built once per key and kept for the next calls. `in_order`, when set, is handed the rows in
/// order as they are built, on one thread (a flat SHA-256 of the reference's outputs); else `tap`, when set, each
/// block where it is made, on the workers, concurrently and in any order (the row digests of a tree digest). Neither
/// is called when the table was kept from an earlier call of the same key.
struct ExpectedTable {
  std::string key;
  RowFn row;
  SweepConsumer in_order;
  SweepConsumer tap;
};

/// When one call of a concurrent or captured set ran, in microseconds from a common origin.
struct Span {
  double start_us = 0, end_us = 0;
};

/// The most calls whose spans intersect at one instant, and the pairs of calls on different lanes (call i on lane
/// i % lanes) that intersect.
std::pair<int, uint64_t> overlap_of(const std::vector<Span>& spans, int lanes);

/// Bytes of physical memory the host has free now (sysconf), 0 when it cannot tell: every runner's host side of
/// memory_available().
uint64_t host_memory_available();

/// The shapes classes' "not run" entry for call `name` (`why` it is in the class) needing `need` bytes where `have`
/// are free: "NAME (WHY: needs N GiB, M GiB free)", or "" when it fits or `have` is unknown (0).
std::string memory_shortfall(const std::string& name, const std::string& why, uint64_t need, uint64_t have);

/// The calls of call_concurrent, in the order given.
struct ConcurrentOutcome {
  std::vector<CallOutcome> calls;
  std::vector<Span> spans;      ///< per call: device time between events around it (CUDA), or the host's clock
  std::string lanes;            ///< "8 CUDA streams (non-blocking, one per lane)", "8 host threads"
  std::string fault;            ///< a backend failure; the calls are not valid then
  bool subject_fault = false;   ///< the fault arose in or after a subject's call
};

/// The replays of call_graph.
struct GraphOutcome {
  std::string capture_error;    ///< the capture or instantiation failed: the call and the CUDA error, named
  std::vector<CallOutcome> warmup;               ///< the eager call of each spec before the capture
  std::vector<std::vector<CallOutcome>> replays; ///< [replay][call]
  std::string graph;            ///< what was captured, in words ("a graph of 4 kernel nodes")
  std::string fault;
  bool subject_fault = false;
};

class KernelRunner {
 public:
  virtual ~KernelRunner() = default;
  virtual CallOutcome call(const CallSpec& spec) = 0;
  /// PDL ordering probe (CUDA only): the buffers start as `stale`'s, a producer on the subject's stream releases
  /// dependents at once, waits `delay_ms`, then writes `spec`'s buffers over them; then the subject runs. nullopt when
  /// the runner has no stream to order on.
  virtual std::optional<CallOutcome> call_after_producer(const CallSpec& spec, const CallSpec& stale, int delay_ms) = 0;
  /// Runs a LargeSpec call and streams its output to `check` in row chunks (no second full copy anywhere).
  virtual LargeOutcome large_call(const LargeSpec& spec, const ChunkCheck& check) = 0;
  /// A large call of a 2-input op (inputs per element or broadcast by strides) whose output is compared where it
  /// lives, each element with table[in1 * 65536 + in0]: the op's 2^32 expected outputs, the rows `expected_row`
  /// gives (OpPlan::row), built once per `table_key` and kept for the next call. Nothing is streamed back. nullopt when
  /// the runner cannot (host memory; no room for the table): large_call then.
  virtual std::optional<LargeOutcome> large_call_compared(const LargeSpec& spec, const std::string& table_key,
                                                          const RowFn& expected_row, DeviceComparison* cmp) {
    (void)spec, (void)table_key, (void)expected_row, (void)cmp;
    return std::nullopt;
  }
  /// Many calls of a 2-input op made one after another where they run, with no synchronisation between them: each
  /// call's inputs generated there (spec.patterns), its out poisoned, and after it its inputs, guards and output
  /// checked there, the output against the table as in large_call_compared. One outcome and comparison per call, in
  /// order; a fault ends the batch (outcome 0 carries it, the others are not valid). nullopt when the runner cannot
  /// (as large_call_compared); the caller then makes the calls one by one on the host path.
  virtual std::optional<std::vector<LargeOutcome>> calls_compared(const std::vector<LargeSpec>& specs,
                                                                  const ExpectedTable& table, const Sampling& sampling,
                                                                  std::vector<DeviceComparison>* cmps) {
    (void)specs, (void)table, (void)sampling, (void)cmps;
    return std::nullopt;
  }
  /// Bytes a large call may allocate (free device memory, or host memory available); 0 when unknown.
  virtual uint64_t memory_available() const = 0;
  /// One line naming the hardware the subject runs on.
  virtual std::string hardware() const = 0;
  /// The GPU architecture the subject runs on ("sm_90"); empty on the host.
  virtual std::string arch() const { return ""; }
  /// Where each call's buffers live and whether a later call gets the same memory, in words (for the scopes of the
  /// classes that make many calls).
  virtual std::string buffers_per_call() const = 0;
  /// The copies a call pays on this runner's memory, measured now (`--profile`): a host memcpy; the CUDA runner
  /// adds host-to-device and device-to-host, pageable and pinned.
  virtual std::vector<Throughput> copy_throughput();
  /// The calls made at once, each on its own buffers: call i on lane i % lanes (a CUDA stream, or a host thread), all
  /// enqueued with no synchronisation between them, then all read back. nullopt when the runner has no lanes.
  virtual std::optional<ConcurrentOutcome> call_concurrent(const std::vector<CallSpec>& specs, int lanes) {
    (void)specs, (void)lanes;
    return std::nullopt;
  }
  /// CUDA graphs: each call of sets[0] made once eagerly (a warm-up, as models do before they capture), then captured
  /// on one stream (cudaStreamCaptureModeGlobal) into one graph on buffers of its own, instantiated, and replayed once
  /// per set: before replay r, set r's inputs are written into the captured buffers and out is poisoned again. Every
  /// set has the shapes of sets[0]. nullopt when the runner has no graphs.
  virtual std::optional<GraphOutcome> call_graph(const std::vector<std::vector<CallSpec>>& sets) {
    (void)sets;
    return std::nullopt;
  }
};

/// The images of one call: one per buffer (guards filled with input_guard_fill(k)), out poisoned (its data too), and
/// the inputs' bytes before the call; what every runner does before and after the subject runs.
struct CallImages {
  /// An input image of `snapshot_from` bytes or more gets no copy of its bytes: the runner checks it where it lives
  /// and says in changed_on_device whether the call changed it (the CUDA runner, on the device).
  explicit CallImages(const CallSpec& spec, size_t snapshot_from = SIZE_MAX);
  std::vector<GuardedImage> buffers;
  GuardedImage out;
  std::vector<std::vector<uint8_t>> before;  ///< empty for an image without a snapshot
  /// Per buffer without a snapshot: 1 when the runner saw the call change it, 0 when it saw it unchanged, -1 not
  /// told (finish then fails loudly: an unchecked input is a runner bug, never an intact input).
  std::vector<int8_t> changed_on_device;
  /// Pointers of the buffers' data in this host memory.
  std::vector<uint8_t*> buffer_data();
  /// Reads out back into o (out_elems from the data start), counts out's guard writes, compares the inputs.
  void finish(const CallSpec& spec, CallOutcome& o) const;
};

/// The images of each call of `specs`, in order (what call_concurrent and call_graph work on).
std::vector<CallImages> images_of(const std::vector<CallSpec>& specs);

/// A runner whose calls go through CallImages: it places the images where the subject reads them, calls it, and
/// brings every byte back; guards and inputs are checked here, once for every runner.
class ImageRunner : public KernelRunner {
 public:
  CallOutcome call(const CallSpec& spec) final;
  std::optional<CallOutcome> call_after_producer(const CallSpec&, const CallSpec&, int) override {
    return std::nullopt;
  }
  std::string buffers_per_call() const override {
    return "every call on new guarded host images (allocated per call; the allocator may hand back an earlier "
           "call's addresses)";
  }

 protected:
  /// Why the subject cannot be given `spec` ("" when it can): counted as not applicable.
  virtual std::string inexpressible(const CallSpec&) const { return ""; }
  /// Input images of this many bytes or more get no host snapshot: run() checks them itself and sets
  /// CallImages::changed_on_device (default: every input is snapshotted and compared on the host).
  virtual size_t snapshot_from() const { return SIZE_MAX; }
  /// Places the images, calls the subject (watch_begin/watch_end around it), brings them back; a backend failure in
  /// the returned string (subject_fault set when it arose in or after the subject's call).
  virtual std::string run(const CallSpec& spec, CallImages& images, CallOutcome* o) = 0;
};

/// Host memory: the plugin's calls on the images themselves.
std::unique_ptr<KernelRunner> make_host_runner(const Plugin& plugin);

/// CUDA memory; throws PluginError (one line) when CUDA is not built in or no device is usable.
std::unique_ptr<KernelRunner> make_cuda_runner(const Plugin& plugin);

/// True when this build has CUDA and a device is usable.
bool cuda_runner_available(std::string* why);

/// SHA-256 (common/sha256.h) on one thread and on every hardware thread, measured now (`--profile`).
std::vector<Throughput> hash_throughput();

/// CPU model name from /proc/cpuinfo, and the logical CPU count.
std::string host_cpu_description();

/// Fills the buffers of `spec` with their counter streams, using every hardware thread.
void fill_counter_buffers(const LargeSpec& spec, std::vector<uint16_t*>& buffers);
/// Counts the elements of the buffers that differ from their counter streams.
uint64_t count_counter_changes(const LargeSpec& spec, const std::vector<const uint16_t*>& buffers);

}  // namespace fuseproof::audit
