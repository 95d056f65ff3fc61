// check_support.h: what the check classes share (audit/check_classes.cpp, audit/check_integration.cpp): the tally of
// one class, a valid call run and compared element by element, the seeded inputs. Internal to the audit library.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "audit/audit_inputs.h"
#include "audit/call_watch.h"
#include "audit/check_classes.h"
#include "common/parallel_for.h"
#include "common/phase_clock.h"
#include "common/testfloat_record.h"

namespace fuseproof::audit::detail {


/// Per-check comparison state: counts, the first records, the distinct-expected guard, the early stop, the
/// histogram of distances from the contract.
class Tally {
 public:
  Tally(const CheckContext& ctx, CheckResult& r) : ctx_(ctx), r_(r), seen_(65536, false) {
    for (const auto& in : ctx.model.op->inputs) names_.push_back(in.name);
  }

  /// Compares one element; false once the check should stop. `where` is called only for a record.
  template <class Where>
  bool element(const Where& where, const uint16_t* in, uint16_t got, uint16_t expected) {
    ++r_.cases;
    seen(expected);
    if (got == expected) {
      r_.vs_contract.add_exact(1);
      return true;
    }
    r_.vs_contract.add(ctx_.model.dtype, got, expected);
    ++r_.mismatches;
    if (r_.records.size() < ctx_.options.records)
      r_.records.push_back(
          testfloat_record_inputs(ctx_.model.op->name, ctx_.model.dtype, where(), names_, in, got, expected));
    return !stop();
  }
  /// A contract other than eager: the contract's outputs `want` against eager's `eager` for the same inputs.
  void versus_eager(const std::vector<uint16_t>& want, const std::vector<uint16_t>& eager) {
    versus_eager(want.data(), eager.data(), want.size());
  }
  void versus_eager(const uint16_t* want, const uint16_t* eager, size_t n) {
    r_.has_contract_vs_eager = true;
    for (size_t i = 0; i < n; ++i)
      if (want[i] == eager[i]) r_.contract_vs_eager.add_exact(1);
      else r_.contract_vs_eager.add(ctx_.model.dtype, want[i], eager[i]);
  }
  /// Counts `n` elements compared equal in bulk.
  void equal(uint64_t n) {
    r_.cases += n;
    r_.vs_contract.add_exact(n);
  }
  /// The subject faulted (a CUDA error after its call): the class stops here.
  void fault(const std::string& line) { r_.fault = line; }
  /// Counts an expected output towards the distinct-output guard without a comparison record.
  void seen(uint16_t expected) {
    if (!seen_[expected]) seen_[expected] = true, ++r_.distinct_expected;
  }
  /// A failure that is not an element comparison (a refused valid call, a guard write, a probe accepted).
  void failure(const std::string& line, uint64_t count = 1) {
    r_.mismatches += count;
    if (r_.records.size() < ctx_.options.records) r_.records.push_back(line);
  }
  /// A failure that is no count of cases (a 2^32-domain digest differs from the golden one): the class FAILs, and
  /// the mismatch count stays the number of mismatching cases (the histogram's).
  void failed_check(const std::string& line) {
    ++r_.failed_checks;
    if (r_.records.size() < ctx_.options.records) r_.records.push_back(line);
  }
  bool stop() {
    if (ctx_.options.stop_after && r_.mismatches >= ctx_.options.stop_after) r_.stopped_early = true;
    return r_.stopped_early;
  }

