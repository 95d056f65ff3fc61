// check_classes.cpp: the check classes; each compares encodings (never values) against the op's reference model.
#include "audit/check_classes.h"

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <future>
#include <numeric>
#include <random>
#include <stdexcept>

#include "audit/audit_inputs.h"
#include "audit/call_watch.h"
#include "audit/check_support.h"
#include "audit/correct_rounding.h"
#include "audit/counter_patterns.h"
#include "common/exit_status.h"
#include "common/domain_sweep.h"
#include "common/parallel_for.h"
#include "common/tree_digest.h"
#include "common/testfloat_record.h"

namespace fuseproof::audit {

using namespace detail;

namespace {

/// The widths up to which a call of `rows` fits a call-sized buffer: rows * width elements per per-element input.
int64_t pad_to(int64_t n, int64_t v) { return (n + v - 1) / v * v; }

/// A call whose input 0 at (r, c) is rows_of(r, c) and input 1 is cols[c % cols.size()] (second inputs across the
/// columns, the same down each column, so that a broadcast input is expressible). 2-input ops only: the grid of the
/// extreme pairs, the tie columns and the domain (ops of more inputs: tuple_call). fill_grid writes the grid into a
/// call of that shape, input 0 too unless `keep_first` (a call reused for other columns).
template <class In0>
void fill_grid(CallSpec& s, const std::vector<uint16_t>& cols, const In0& in0, bool keep_first) {
  const InputView a = s.inputs[0], b = s.inputs[1];
  uint16_t* pa = s.buffers[size_t(a.buffer)].data() + a.offset;
  uint16_t* pb = s.buffers[size_t(b.buffer)].data() + b.offset;
  const int64_t width = s.width;
  const size_t n = cols.size();
  parallel_for(size_t(s.rows), [&](unsigned, size_t lo, size_t hi) {
    for (int64_t r = int64_t(lo); r < int64_t(hi); ++r)
      for (int64_t c = 0, j = 0; c < width; ++c, j = j + 1 == int64_t(n) ? 0 : j + 1) {  // j = c % n
        if (!keep_first) pa[r * a.stride[0] + c * a.stride[1]] = in0(r, c);
        pb[r * b.stride[0] + c * b.stride[1]] = cols[size_t(j)];
      }
  }, std::max<size_t>(1, kParallelGrain / size_t(width)));
}

template <class In0>
CallSpec grid_call(const CheckContext& ctx, int64_t rows, const std::vector<uint16_t>& cols, const In0& in0) {
  const int64_t v = ctx.info.vector_elems();
  CallSpec s = make_spec(ctx, rows, pad_to(int64_t(cols.size()), v));
  fill_grid(s, cols, in0, false);
  return s;
}

}  // namespace

void check_rejection(const CheckContext& ctx, CheckResult& r) {
  const int64_t v = ctx.info.vector_elems();
  const ref::OpSpec& op = *ctx.model.op;
  struct Probe {
    std::string what;
    CallSpec spec;
    bool may_accept = false;  // an empty call may be a no-op instead of a rejection; it must still write nothing
  };
  std::vector<Probe> probes;
  std::mt19937_64 rng(class_seed(ctx, CheckClass::kRejection));
  // A call of `rows` x `width` with the op's buffers; for impossible shapes (negative, overflowing) the buffers are
  // small: a correct kernel refuses before it reads them.
  auto base = [&](int64_t rows, int64_t width) {
    const bool real = rows >= 0 && width >= 0 && rows <= 64 && width <= (int64_t(1) << 20);
    CallSpec s = make_call(op, real ? rows : 2, real ? std::max<int64_t>(width, 1) : 4 * v, ctx.abi_dtype);
    s.rows = rows;
    s.width = width;
    s.inputs = layout_views(op, width);
    if (real) s.out_elems = size_t(rows * width);
    for (auto& b : s.buffers)
      for (auto& e : b) e = random_pattern(ctx.model.dtype, rng);
    return s;
  };
  // Widths that are not multiples of the vector; the buffers hold exactly what the layout needs, so an honest
  // elementwise kernel stays in bounds and a vector kernel that rounds up runs into the guards.
  std::vector<int64_t> bad_widths{1, v - 1, v + 1, v + v / 2, 3 * v - 1, 64 * v + 1};
  std::sort(bad_widths.begin(), bad_widths.end());
  bad_widths.erase(std::unique(bad_widths.begin(), bad_widths.end()), bad_widths.end());
  for (int64_t w : bad_widths) {
    if (w < 1 || w % v == 0) continue;
    for (int64_t rows : {int64_t(1), int64_t(3)})
      probes.push_back({"width " + std::to_string(w) + " not a multiple of " + std::to_string(v) + ", rows " +
                            std::to_string(rows), base(rows, w)});
  }
  probes.push_back({"width 0", base(2, 0), true});
  probes.push_back({"width -" + std::to_string(v), base(2, -v)});
  probes.push_back({"rows 0", base(0, 4 * v), true});
  probes.push_back({"rows -1", base(-1, 4 * v)});
  probes.push_back({"rows * width overflows int64", base(INT64_MAX / 4, 4 * v)});
  for (int32_t dt : {int32_t(FUSEPROOF_DTYPE_FLOAT32), int32_t(FUSEPROOF_DTYPE_INT16), int32_t(-1), int32_t(7)}) {
    Probe p{"dtype code " + std::to_string(dt), base(2, 4 * v)};
    p.spec.dtype = dt;
    probes.push_back(p);
  }
  {
    Probe p{"out null", base(2, 4 * v)};
    p.spec.null_out = true;
    probes.push_back(p);
  }
  for (int i = 0; i < int(op.inputs.size()); ++i) {
    Probe p{op.inputs[size_t(i)].name + " null", base(2, 4 * v)};
    p.spec.null_input.assign(op.inputs.size(), false);
    p.spec.null_input[size_t(i)] = true;
    probes.push_back(p);
  }
  if (ctx.info.vector_bytes > 2) {
    Probe p{"out misaligned by 2 bytes", base(2, 4 * v)};
    p.spec.out_misalign = 2;
    probes.push_back(p);
    for (int i = 0; i < int(op.inputs.size()); ++i) {
      Probe q{op.inputs[size_t(i)].name + " misaligned by 2 bytes", base(2, 4 * v)};
      q.spec.input_misalign.assign(op.inputs.size(), 0);
      q.spec.input_misalign[size_t(i)] = 2;
      probes.push_back(q);
    }
  }
  {
    Probe p{std::to_string(op.inputs.size() + 1) + " inputs where the op has " + std::to_string(op.inputs.size()),
            base(2, 4 * v)};
    p.spec.n_inputs_override = int32_t(op.inputs.size() + 1);
    probes.push_back(p);
  }
  if (op.inputs.size() > 2) {  // one input short (a 2-input op's one-short probe stays as it was: none)
    Probe p{std::to_string(op.inputs.size() - 1) + " inputs where the op has " + std::to_string(op.inputs.size()),
            base(2, 4 * v)};
    p.spec.n_inputs_override = int32_t(op.inputs.size() - 1);
    probes.push_back(p);
  }
  if (op.has_groups()) {
    // group_rows must be >= 1 and divide rows; the buffers hold what the valid neighbour of each call needs.
    for (int64_t g : {int64_t(0), int64_t(-1)}) {
      Probe p{"group_rows " + std::to_string(g), base(2, 4 * v)};
      p.spec.group_rows = g;
      probes.push_back(p);
    }
    {
      Probe p{"rows 3 not a multiple of group_rows 2", base(3, 4 * v)};  // group buffers of 3 rows: none read past
      p.spec.group_rows = 2;
      probes.push_back(p);
    }
    {
      Probe p{"group_rows 4 above rows 2", base(2, 4 * v)};
      p.spec.group_rows = 4;
      probes.push_back(p);
    }
  }
  Tally t(ctx, r);
  size_t not_applicable = 0;
  for (const Probe& p : probes) {
    watch_label("rejection probe: " + p.what);
    const CallOutcome o = ctx.runner.call(p.spec);
    if (o.not_applicable) {
      ++not_applicable;
      continue;
    }
    ++r.cases;
    if (!o.fault.empty()) {
      if (!o.subject_fault) throw std::runtime_error("audit: backend failure in rejection probe " + p.what + ": " + o.fault);
      t.fault("CUDA error in rejection probe " + p.what + " [" + describe_call(p.spec) + "]: " + o.fault);
      break;
    }
    uint64_t written = 0;
    for (uint16_t e : o.out) written += e != kPoison;
    const std::string head = op.name + " " + ref::dtype_name(ctx.model.dtype) + " reject " + p.what + " [" +
                             shape(p.spec.rows, p.spec.width) + ",dtype=" + std::to_string(p.spec.dtype) + "]: ";
    std::string why;
    if (o.rc == 0 && !p.may_accept) why += "returned 0 (accepted); ";
    if (o.rc != 0 && (o.message.empty() || o.message.find('\n') != std::string::npos))
      why += "rejection message must be one non-empty line; ";
    if (written) why += "wrote " + std::to_string(written) + " of " + std::to_string(o.out.size()) + " out elements; ";
    if (o.guard_writes) why += "wrote " + std::to_string(o.guard_writes) + " guard bytes; ";
    if (!o.inputs_intact) why += "modified its input " + o.modified + "; ";
    if (!why.empty()) t.failure(head + why.substr(0, why.size() - 2));
  }
  r.distinct_expected = 0;
  r.scope = std::to_string(probes.size()) + " invalid calls (widths not a multiple of " + std::to_string(v) +
            ", empty and negative shapes, int64 overflow, 4 invalid dtype codes, a wrong input count, null and "
            "misaligned pointers" + (op.has_groups() ? std::string(", group_rows 0, -1, not dividing rows, above rows")
                                                     : std::string()) +
            "), out poisoned with 0xFFA5 and " + std::to_string(kGuardElems) + " guard elements around every buffer";
  if (not_applicable)
    r.scope += "; " + std::to_string(not_applicable) + " of them not applicable to this subject (not counted)";
}

namespace {

/// Ops of 3 or more inputs: every tuple of extreme patterns (one in each slot), then ties and near-ties at every
/// rounding node of the composition, all in calls of group_rows 1 (grouping is the property class's).
void extreme_tuples_class(const CheckContext& ctx, CheckResult& r) {
  const ref::Dtype d = ctx.model.dtype;
  const int n = ctx.model.inputs();
  Tally t(ctx, r);
  const auto tuples = extreme_tuples(d, n);
  constexpr size_t kPerCall = size_t(1) << 16;
  for (size_t k = 0; k < tuples.size(); k += kPerCall)
    if (!run_valid(ctx, t, tuple_call(ctx, tuples, k, std::min(kPerCall, tuples.size() - k)), "extreme tuples"))
      return;
  std::string ties_scope;
  for (const TupleTieSet& set : tuple_ties(*ctx.model.plan, class_seed(ctx, CheckClass::kExtreme))) {
    if (set.tuples.empty()) continue;
    if (!run_valid(ctx, t, tuple_call(ctx, set.tuples, 0, set.tuples.size()), "ties at " + set.node)) return;
    ties_scope += "; at " + set.node + ": " + std::to_string(set.tuples.size()) + " tuples (" +
                  std::to_string(set.ties) + " exact ties, " + std::to_string(set.near) +
                  " one binary32 unit or one input pattern from one, " + std::to_string(set.cancel) +
                  " cancellations: an added input nearest minus the rest, and its neighbours)";
  }
  const size_t e = extreme_patterns(d).size();
  std::string names;
  for (const auto& in : ctx.model.op->inputs) names += (names.empty() ? "" : ", ") + in.name;
  r.scope = std::to_string(tuples.size()) + " (" + names + ") tuples of extreme patterns (" + std::to_string(e) + "^" +
            std::to_string(n) + ": NaN payloads, +-Inf, subnormals, +-0, max finite in every slot), group_rows 1" +
            ties_scope;
}

}  // namespace

void check_extreme(const CheckContext& ctx, CheckResult& r) {
  if (ctx.model.inputs() != 2) return extreme_tuples_class(ctx, r);
  const ref::Dtype d = ctx.model.dtype;
  Tally t(ctx, r);
  // Every pair of extreme patterns: the first input down the rows, the second across the columns.
  const std::vector<uint16_t> s = extreme_patterns(d);
  const CallSpec pairs = grid_call(ctx, int64_t(s.size()), s, [&](int64_t row, int64_t) { return s[size_t(row)]; });
  if (!run_valid(ctx, t, pairs, "extreme pairs")) return;
  // Ties and near-ties at every rounding node: columns of (second input, first inputs down the rows), in calls of up
  // to 64 columns.
  std::string ties_scope;
  for (const TieSet& set : rounding_ties(*ctx.model.plan, class_seed(ctx, CheckClass::kExtreme))) {
    uint64_t cases = 0;
    for (size_t k0 = 0; k0 < set.columns.size(); k0 += 64) {
      const size_t k1 = std::min(set.columns.size(), k0 + 64);
      size_t rows = 0;
      std::vector<uint16_t> cols;
      for (size_t k = k0; k < k1; ++k) {
        rows = std::max(rows, set.columns[k].in0.size());
        cols.push_back(set.columns[k].in1);
      }
      if (rows == 0) continue;
      const CallSpec spec = grid_call(ctx, int64_t(rows), cols, [&](int64_t row, int64_t c) {
        const auto& in0 = set.columns[k0 + size_t(c) % cols.size()].in0;
        return in0.empty() ? uint16_t(0) : in0[size_t(row) % in0.size()];
      });
      cases += uint64_t(spec.rows * spec.width);
      if (!run_valid(ctx, t, spec, "ties at " + set.node)) return;
    }
    ties_scope += "; at " + set.node + ": " + std::to_string(cases) + " cases (" + std::to_string(set.ties) +
                  " exact ties, " + std::to_string(set.near) + " one binary32 unit from one, the rest their "
                  "pattern neighbours)";
  }
  r.scope = std::to_string(s.size()) + " x " + std::to_string(s.size()) +
            " pairs of extreme patterns (NaN payloads, +-Inf, subnormals, +-0, max finite)" + ties_scope;
}

void check_property(const CheckContext& ctx, CheckResult& r) {
  const int64_t v = ctx.info.vector_elems();
  Tally t(ctx, r);
  std::mt19937_64 rng(class_seed(ctx, CheckClass::kProperty));
  const int64_t max_vecs = std::max<int64_t>(1, 4096 / v);
  const bool groups = ctx.model.op->has_groups();
  uint32_t by_mode[3] = {0, 0, 0};
  for (uint32_t i = 0; i < ctx.options.property_cases; ++i) {
    int64_t rows = 1 + int64_t(rng() % 4);
    const int64_t width = v * (1 + int64_t(rng() % uint64_t(max_vecs)));
    int64_t group_rows = 1;
    if (groups) {
      // Each case in turn: per element (group_rows 1), one row shared by all (group_rows = rows), and 2..4 groups of
      // 2..4 rows (where a kernel that reads the wrong group's row differs from one that reads the right one).
      const uint32_t mode = i % 3;
      if (mode == 1) group_rows = rows;
      if (mode == 2) {
        group_rows = 2 + int64_t(rng() % 3);
        rows = group_rows * (2 + int64_t(rng() % 3));
      }
      ++by_mode[mode];
    }
    CallSpec s = make_spec(ctx, rows, width, group_rows);
    fill_random(ctx, s, rng);
    if (!run_valid(ctx, t, s, "property case " + std::to_string(i))) break;
  }
  r.scope = std::to_string(ctx.options.property_cases) + " random shapes (rows 1..4, widths " + std::to_string(v) +
            ".." + std::to_string(max_vecs * v) + " in steps of " + std::to_string(v) +
            "), weighted random patterns in every input, std::mt19937_64 seeded from --seed " +
            std::to_string(ctx.options.seed);
  if (groups)
    r.scope += "; group_rows: " + std::to_string(by_mode[0]) + " cases 1 (per element), " + std::to_string(by_mode[1]) +
               " cases = rows (one group), " + std::to_string(by_mode[2]) +
               " cases of 2..4 groups of 2..4 rows (rows 4..16)";
}

namespace {
/// Whether a class's calls may be compared on the device (KernelRunner::large_call_compared, calls_compared): a
/// tabulated 2-input op judged by its own contract, on a CUDA plugin. The runner may still decline (no room).
bool device_table(const CheckContext& ctx) {
  return ctx.info.cuda() && ctx.model.inputs() == 2 && ctx.model.plan->tabulated() && !ctx.model.eager_plan;
}
/// The batched calls compared on the device (calls_compared) are asked for (--device-compare).
bool device_batches(const CheckContext& ctx) { return ctx.options.device_compare && device_table(ctx); }
/// The op's 2^32 expected outputs under the context's contract, dtype and math model, as the device comparison
/// keeps them (one table per key in a class's runner).
ExpectedTable op_table(const CheckContext& ctx) {
  return {ctx.model.digest_key + "." + ref::dtype_name(ctx.model.dtype) + ".math" + std::to_string(int(ctx.model.math)),
          [&ctx](uint16_t in1, uint16_t* out) { ctx.model.plan->row(in1, out); }, {}, {}};
}
/// acc |= seen, eight flags a step (the union of the expected outputs of the calls compared clean).
void merge_seen(std::vector<uint8_t>& acc, const std::vector<uint8_t>& seen) {
  for (size_t e = 0; e < acc.size(); e += 8) {
    uint64_t a, b;
    std::memcpy(&a, acc.data() + e, 8);
    std::memcpy(&b, seen.data() + e, 8);
    a |= b;
    std::memcpy(acc.data() + e, &a, 8);
  }
}
}  // namespace

void check_widths(const CheckContext& ctx, CheckResult& r) {
  const int64_t v = ctx.info.vector_elems();
  Tally t(ctx, r);
  const uint64_t seed = class_seed(ctx, CheckClass::kWidths);
  const bool groups = ctx.model.op->has_groups();
  // The calls are many and small (3 rows each): a batch of them gets its inputs and expected outputs on every core, a
  // call per worker at a time, while the subject is called on the previous batch, one call after another, in width
  // order. Each call's inputs come from the counter-based generator seeded by (seed, width index), so a batch is any
  // set of widths.
  constexpr int64_t kBatch = 64;
  const int64_t count = ctx.max_width / v;
  struct Batch {
    std::vector<CallSpec> specs;
    std::vector<Expected> expected;
  };
  const auto prepare = [&](int64_t k0) {
    const size_t kn = size_t(std::min(kBatch, count - k0));
    Batch b{std::vector<CallSpec>(kn), std::vector<Expected>(kn)};
    parallel_items(kn, [&](unsigned, size_t j) {
      const int64_t k = k0 + int64_t(j), w = (k + 1) * v;
      // Group-broadcast inputs: group_rows 1 and 3 (one row shared by the 3) by turns.
      b.specs[j] = make_spec(ctx, 3, w, groups && (w / v) % 2 == 0 ? 3 : 1);
      fill_counter_random(ctx, b.specs[j], counter_hash(seed, uint64_t(k)), 1);
      b.expected[j] = expected_values(ctx, b.specs[j], 1);
    });
    return b;
  };
  bool go = true;
  // A tabulated 2-input op on the CUDA runner: each batch of widths made back to back on the device, inputs generated
  // there, compared there with the reference's 2^32 expected outputs. A width whose call is not clean (a mismatch, a
  // rejection, a guard write, a changed input) is called again below on the host path, on the same inputs, which
  // records every element exactly.
  int64_t k_host = 0;  // the widths from here on go the host path
  std::vector<int64_t> again;  // widths (index k) the device found not clean, with their device mismatch counts
  std::vector<uint64_t> again_device;
  int64_t on_device = 0;
  if (device_batches(ctx)) {
    const ExpectedTable table = op_table(ctx);
    std::vector<uint8_t> seen(65536, 0);
    constexpr int64_t kDeviceBatch = 256;
    Sampling every;
    every.index_every = 1;  // as the host path's stride for calls of up to 2^22 elements
    for (int64_t k0 = 0; k0 < count && go; k0 += kDeviceBatch) {
      std::vector<LargeSpec> specs;
      for (int64_t k = k0; k < std::min(count, k0 + kDeviceBatch); ++k) {
        const int64_t w = (k + 1) * v;
        LargeSpec s{ctx.model.op, 3, w, ctx.abi_dtype, counter_hash(seed, uint64_t(k)),
                    groups && (w / v) % 2 == 0 ? 3 : 1};
        s.patterns = Patterns::kWeighted;
        specs.push_back(s);
      }
      std::vector<DeviceComparison> cmps;
      const std::optional<std::vector<LargeOutcome>> got =
          ctx.runner.calls_compared(specs, table, every, &cmps);
      if (!got) break;  // no room for the table: the host path from k0
      if (!(*got)[0].fault.empty()) {
        const LargeOutcome& f = (*got)[0];
        if (!f.subject_fault) throw std::runtime_error("audit: backend failure in the widths class: " + f.fault);
        t.fault("CUDA error in the widths calls " + std::to_string(specs.front().width) + ".." +
                std::to_string(specs.back().width) + " (made back to back, one synchronisation): " + f.fault);
        return;
      }
      for (size_t j = 0; j < specs.size(); ++j) {
        const LargeOutcome& o = (*got)[j];
        const DeviceComparison& c = cmps[j];
        const uint64_t elems = uint64_t(specs[j].rows) * uint64_t(specs[j].width);
        if (o.rc == 0 && !o.guard_writes && !o.inputs_changed && c.compared == elems && c.mismatches == 0) {
          t.equal(elems);
          merge_seen(seen, c.seen);
          ++on_device;
        } else {
          again.push_back(k0 + int64_t(j));
          again_device.push_back(c.mismatches);
        }
      }
      k_host = std::min(count, k0 + kDeviceBatch);
    }
    for (uint32_t e = 0; e < 65536; ++e)
      if (seen[e]) t.seen(uint16_t(e));
  }
  // The widths the device found not clean, called again on the host path, in width order.
  for (size_t i = 0; i < again.size() && go; ++i) {
    const int64_t k = again[i], w = (k + 1) * v;
    CallSpec s = make_spec(ctx, 3, w, groups && (w / v) % 2 == 0 ? 3 : 1);
    fill_counter_random(ctx, s, counter_hash(seed, uint64_t(k)));
    const uint64_t before = r.mismatches;
    go = run_valid(ctx, t, s, "width " + std::to_string(w));
    if (again_device[i] && r.fault.empty() && r.mismatches == before)
      t.failed_check("width " + std::to_string(w) + ": the device comparison counted " +
                     std::to_string(again_device[i]) + " mismatches, the same call again on the host path none (the "
                     "subject's outputs are not deterministic, or the device's inputs are not the host's)");
  }
  std::future<Batch> next;
  if (k_host < count && go) next = run_beside([&, k_host] { return prepare(k_host); });
  for (int64_t k0 = k_host; k0 < count && go; k0 += kBatch) {
    Batch b;
    {
      const PhaseClock wait("inputs and reference values (waited for; the next batch's overlap the calls)");
      b = next.get();
    }
    if (k0 + kBatch < count) next = run_beside([&prepare, k0] { return prepare(k0 + kBatch); });
    for (size_t j = 0; j < b.specs.size() && go; ++j)
      go = run_valid(ctx, t, b.specs[j], "width " + std::to_string(b.specs[j].width), std::nullopt, "", &b.expected[j]);
  }
  if (next.valid()) next.wait();  // a batch prepared after the class stopped is not called
  r.scope = "every valid width " + std::to_string(v) + ".." + std::to_string(ctx.max_width) + " (" +
            std::to_string(ctx.max_width / v) + " widths), 3 rows each, random patterns (SplitMix64 of --seed, the "
            "width and the element)";
  if (groups)
    r.scope += "; group_rows 1 (per element) at odd multiples of " + std::to_string(v) +
               ", 3 (one row shared by the 3 rows) at even ones";
  if (on_device)
    r.scope += "; " + std::to_string(on_device) + " widths made back to back on the device (inputs generated there, " +
               "256 calls a synchronisation) and compared there with the reference's 2^32 expected outputs " +
               "(OpPlan::row, copied up once); " + std::to_string(again.size()) +
               " called again on the host path and compared element by element";
}

void validate_shapes(const ref::OpSpec& op, const std::vector<Shape>& shapes, int64_t vector_elems) {
  for (const Shape& s : shapes) {
    const std::string name = std::to_string(s.rows) + "x" + std::to_string(s.width);
    if (s.width % vector_elems != 0)
      throw UsageError("audit: --shapes " + name + ": width must be a multiple of the kernel's " +
                       std::to_string(vector_elems) + "-element vector for " + op.name);
    // Every buffer's bytes must fit int64: rows * (elements per row) * 2.
    for (int k = 0; k < int(op.buffers().size()); ++k) {
      const int64_t per_row = op.buffer_row_elems(k, s.width);
      if (per_row > INT64_MAX / 2 / s.rows)
        throw UsageError("audit: --shapes " + name + ": " + op.buffers()[size_t(k)] + " of " + op.name +
                         " would hold more than 2^63 bytes");
    }
  }
}

void check_shapes(const CheckContext& ctx, CheckResult& r) {
  const ref::OpSpec& op = *ctx.model.op;
  const int64_t v = ctx.info.vector_elems();
  std::vector<Shape> shapes;
  if (ctx.options.default_shapes) {
    if (ctx.info.cuda()) {
      for (const ref::ShapeSpec& s : op.envelope) shapes.push_back({s.rows, s.width, s.why});
    } else {
      shapes.push_back({65537, 8 * v, "rows above 65,535"});
      shapes.push_back({100003, v, "rows above 65,535 at the narrowest width"});
      if (op.has_groups()) shapes.push_back({65538, 8 * v, "rows above 65,535 in 2 groups"});
    }
  }
  shapes.insert(shapes.end(), ctx.options.extra_shapes.begin(), ctx.options.extra_shapes.end());
  Tally t(ctx, r);
  std::vector<std::string> ran, not_ran;
  uint64_t biggest = 0;
  // The device comparison (CudaRunner::large_call_compared): a tabulated 2-input op judged by its own contract.
  const bool on_the_device = device_table(ctx);
  const ExpectedTable table = op_table(ctx);
  bool tables_kept = false;
  size_t on_device = 0;
  for (size_t k = 0; k < shapes.size() && !t.stop() && r.fault.empty(); ++k) {
    const Shape& sh = shapes[k];
    const std::string name = std::to_string(sh.rows) + "x" + std::to_string(sh.width);
    if (sh.width % v != 0) {  // only the defaults can get here: --shapes entries were refused up front
      not_ran.push_back(name + " (width not a multiple of " + std::to_string(v) + ")");
      continue;
    }
    const uint64_t elems = uint64_t(sh.rows) * uint64_t(sh.width);
    const uint64_t need = elems * uint64_t(op.bytes_per_element()) + elems * 2 + (uint64_t(64) << 20);
    if (const std::string short_of = memory_shortfall(name, sh.why, need, ctx.runner.memory_available());
        !short_of.empty()) {
      not_ran.push_back(short_of);
      continue;
    }
    // Group-broadcast inputs as a DiT holds them: group_rows = the tokens of one batch element, a batch of 2 at
    // every other shape whose rows are even, else a batch of 1 (one row shared by all).
    const int64_t group_rows = !op.has_groups() ? 1 : sh.rows % 2 == 0 && k % 2 == 0 ? sh.rows / 2 : sh.rows;
    LargeSpec spec{&op, sh.rows, sh.width, ctx.abi_dtype, class_seed(ctx, CheckClass::kShapes) + k, group_rows};
    std::vector<uint16_t> expected, eager;
    const std::string head = head_of(ctx, sh.rows, sh.width);
    const std::string groups = op.has_groups() ? "group_rows=" + std::to_string(group_rows) + "," : "";
    // Expected rows computed in parallel where the output arrives; compared in order.
    const ChunkCheck check = [&](int64_t row0, int64_t nrows, const uint16_t* out) {
      std::optional<PhaseClock> reference(std::in_place, "reference values");
      const size_t n = size_t(nrows) * size_t(sh.width);
      expected.resize(n);
      const bool vs_eager = ctx.model.eager_plan != nullptr;
      eager.resize(vs_eager ? n : 0);
      const int ni = ctx.model.inputs();
      parallel_for(n, [&](unsigned, size_t lo, size_t hi) {
        // Run by run within a row: each input's run regenerated at once (LargeSpec::input_run), then evaluated.
        constexpr int64_t kRun = 4096;
        std::vector<uint16_t> runs(size_t(ni) * size_t(kRun));
        const uint16_t* ptr[ref::kMaxOpInputs] = {};
        for (int k = 0; k < ni; ++k) ptr[k] = runs.data() + size_t(k) * size_t(kRun);
        for (size_t i = lo; i < hi;) {
          const int64_t row = row0 + int64_t(i / size_t(sh.width)), col = int64_t(i % size_t(sh.width));
          const int64_t len = std::min<int64_t>({kRun, sh.width - col, int64_t(hi - i)});
          for (int k = 0; k < ni; ++k) spec.input_run(k, row, col, len, runs.data() + size_t(k) * size_t(kRun));
          ctx.model.plan->eval_run(ptr, size_t(len), expected.data() + i);
          if (vs_eager) ctx.model.eager_plan->eval_run(ptr, size_t(len), eager.data() + i);
          i += size_t(len);
        }
      }, kParallelGrain);
      if (vs_eager) t.versus_eager(expected, eager);
      reference.reset();
      const PhaseClock comparison("comparison");
      for (size_t i = 0; i < n; i += 61) t.seen(expected[i]);
      if (std::memcmp(expected.data(), out, n * 2) == 0) {
        t.equal(n);
        return true;
      }
      for (size_t i = 0; i < n; ++i) {
        const int64_t row = row0 + int64_t(i / size_t(sh.width)), col = int64_t(i % size_t(sh.width));
        uint16_t in[ref::kMaxOpInputs];
        spec.inputs(row, col, in);
        if (!t.element([&] { return groups + "r=" + std::to_string(row) + ",c=" + std::to_string(col); }, in, out[i],
                       expected[i]))
          return false;
      }
      return true;
    };
    watch_label("shapes " + name + " (" + sh.why + ")");
    // A 2-input op's output is compared where it lives, against the 2^32 expected outputs of the reference (the
    // table costs one domain sweep, once per class). Anything but a clean call (a mismatch, a rejection, a guard
    // write, a changed input) calls again on the host path below, which reports every element exactly.
    LargeOutcome o;
    bool compared_there = false;
    uint64_t device_mismatches = 0;  // what the device comparison counted, when the host path calls again
    if (on_the_device && (tables_kept || need + (uint64_t(8) << 30) <= ctx.runner.memory_available())) {
      DeviceComparison cmp;
      const std::optional<LargeOutcome> d = ctx.runner.large_call_compared(spec, table.key, table.row, &cmp);
      if (d && d->fault.empty()) tables_kept = true;
      if (d && (!d->fault.empty() || (d->rc == 0 && !d->guard_writes && !d->inputs_changed && cmp.compared == elems &&
                                       cmp.mismatches == 0))) {
        o = *d;
        compared_there = true;
        if (o.fault.empty()) {
          t.equal(elems);
          for (uint32_t e = 0; e < 65536; ++e)
            if (cmp.seen[e]) t.seen(uint16_t(e));
          ++on_device;
        }
      } else if (d) {
        device_mismatches = cmp.mismatches;
      }
    }
    const uint64_t mismatches_before = r.mismatches;
    if (!compared_there) o = ctx.runner.large_call(spec, check);
    if (device_mismatches && o.fault.empty() && r.mismatches == mismatches_before)
      t.failed_check(head + " the device comparison counted " + std::to_string(device_mismatches) +
                     " mismatches, the same call again none (the subject's outputs are not deterministic)");
    if (!o.fault.empty()) {
      if (!o.subject_fault) throw std::runtime_error("audit: backend failure in shapes " + name + ": " + o.fault);
      t.fault("CUDA error in call shapes " + name + " [" + head + "]: " + o.fault);
      break;
    }
    if (o.rc != 0) t.failure(head + " valid call rejected: " + o.message, elems);
    if (o.guard_writes) t.failure(head + " wrote " + std::to_string(o.guard_writes) + " guard bytes outside out", o.guard_writes);
    if (o.inputs_changed) t.failure(head + " modified " + std::to_string(o.inputs_changed) + " elements of its inputs");
    ran.push_back(name + (op.has_groups() ? ", group_rows " + std::to_string(group_rows) + " (batch " +
                                                std::to_string(sh.rows / group_rows) + ")"
                                          : std::string()) +
                  " (" + sh.why + ")");
    biggest = std::max(biggest, elems);
  }
  std::string scope = std::to_string(ran.size()) + " shape(s) at full size (the op's output [rows, width])";
  for (const auto& s : ran) scope += "; " + s;
  scope += "; largest call " + std::to_string(biggest) + " elements" + (biggest > (uint64_t(1) << 31) ? " (above 2^31)" : "");
  scope += "; inputs from the counter generator";
  if (on_device)
    scope += "; " + std::to_string(on_device) + " of " + std::to_string(ran.size()) +
             " compared on the device with the reference's 2^32 expected outputs (OpPlan::row, copied up once)";
  if (on_device < ran.size()) scope += "; output streamed back and compared chunk by chunk";
  r.scope = scope;
  r.note_not_run(not_ran);
}

namespace {

/// One block of the domain class: the second inputs `cols` (b0 .. b0 + n - 1, padded to the vector with repeats that
/// are not compared) across, all 65,536 first inputs down the rows, the call `spec` reused from the previous block
/// when its width is the same (new columns only), and the subject called on it. nullopt when the class must stop:
/// a CUDA fault (`*fault` set) or a call that failed outright, both recorded in the tally.
std::optional<CallOutcome> call_domain_block(const CheckContext& ctx, Tally& t, CallSpec& spec,
                                             std::vector<uint16_t> cols, size_t b0, bool* fault) {
  const size_t n = cols.size();
  while (int64_t(cols.size()) % ctx.info.vector_elems()) cols.push_back(cols[cols.size() % n]);
  const std::string label = "domain block of second inputs " + std::to_string(b0) + ".." + std::to_string(b0 + n - 1);
  std::optional<PhaseClock> inputs(std::in_place, "inputs");
  const auto row_index = [](int64_t row, int64_t) { return uint16_t(row); };
  if (spec.width == int64_t(cols.size())) fill_grid(spec, cols, row_index, true);
  else spec = grid_call(ctx, 65536, cols, row_index);
  watch_label(label);
  inputs.reset();
  std::optional<PhaseClock> calling(std::in_place, "subject calls");
  CallOutcome got = ctx.runner.call(spec);
  calling.reset();
  if (!got.fault.empty()) {
    if (!got.subject_fault) throw std::runtime_error("audit: backend failure in the domain class: " + got.fault);
    t.fault("CUDA error in " + label + " [rows=65536,width=" + std::to_string(cols.size()) + "]: " + got.fault);
    *fault = true;
    return std::nullopt;
  }
  if (!outcome_ok(ctx, t, spec, got)) return std::nullopt;
  return got;
}

/// The digest pass over the whole domain: the subject's 256 blocks of 256 second inputs, each output row (one second
/// input, every first input, canonical order) hashed as in common/tree_digest.h, and the tree of the 65,536 row
/// digests. No reference value is computed and no element compared.
struct DomainDigestPass {
  std::string tree;           ///< the subject's tree digest (hex), when the pass went through
  std::string ended;          ///< why it stopped early (a fault or a failing call, recorded in the tally)
  std::vector<uint8_t> seen;  ///< outputs seen (every 7th of each row): the expected ones when the trees are equal
};

/// The subject's block reordered to canonical rows on every core: canon[c * 65536 + x] = out[x * stride + c] for the
/// first n columns. 32 columns (a cache line) a worker, 64 first inputs at a time, so that their cache lines stay in
/// L1 while each column's 128 bytes are written (a plain gather writes 32 streams 128 KB apart, which alias).
void reorder_block(const uint16_t* out, size_t stride, size_t n, uint16_t* canon) {
  constexpr size_t kTile = 32;
  parallel_items((n + kTile - 1) / kTile, [&](unsigned, size_t tile) {
    const size_t c0 = tile * kTile, c1 = std::min(n, c0 + kTile);
    for (uint32_t x0 = 0; x0 < 65536; x0 += 64)
      for (size_t c = c0; c < c1; ++c) {
        const uint16_t* src = out + size_t(x0) * stride + c;
        uint16_t* dst = canon + c * 65536 + x0;
        for (uint32_t x = 0; x < 64; ++x) dst[x] = src[size_t(x) * stride];
      }
  });
}

DomainDigestPass domain_digest_pass(const CheckContext& ctx, Tally& t) {
  constexpr size_t kBlock = 256;  // second inputs a call
  DomainDigestPass p;
  p.seen.assign(65536, 0);
  DomainDigests digests(false, true);
  std::vector<uint16_t> canon(kBlock * 65536);
  const unsigned workers = worker_count();
  std::vector<std::vector<uint8_t>> seen(workers, std::vector<uint8_t>(65536, 0));
  CallSpec spec;
  for (size_t b0 = 0; b0 < 65536; b0 += kBlock) {
    std::vector<uint16_t> cols(kBlock);
    for (size_t c = 0; c < kBlock; ++c) cols[c] = uint16_t(b0 + c);
    bool fault = false;
    const std::optional<CallOutcome> called = call_domain_block(ctx, t, spec, cols, b0, &fault);
    if (!called) {
      p.ended = std::string(fault ? "stopped by a CUDA error" : "stopped: a call failed") + " in the domain block of " +
                "second inputs " + std::to_string(b0) + ".." + std::to_string(b0 + kBlock - 1);
      return p;
    }
    const PhaseClock digesting("reordering and row digests (every core)");
    reorder_block(called->out.data(), size_t(spec.width), kBlock, canon.data());
    digests.update(canon.data(), uint32_t(kBlock));
    parallel_items(kBlock, [&](unsigned w, size_t c) {
      for (uint32_t x = 0; x < 65536; x += 7) seen[w][canon[c * 65536 + x]] = 1;
    }, workers);
  }
  p.tree = digests.tree_hex();
  for (const auto& s : seen)
    for (size_t e = 0; e < 65536; ++e) p.seen[e] |= s[e];
  return p;
}

/// The device pass over the whole domain (CUDA, a tabulated op): 256 calls of 65,536 rows (every first input) by 256
/// columns (second inputs b0 .. b0 + 255), their inputs written on the device as the grid and checked there, 16 calls
/// a synchronisation, each output compared there with the reference's 2^32 expected outputs.
struct DomainDevicePass {
  bool ran = false;           ///< the runner compared on the device (false: no room for the table)
  bool clean = false;         ///< every call accepted, nothing written outside out, inputs intact, no mismatch
  std::string fault;          ///< a CUDA error of the subject's (recorded in the tally)
  std::string first_unclean;  ///< the first block that was not clean, in words
  std::vector<uint8_t> seen;  ///< expected outputs seen (every 7th first input), when clean
};

DomainDevicePass domain_device_pass(const CheckContext& ctx, Tally& t) {
  constexpr uint32_t kBlock = 256, kCallsPerSync = 16;
  DomainDevicePass p;
  p.seen.assign(65536, 0);
  const ExpectedTable table = op_table(ctx);
  Sampling sevenths;
  sevenths.row_every = 7;  // the digest pass's rule: every 7th first input of each second input
  sevenths.index_every = 1;
  for (uint32_t b0 = 0; b0 < 65536; b0 += kBlock * kCallsPerSync) {
    std::vector<LargeSpec> specs;
    for (uint32_t j = 0; j < kCallsPerSync && b0 + j * kBlock < 65536; ++j) {
      LargeSpec s{ctx.model.op, 65536, kBlock, ctx.abi_dtype, class_seed(ctx, CheckClass::kDomain) + b0 + j, 1};
      s.patterns = Patterns::kGrid;
      s.grid_col0 = b0 + j * kBlock;
      specs.push_back(s);
    }
    watch_label("domain blocks of second inputs " + std::to_string(b0) + ".." +
                std::to_string(specs.back().grid_col0 + kBlock - 1) + " on the device");
    std::vector<DeviceComparison> cmps;
    const std::optional<std::vector<LargeOutcome>> got =
        ctx.runner.calls_compared(specs, table, sevenths, &cmps);
    if (!got) return p;
    p.ran = true;
    if (!(*got)[0].fault.empty()) {
      const LargeOutcome& f = (*got)[0];
      if (!f.subject_fault) throw std::runtime_error("audit: backend failure in the domain class: " + f.fault);
      p.fault = "CUDA error in the domain blocks of second inputs " + std::to_string(b0) + ".." +
                std::to_string(specs.back().grid_col0 + kBlock - 1) + " (made back to back, one synchronisation): " +
                f.fault;
      t.fault(p.fault);
      return p;
    }
    for (size_t j = 0; j < specs.size(); ++j) {
      const LargeOutcome& o = (*got)[j];
      const DeviceComparison& c = cmps[j];
      if (o.rc != 0 || o.guard_writes || o.inputs_changed || c.compared != uint64_t(65536) * kBlock || c.mismatches) {
        char b[240];
        std::snprintf(b, sizeof b,
                      "the device pass found the block of second inputs %u..%u not clean (rc %d, %llu guard bytes "
                      "written, %llu input elements changed, %llu mismatches)",
                      specs[j].grid_col0, specs[j].grid_col0 + kBlock - 1, o.rc, (unsigned long long)o.guard_writes,
                      (unsigned long long)o.inputs_changed, (unsigned long long)c.mismatches);
        p.first_unclean = b;
        return p;
      }
      merge_seen(p.seen, c.seen);
    }
  }
  p.clean = true;
  return p;
}

}  // namespace

void check_domain(const CheckContext& ctx, CheckResult& r) {
  if (ctx.model.inputs() != 2) {
    r.status = CheckStatus::kSkipped;
    r.note = "2^48 triples cannot be enumerated; the stages class enumerates each rounding boundary";
    return;
  }
  const ref::Dtype d = ctx.model.dtype;
  const ref::OpSpec& op = *ctx.model.op;
  const bool full = ctx.domain_biases >= 65536;
  std::vector<uint16_t> seconds;
  if (full) {
    seconds.resize(65536);
    for (uint32_t i = 0; i < 65536; ++i) seconds[i] = uint16_t(i);
  } else {
    seconds = domain_subset_biases(d, ctx.domain_biases, class_seed(ctx, CheckClass::kDomain));
  }
  Tally t(ctx, r);
  const std::string names = op.inputs[0].name + ", " + op.inputs[1].name;
  const std::string whole = "the whole 2^32 (" + names + ") domain, canonical order (" + op.inputs[1].name +
                            " outer, " + op.inputs[0].name + " inner)";
  // Digest first (docs/AUDIT.md, The domain class): where golden holds this contract's tree digest over the whole
  // domain, the subject's rows are only hashed; the element-wise pass against the reference runs when the trees
  // differ, and gives the exact counts then.
  std::string digest_pass_tree;  // the digest pass's tree, when it ran and differed from golden
  std::string device_note;       // the device pass's finding, when it found a block that was not clean
  if (full && device_batches(ctx)) {
    const DomainDevicePass p = domain_device_pass(ctx, t);
    if (!p.fault.empty()) {
      r.scope = whole + ", compared on the device";
      r.note = "stopped by a CUDA error";
      return;
    }
    if (p.clean) {
      t.equal(kDomainSize);
      for (uint32_t e = 0; e < 65536; ++e)
        if (p.seen[e]) t.seen(uint16_t(e));
      r.scope = whole + ", compared on the device: 256 calls of 65,536 first inputs by 256 second inputs, their " +
                "inputs written there as the grid and checked before the call, each output compared there with the " +
                "reference's 2^32 expected outputs (OpPlan::row, copied up once), 16 calls a synchronisation";
      r.note = "no element of the subject's 2^32 outputs differs from the reference's, so the distance from the "
               "correctly rounded value (MPFR) is the contract's";
      return;
    }
    if (p.ran) device_note = p.first_unclean + "; every block was then called again on the host path and compared "
                                               "element by element";
  }
  if (device_note.empty() && full && ctx.model.digest_applies() && ctx.model.golden_tree && !ctx.model.eager_plan) {
    const DomainDigestPass p = domain_digest_pass(ctx, t);
    if (!p.ended.empty()) {
      r.scope = whole + ", digest pass";
      r.note = p.ended;
      return;
    }
    if (p.tree == *ctx.model.golden_tree) {
      t.equal(kDomainSize);
      for (uint32_t e = 0; e < 65536; ++e)
        if (p.seen[e]) t.seen(uint16_t(e));
      r.scope = whole + ", compared by digest";
      r.note = "tree digest of the subject's 2^32 outputs " + p.tree + " equals " + ctx.model.golden_label + " " +
               ctx.model.digest_key + "_tree." + ref::dtype_name(d) +
               " (the reference's, proved by the reference self-audit); no element differs, so the distance from "
               "the correctly rounded value (MPFR) is the contract's";
      return;
    }
    digest_pass_tree = p.tree;
  }
  const CorrectRounding cr(op, d);
  const unsigned threads = worker_count();
  // The correctly rounded values cost more than the rest of the class together (binary64 with bounds per pair), and
  // a subject that equals the contract everywhere is exactly as far from them as the contract. So they are computed
  // from the first block with a mismatch on, and then, once, for the blocks before it (the subject equals the
  // contract there, so both histograms take the contract's distance).
  bool with_cr = false;
  std::vector<size_t> clean_blocks;  // first index into `seconds` of each block compared before with_cr
  const auto add_cr = [&](const uint16_t* cols, size_t n, const uint16_t* subject, const uint16_t* contract) {
    std::vector<UlpHistogram> vs_cr(threads), eager_cr(threads);
    run_workers(threads, [&](unsigned k) {
      for (size_t c = k; c < n; c += threads)
        for (uint32_t x = 0; x < 65536; ++x) {
          const uint16_t cv = cr.value(uint16_t(x), cols[c]);
          vs_cr[k].add(d, subject[c * 65536 + x], cv);
          eager_cr[k].add(d, contract[c * 65536 + x], cv);
        }
      CorrectRounding::release_thread_caches();
    });
    for (unsigned k = 0; k < threads; ++k) {
      r.vs_correct.merge(vs_cr[k]);
      r.contract_vs_correct.merge(eager_cr[k]);
    }
  };
  const size_t block = full ? 256 : 128;
  // The flat stream (one thread's SHA-256 over 8 GiB) only where golden has no tree digest to compare.
  const bool want_flat = full && !(ctx.model.digest_applies() && ctx.model.golden_tree);
  DomainDigests digests(want_flat, full);
  bool stopped = false;            // ended by a fault or --stop-after: no digest
  std::atomic<bool> end{false};    // no more blocks (stopped, or a call whose outcome fails)
  std::vector<uint16_t> canon, eager;
  CallSpec spec;  // the grid of the previous block
  // The one domain driver computes the reference rows of the next blocks on its workers (row i is the second input
  // seconds[i]) while this thread calls the subject on a block, reorders, hashes and compares it, in canonical order.
  SweepOptions so;
  so.biases_per_block = uint32_t(block);
  so.bias_count = uint32_t(seconds.size());
  so.stop = &end;
  const RowFn expected_row = [&](uint16_t i, uint16_t* out) { ctx.model.plan->row(seconds[i], out); };
  const SweepConsumer consume = [&](uint32_t first, uint32_t count, const uint16_t* expected) {
    const size_t b0 = first, n = count;
    const std::vector<uint16_t> cols(seconds.begin() + long(b0), seconds.begin() + long(b0 + n));
    bool fault = false;
    const std::optional<CallOutcome> called = call_domain_block(ctx, t, spec, cols, b0, &fault);
    if (!called) {
      stopped = fault;
      end = true;
      return;
    }
    const CallOutcome& got = *called;
    const size_t stride = size_t(spec.width);
    // The subject's columns reordered to canonical rows: out[r, c] is element r of row c.
    std::optional<PhaseClock> reference(std::in_place, "reference values and reordering");
    canon.resize(n * 65536);
    // A contract other than eager: eager's rows too, for the contract's own distance from eager.
    eager.resize(ctx.model.eager_plan ? n * 65536 : 0);
    reorder_block(got.out.data(), stride, n, canon.data());
    if (!eager.empty()) {
      parallel_items(n, [&](unsigned, size_t c) { ctx.model.eager_plan->row(cols[c], eager.data() + c * 65536); });
      t.versus_eager(expected, eager.data(), n * 65536);
    }
    reference.reset();
    if (full) {
      const PhaseClock digesting("SHA-256 digests");
      digests.update(canon.data(), uint32_t(n));
    }
    const uint64_t mismatches_before = r.mismatches;
    std::optional<PhaseClock> comparison(std::in_place, "comparison");
    for (size_t c = 0; c < n && !stopped; ++c) {
      const uint16_t* e = expected + c * 65536;
      const uint16_t* g = canon.data() + c * 65536;
      if (std::memcmp(e, g, 65536 * 2) == 0) {
        t.equal(65536);
        if (r.distinct_expected < 65536)
          for (uint32_t x = 0; x < 65536; x += 7) t.seen(e[x]);
        continue;
      }
      for (uint32_t x = 0; x < 65536; ++x) {
        const uint16_t in[2] = {uint16_t(x), cols[c]};
        if (!t.element([&] { return "c=" + std::to_string(b0 + c); }, in, g[x], e[x])) {
          stopped = true;
          end = true;
          break;
        }
      }
    }
    comparison.reset();
    const PhaseClock correct("correctly rounded values (MPFR)");
    if (!with_cr && r.mismatches > mismatches_before) {
      with_cr = true;
      std::vector<uint16_t> clean(block * 65536);
      for (size_t c0 : clean_blocks) {
        const size_t m = std::min(block, seconds.size() - c0);
        for (size_t c = 0; c < m; ++c) ctx.model.plan->row(seconds[c0 + c], clean.data() + c * 65536);
        add_cr(seconds.data() + c0, m, clean.data(), clean.data());
      }
    }
    if (with_cr)
      add_cr(cols.data(), n, canon.data(), expected);
    else
      clean_blocks.push_back(b0);
  };
  sweep_domain(expected_row, consume, so);
  if (full) {
    const std::string key = ctx.model.digest_key + "." + ref::dtype_name(d);
    if (!digest_pass_tree.empty())
      r.note = "digest pass: tree digest " + digest_pass_tree + " DIFFERS from " + ctx.model.golden_label + " " +
               ctx.model.digest_key + "_tree." + ref::dtype_name(d) + ", so every block was called again and " +
               "compared element by element";
    if (!device_note.empty()) r.note = device_note;
    const auto add = [&](const std::string& line) { r.note += (r.note.empty() ? "" : "; ") + line; };
    if (stopped) {
      add("digests not computed (stopped early)");
    } else if (ctx.model.digest_applies()) {
      const std::string ht = digests.tree_hex();
      if (want_flat) {
        const std::string hf = digests.flat_hex();
        add("SHA-256 of all 2^32 outputs " + hf);
        if (ctx.model.golden_flat) {
          const bool ok = hf == *ctx.model.golden_flat;
          r.note += (ok ? " equals " : " DIFFERS from ") + ctx.model.golden_label + "/digests.json " + key;
          if (!ok) t.failed_check(op.name + " " + ref::dtype_name(d) + " 2^32-domain digest " + hf + " expected " + *ctx.model.golden_flat);
        }
      }
      add("tree digest " + ht);
      if (ctx.model.golden_tree) {
        const bool ok = ht == *ctx.model.golden_tree;
        r.note += (ok ? " equals " : " DIFFERS from ") + ctx.model.golden_label + " " + ctx.model.digest_key + "_tree." + ref::dtype_name(d);
        if (!ok) t.failed_check(op.name + " " + ref::dtype_name(d) + " 2^32-domain tree digest " + ht + " expected " + *ctx.model.golden_tree);
        // Equal now, different in the digest pass: the same calls gave other outputs the first time.
        if (ok && !digest_pass_tree.empty())
          t.failed_check(op.name + " " + ref::dtype_name(d) + " 2^32-domain: the digest pass's tree digest " +
                         digest_pass_tree + " differs from the element-wise pass's " + ht +
                         " for the same calls (the subject's outputs are not deterministic)");
      }
    } else {
      add("SHA-256 of all 2^32 outputs " + digests.flat_hex() + " (the golden digests are of the cuda math model; not compared)");
    }
    r.scope = whole + (digest_pass_tree.empty() ? "" : ", compared element by element after the digest pass");
  } else {
    r.scope = "stratified subset: all 65536 " + op.inputs[0].name + " for " + std::to_string(seconds.size()) + " " +
              op.inputs[1].name + " (every extreme pattern, one per binade and sign, the rest uniform random) = " +
              std::to_string(uint64_t(seconds.size()) * 65536) + " of 2^32 pairs";
  }
  r.has_correct = with_cr;
  r.note += (r.note.empty() ? "" : "; ") + std::string("distance from the correctly rounded value (MPFR, ");
  if (with_cr)
    r.note += std::to_string(cr.mpfr_fallbacks()) + " values decided by MPFR itself): subject " + r.vs_correct.line() +
              "; contract " + r.contract_vs_correct.line();
  else
    r.note += "not computed): no mismatch, so the subject's is the contract's";
}

void check_pdl(const CheckContext& ctx, CheckResult& r) {
  if (!ctx.info.cuda()) {
    r.status = CheckStatus::kSkipped;
    r.note = "host-memory subject: no stream ordering to check";
    return;
  }
  const int64_t v = ctx.info.vector_elems();
  Tally t(ctx, r);
  std::mt19937_64 rng(class_seed(ctx, CheckClass::kPdl));
  const int64_t rows = 256, width = std::max<int64_t>(v, 2048 / v * v);
  for (int trial = 0; trial < 3; ++trial) {
    CallSpec s = make_spec(ctx, rows, width, ctx.model.op->has_groups() ? rows / 2 : 1);  // 2 groups
    fill_random(ctx, s, rng);
    // Stale inputs differ from the real ones in every element (bit 0 of the mantissa, or more).
    CallSpec stale = s;
    for (size_t k = 0; k < stale.buffers.size(); ++k)
      for (auto& e : stale.buffers[k]) e = uint16_t(e ^ (k == 0 ? 0x0A5A : 0x05A5));
    watch_label("pdl trial " + std::to_string(trial));
    auto o = ctx.runner.call_after_producer(s, stale, int(ctx.options.pdl_delay_ms));
    if (!o) {
      r.status = CheckStatus::kSkipped;
      r.note = "this runner has no stream to order a producer on";
      return;
    }
    if (!run_valid(ctx, t, s, "pdl trial " + std::to_string(trial), std::move(o))) break;
  }
  r.scope = "3 launches of " + std::to_string(rows) + " x " + std::to_string(width) +
            " after a producer kernel on the same stream that releases dependents at once "
            "(griddepcontrol.launch_dependents) and writes every input " +
            std::to_string(ctx.options.pdl_delay_ms) + " ms later" +
            (ctx.model.op->has_groups() ? "; group_rows " + std::to_string(rows / 2) + " (2 groups)" : "");
}

void run_check_class(CheckClass c, const CheckContext& ctx, CheckResult& r) {
  switch (c) {
    case CheckClass::kRejection: return check_rejection(ctx, r);
    case CheckClass::kExtreme: return check_extreme(ctx, r);
    case CheckClass::kProperty: return check_property(ctx, r);
    case CheckClass::kWidths: return check_widths(ctx, r);
    case CheckClass::kShapes: return check_shapes(ctx, r);
    case CheckClass::kDomain: return check_domain(ctx, r);
    case CheckClass::kStages: return check_stages(ctx, r);
    case CheckClass::kPdl: return check_pdl(ctx, r);
    case CheckClass::kBatch: return check_batch(ctx, r);
    case CheckClass::kRepeat: return check_repeat(ctx, r);
    case CheckClass::kHistory: return check_history(ctx, r);
    case CheckClass::kStreams: return check_streams(ctx, r);
    case CheckClass::kGraph: return check_graph(ctx, r);
    case CheckClass::kBlocks:
    case CheckClass::kLayout:
      // The engine's skip reason refuses these for an elementwise op before a child is made; reaching here is a bug
      // of the suite, reported as a failed check rather than a class that ran nothing.
      r.failed_checks++;
      r.status = CheckStatus::kFail;
      r.note = "the quantization classes (blocks, layout) do not apply to an elementwise op";
      return;
  }
}

}  // namespace fuseproof::audit