 private:
  const CheckContext& ctx_;
  CheckResult& r_;
  std::vector<bool> seen_;
  std::vector<std::string> names_;
};

inline std::string shape(int64_t rows, int64_t width) {
  return "rows=" + std::to_string(rows) + ",width=" + std::to_string(width);
}

inline std::string head_of(const CheckContext& ctx, int64_t rows, int64_t width) {
  return ctx.model.op->name + " " + ref::dtype_name(ctx.model.dtype) + " [" + shape(rows, width) + "]";
}

/// The op's declared inputs at (r, c) of a call, in order (in[0 .. inputs-1]).
inline void inputs_at(const CallSpec& s, int64_t r, int64_t c, uint16_t* in) {
  for (int i = 0; i < int(s.inputs.size()); ++i) in[i] = s.at(i, r, c);
}

/// "group_rows=64," for an op with group-broadcast inputs (a record's position names its call's groups), else "".
inline std::string groups_of(const CallSpec& s) {
  return s.op && s.op->has_groups() ? "group_rows=" + std::to_string(s.group_rows) + "," : "";
}

/// Checks what a valid call's outcome says besides its elements: a refusal, guard writes, changed inputs.
/// False when the elements cannot be compared (the call was refused).
inline bool outcome_ok(const CheckContext& ctx, Tally& t, const CallSpec& spec, const CallOutcome& o) {
  const std::string head = head_of(ctx, spec.rows, spec.width);
  if (o.rc != 0) {
    t.failure(head + " valid call rejected: " + o.message, uint64_t(spec.rows * spec.width));
    return false;
  }
  if (o.guard_writes) t.failure(head + " wrote " + std::to_string(o.guard_writes) + " guard bytes outside out", o.guard_writes);
  if (!o.inputs_intact) t.failure(head + " modified its input " + o.modified + " (or its guards)");
  return true;
}

/// Elements of reference values (or inputs) below which a loop stays on one thread: 16,384 values cost 0.1-1 ms, a
/// thread's start about 20 us.
inline constexpr size_t kParallelGrain = size_t(1) << 14;

/// A valid call's expected outputs: the contract's, and eager's for a contract other than eager (else empty).
struct Expected {
  std::vector<uint16_t> want, eager;
};

/// The expected outputs of every element of `spec`, on `workers` threads (0: worker_count()) above kParallelGrain.
inline Expected expected_values(const CheckContext& ctx, const CallSpec& spec, unsigned workers = 0) {
  const size_t w = size_t(spec.width), n = size_t(spec.rows) * w;
  const bool vs_eager = ctx.model.eager_plan != nullptr;
  Expected e{std::vector<uint16_t>(n), std::vector<uint16_t>(vs_eager ? n : 0)};
  parallel_for(n, [&](unsigned, size_t lo, size_t hi) {
    // Runs within a row: each input's run gathered, then the plan over the run (OpPlan::eval_run).
    constexpr size_t kRun = 256;
    const int ni = int(spec.inputs.size());
    std::vector<uint16_t> runs(size_t(ni) * kRun);
    const uint16_t* ptr[ref::kMaxOpInputs] = {};
    for (int q = 0; q < ni; ++q) ptr[q] = runs.data() + size_t(q) * kRun;
    for (size_t i = lo; i < hi;) {
      const int64_t r = int64_t(i / w), c0 = int64_t(i % w);
      const size_t m = std::min({kRun, w - size_t(c0), hi - i});
      for (int q = 0; q < ni; ++q)
        for (size_t j = 0; j < m; ++j) runs[size_t(q) * kRun + j] = spec.at(q, r, c0 + int64_t(j));
      ctx.model.plan->eval_run(ptr, m, e.want.data() + i);
      if (vs_eager) ctx.model.eager_plan->eval_run(ptr, m, e.eager.data() + i);
      i += m;
    }
  }, kParallelGrain, workers);
  return e;
}

/// Runs a valid call and compares every element; checks the return code, the guards and the inputs. The expected
/// outputs are `pre_expected` (computed ahead by the caller, e.g. for a batch of calls at once) or computed here (in
/// parallel above kParallelGrain elements) and compared row by row; a row that differs is compared element by
/// element for the records. False once the check should stop (or the subject faulted).
/// `where` is put before "r=..,c=.." in the records (a call's place in a sequence: "call=7,").
inline bool run_valid(const CheckContext& ctx, Tally& t, const CallSpec& spec, const std::string& label,
                      std::optional<CallOutcome> pre_run = std::nullopt, const std::string& where = "",
                      const Expected* pre_expected = nullptr) {
  watch_label(label);
  const CallOutcome o = pre_run ? std::move(*pre_run) : ctx.runner.call(spec);
  if (!o.fault.empty()) {
    if (!o.subject_fault) throw std::runtime_error("audit: backend failure in " + label + ": " + o.fault);
    t.fault("CUDA error in call " + label + " [" + describe_call(spec) + "]: " + o.fault);
    return false;
  }
  if (!outcome_ok(ctx, t, spec, o)) return !t.stop();
  const size_t w = size_t(spec.width), n = size_t(spec.rows) * w;
  Expected computed;
  if (!pre_expected) {
    const PhaseClock reference("reference values");
    computed = expected_values(ctx, spec);
  }
  const Expected& e = pre_expected ? *pre_expected : computed;
  const std::vector<uint16_t>& want = e.want;
  if (ctx.model.eager_plan) t.versus_eager(want, e.eager);
  const PhaseClock comparison("comparison");
  const std::string at = where + groups_of(spec);
  const size_t stride = n > (size_t(1) << 22) ? 61 : 1;  // the distinct-output guard needs no more
  for (size_t i = 0; i < n; i += stride) t.seen(want[i]);
  for (int64_t r = 0; r < spec.rows; ++r) {
    const size_t row = size_t(r) * w;
    if (std::memcmp(want.data() + row, o.out.data() + row, w * 2) == 0) {
      t.equal(w);
      continue;
    }
    for (int64_t c = 0; c < spec.width; ++c) {
      uint16_t in[ref::kMaxOpInputs];
      inputs_at(spec, r, c, in);
      if (!t.element([&] { return at + "r=" + std::to_string(r) + ",c=" + std::to_string(c); }, in,
                     o.out[row + size_t(c)], want[row + size_t(c)]))
        return false;
    }
  }
  return !t.stop();
}

/// A valid call of the context's op; group_rows must divide rows (ignored by ops without group-broadcast inputs).
inline CallSpec make_spec(const CheckContext& ctx, int64_t rows, int64_t width, int64_t group_rows = 1) {
  return make_call(*ctx.model.op, rows, width, ctx.abi_dtype, group_rows);
}

/// The divisors of rows strictly between 1 and rows (groups of 2 or more rows, 2 or more groups).
inline std::vector<int64_t> inner_divisors(int64_t rows) {
  std::vector<int64_t> d;
  for (int64_t g = 2; g * 2 <= rows; ++g)
    if (rows % g == 0) d.push_back(g);
  return d;
}

/// The group size of a random call of `rows`: 1 (per element), rows (one row shared by all, a batch of 1) or a
/// divisor between them (2 or more groups of 2 or more rows), a third of the time each (1 where rows has no such
/// divisor). Draws nothing and returns 1 for an op without group-broadcast inputs (their sequences stay as they were).
inline int64_t pick_group_rows(const ref::OpSpec& op, int64_t rows, std::mt19937_64& rng) {
  if (!op.has_groups()) return 1;
  const uint64_t mode = rng() % 3;
  if (mode == 0) return 1;
  if (mode == 1) return rows;
  const std::vector<int64_t> d = inner_divisors(rows);
  return d.empty() ? 1 : d[rng() % d.size()];
}

/// Up to `n` tuples of the op's inputs in one call of group_rows 1 (every input per element: a group-broadcast input
/// has one row per output row then), width a multiple of the vector up to 512, row-major; the padding repeats the
/// first tuples. An op with a row-broadcast input has no such call (one bias per column): std::logic_error.
inline CallSpec tuple_call(const CheckContext& ctx, const std::vector<std::array<uint16_t, ref::kMaxOpInputs>>& tuples,
                           size_t first, size_t n) {
  const ref::OpSpec& op = *ctx.model.op;
  for (const auto& in : op.inputs)
    if (in.layout == ref::Layout::kRowBroadcast)
      throw std::logic_error("audit: " + op.name + "'s input " + in.name + " is row-broadcast: no call holds arbitrary tuples");
  const int64_t v = ctx.info.vector_elems();
  const int64_t width = std::max(v, std::min<int64_t>(512 / v * v, (int64_t(n) + v - 1) / v * v));
  const int64_t rows = (int64_t(n) + width - 1) / width;
  CallSpec s = make_spec(ctx, rows, width, 1);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < width; ++c) {
      const auto& tu = tuples[first + size_t(r * width + c) % n];
      for (int i = 0; i < int(op.inputs.size()); ++i) s.at(i, r, c) = tu[size_t(i)];
    }
  return s;
}

inline void fill_random(const CheckContext& ctx, CallSpec& s, std::mt19937_64& rng) {
  for (auto& b : s.buffers)
    for (auto& v : b) v = random_pattern(ctx.model.dtype, rng);
}

/// fill_random's weights from the counter-based generator: element i of buffer k draws from its own stream,
/// counter_hash(case_seed ^ kBiasSalt * k, i), so any case, and any element of it, is generated on its own (a batch
/// of cases on every core). `workers` as parallel_for's.
inline void fill_counter_random(const CheckContext& ctx, CallSpec& s, uint64_t case_seed, unsigned workers = 0) {
  for (size_t k = 0; k < s.buffers.size(); ++k) {
    uint16_t* p = s.buffers[k].data();
    const uint64_t seed = case_seed ^ (kBiasSalt * uint64_t(k));
    parallel_for(s.buffers[k].size(), [&](unsigned, size_t lo, size_t hi) {
      for (size_t i = lo; i < hi; ++i) {
        CounterRng rng{counter_hash(seed, i)};
        p[i] = random_pattern(ctx.model.dtype, rng);
      }
    }, kParallelGrain, workers);
  }
}

inline uint64_t class_seed(const CheckContext& ctx, CheckClass c) {
  return ctx.options.seed * 0x9E3779B97F4A7C15ull + uint64_t(c) * 1000003u + uint64_t(ctx.model.dtype) * 7919u;
}

}  // namespace fuseproof::audit::detail
