// check_integration.cpp: the classes that call the subject as models run it: batch invariance, repeated calls,
// several streams at once, CUDA graphs, and one process's history of dtypes and shapes.
#include <algorithm>
#include <numeric>
#include <tuple>

#include "audit/check_support.h"
#include "audit/history_schedule.h"
#include "audit/streams_note.h"
#include "common/sha256.h"

namespace fuseproof::audit {

using namespace detail;

namespace {

/// The call under `label`; `kept` gets a copy of its output when the call ran and was accepted (else it is empty).
CallOutcome call_keeping(const CheckContext& ctx, const CallSpec& spec, const std::string& label,
                         std::vector<uint16_t>* kept) {
  watch_label(label);
  CallOutcome o = ctx.runner.call(spec);
  kept->clear();
  if (o.fault.empty() && o.rc == 0) *kept = o.out;
  return o;
}

std::string hex16(uint16_t v) {
  char b[8];
  std::snprintf(b, sizeof b, "0x%04X", v);
  return b;
}

/// "x [rows, 64], bias [64] (broadcast)": the op's buffers of a call of `width`, for a scope.
std::string buffer_shapes(const ref::OpSpec& op, int64_t width) {
  std::string s;
  for (int k = 0; k < int(op.buffers().size()); ++k)
    s += (s.empty() ? "" : ", ") + op.buffers()[size_t(k)] +
         (op.buffer_broadcast(k)
              ? " [" + std::to_string(op.buffer_row_elems(k, width)) + "] (broadcast: the same in every call)"
              : op.buffer_grouped(k) ? " [rows / group_rows, " + std::to_string(op.buffer_row_elems(k, width)) + "]"
                                     : " [rows, " + std::to_string(op.buffer_row_elems(k, width)) + "]");
  return s;
}

}  // namespace

void check_batch(const CheckContext& ctx, CheckResult& r) {
  const ref::OpSpec& op = *ctx.model.op;
  const int64_t v = ctx.info.vector_elems();
  const int64_t width = 8 * v;
  Tally t(ctx, r);
  std::mt19937_64 rng(class_seed(ctx, CheckClass::kBatch));
  // The probe: one row of every per-row buffer (a packed op's whole [2 * width] row) and the broadcast rows, which
  // stay the same in every call.
  CallSpec probe = make_spec(ctx, 1, width);
  fill_random(ctx, probe, rng);
  const int64_t sizes[] = {1, 7, 128, 129, 4096, 75600};
  std::vector<uint16_t> alone, got;
  uint64_t placements = 0, calls = 0;
  bool go = true;
  for (int64_t rows : sizes) {
    std::vector<std::pair<int64_t, const char*>> places{{0, rows == 1 ? "alone" : "first"}};
    if (rows > 2) places.push_back({rows / 2, "middle"});
    if (rows > 1) places.push_back({rows - 1, "last"});
    // Group-broadcast inputs: a batch of 2 where rows is even (group_rows rows / 2), else one group; the probe's
    // group row is the row of its group, so the probe row's inputs are the same in every call.
    const int64_t group_rows = op.has_groups() && rows % 2 == 0 ? rows / 2 : rows;
    for (const auto& [p, pos] : places) {
      if (!go) break;
      CallSpec s = make_spec(ctx, rows, width, group_rows);
      fill_random(ctx, s, rng);
      for (size_t k = 0; k < s.buffers.size(); ++k) {
        const size_t n = probe.buffers[k].size();  // one row of the buffer
        const int64_t row = op.buffer_broadcast(int(k)) ? 0 : op.buffer_grouped(int(k)) ? p / s.group_rows : p;
        std::copy(probe.buffers[k].begin(), probe.buffers[k].end(), s.buffers[k].begin() + long(size_t(row) * n));
      }
      const std::string label = "batch of " + std::to_string(rows) + " rows, probe at row " + std::to_string(p) +
                                " (" + pos + ")";
      CallOutcome o = call_keeping(ctx, s, label, &got);
      ++calls;
      if (!got.empty()) {
        const uint16_t* row = got.data() + size_t(p * width);
        if (rows == 1) {
          alone.assign(row, row + width);
        } else if (!alone.empty()) {
          ++placements;
          for (int64_t c = 0; c < width; ++c) {
            if (row[c] == alone[size_t(c)]) continue;
            uint16_t in[ref::kMaxOpInputs];
            inputs_at(s, p, c, in);
            t.failure(head_of(ctx, rows, width) + " probe at row " + std::to_string(p) + " (" + pos + ") " +
                      (op.has_groups() ? "group_rows " + std::to_string(s.group_rows) + " " : std::string()) +
                      describe_element(op, p, c, in) + " => " + hex16(row[c]) + " alone " + hex16(alone[size_t(c)]) +
                      " (the probe row in a batch of 1)");
          }
        }
      }
      go = run_valid(ctx, t, s, label, std::move(o), "batch=" + std::to_string(rows) + ",");
    }
  }
  r.scope = "a probe row (random; " + buffer_shapes(op, width) + ", width " + std::to_string(width) +
            " = 8 vectors) first, in the middle and last in batches of 7, 128, 129, 4,096 and 75,600 rows (the "
            "other rows random): " + std::to_string(placements) +
            " placements compared bitwise with the probe alone (a batch of 1); all " + std::to_string(calls) +
            " calls against the contract" +
            (op.has_groups() ? "; group_rows rows / 2 (a batch of 2) where rows is even, else rows (one group); the "
                               "probe's group rows copied into its group's row"
                             : "");
}

void check_repeat(const CheckContext& ctx, CheckResult& r) {
  const ref::OpSpec& op = *ctx.model.op;
  const int64_t v = ctx.info.vector_elems();
  const int64_t max_vecs = std::max<int64_t>(1, 512 / v);
  constexpr int kCalls = 32;
  Tally t(ctx, r);
  std::string digest[2];
  std::vector<std::string> call_digest[2];
  bool go = true;
  for (int pass = 0; pass < 2 && go; ++pass) {
    std::mt19937_64 rng(class_seed(ctx, CheckClass::kRepeat));  // the same sequence in both passes
    Sha256 all;
    for (int i = 0; i < kCalls && go; ++i) {
      const int64_t rows = 1 + int64_t(rng() % 256);
      const int64_t width = v * (1 + int64_t(rng() % uint64_t(max_vecs)));
      CallSpec s = make_spec(ctx, rows, width, pick_group_rows(op, rows, rng));
      fill_random(ctx, s, rng);
      std::vector<uint16_t> out[2];
      for (int twice = 0; twice < 2 && go; ++twice) {
        const std::string label = "repeat pass " + std::to_string(pass + 1) + " call " + std::to_string(i) +
                                  (twice ? " (again)" : "");
        CallOutcome o = call_keeping(ctx, s, label, &out[twice]);
        go = run_valid(ctx, t, s, label, std::move(o), "call=" + std::to_string(i) + ",");
      }
      Sha256 one;
      for (const auto& o : out) {
        all.update(o.data(), o.size() * 2);
        one.update(o.data(), o.size() * 2);
      }
      call_digest[pass].push_back(one.hex());
      if (out[0].empty() || out[1].empty()) continue;  // refused or stopped: run_valid has said so
      uint64_t differ = 0;
      size_t first = 0;
      for (size_t e = 0; e < out[0].size(); ++e)
        if (out[0][e] != out[1][e] && !differ++) first = e;
      if (!differ) continue;
      const int64_t rr = int64_t(first) / width, cc = int64_t(first) % width;
      uint16_t in[ref::kMaxOpInputs];
      inputs_at(s, rr, cc, in);
      t.failure(head_of(ctx, rows, width) + " pass " + std::to_string(pass + 1) + " call " + std::to_string(i) +
                    " made twice with the same inputs: " + std::to_string(differ) + " elements differ, first " +
                    describe_element(op, rr, cc, in) + " => " + hex16(out[0][first]) + " then " +
                    hex16(out[1][first]),
                differ);
    }
    digest[pass] = all.hex();
  }
  const int calls = 2 * kCalls;
  if (go) {
    r.note = "SHA-256 of the " + std::to_string(calls) + " outputs of each pass " + digest[0] +
             (digest[0] == digest[1] ? " (equal)" : " and " + digest[1]);
    if (digest[0] != digest[1]) {
      int i = 0;
      while (i < kCalls && call_digest[0][size_t(i)] == call_digest[1][size_t(i)]) ++i;
      t.failure(op.name + " " + ref::dtype_name(ctx.model.dtype) + " the sequence made again gave other outputs: " +
                "SHA-256 of pass 1 " + digest[0] + ", of pass 2 " + digest[1] + "; first differing call " +
                std::to_string(i));
    }
  } else {
    r.note = "digests of the passes not compared (stopped early)";
  }
  r.scope = std::to_string(kCalls) + " random calls (rows 1..256, widths " + std::to_string(v) + ".." +
            std::to_string(max_vecs * v) + " in steps of " + std::to_string(v) +
            ", weighted random patterns, std::mt19937_64 seeded from --seed " + std::to_string(ctx.options.seed) +
            "), each made twice with the same inputs and the outputs compared bitwise; then the sequence again and "
            "the SHA-256 of all its outputs compared with the first pass's; all " + std::to_string(2 * calls) +
            " calls against the contract, one after another on one thread; " + ctx.runner.buffers_per_call() +
            (op.has_groups() ? "; group_rows of each call seeded: 1, rows, or a divisor giving 2+ groups" : "");
}

void check_streams(const CheckContext& ctx, CheckResult& r) {
  const int64_t v = ctx.info.vector_elems();
  const bool cuda = ctx.info.cuda();
  constexpr int kLanes = 8, kCalls = 32;
  // On a GPU the runner holds every stream behind a gate (a kernel that spins while the calls are enqueued), so the
  // calls start together whatever the enqueue costs; each is 0.25..2 M elements. On the host each call is a few
  // milliseconds of one of 8 threads released together. Widths stay below 2,048, the width of history's prefill-sized
  // first call, so that a plan picked on the first call is history's to find.
  const int64_t row_lo = cuda ? 256 : 16, row_hi = cuda ? 1024 : 128;
  const int64_t w_lo = std::max(v, (cuda ? 1024 : 64) / v * v), w_hi = std::max(v, (cuda ? 2040 : 1024) / v * v);
  Tally t(ctx, r);
  std::mt19937_64 rng(class_seed(ctx, CheckClass::kStreams));
  std::vector<CallSpec> specs;
  uint64_t elems = 0;
  for (int i = 0; i < kCalls; ++i) {
    const int64_t rows = row_lo + int64_t(rng() % uint64_t(row_hi - row_lo + 1));
    const int64_t width = w_lo + v * int64_t(rng() % uint64_t((w_hi - w_lo) / v + 1));
    specs.push_back(make_spec(ctx, rows, width, pick_group_rows(*ctx.model.op, rows, rng)));
    fill_random(ctx, specs.back(), rng);
    elems += uint64_t(rows * width);
  }
  // One plain call first (checked like any other), as a model warms up before it serves: the kernel's module loads
  // (CUDA lazy loading synchronises the context) and its allocator pools fill outside the concurrent calls.
  if (!run_valid(ctx, t, specs[0], "streams warm-up call", std::nullopt, "warmup,")) return;
  StreamsAttempts<ConcurrentOutcome> sa;
  const auto make = [&] { return ctx.runner.call_concurrent(specs, kLanes); };
  const auto fault = [&](ConcurrentOutcome& co) {
    if (co.fault.empty()) return false;
    if (!co.subject_fault) throw std::runtime_error("audit: backend failure in the streams calls: " + co.fault);
    t.fault("CUDA error in the streams calls (" + std::to_string(kCalls) + " calls on " + co.lanes + "): " + co.fault);
    return true;
  };
  const auto check = [&](ConcurrentOutcome& co, int* checked) {
    for (int i = 0; i < kCalls; ++i, ++*checked)
      if (!run_valid(ctx, t, specs[size_t(i)],
                     "streams call " + std::to_string(i) + " (lane " + std::to_string(i % kLanes) + ")",
                     std::move(co.calls[size_t(i)]),
                     "call=" + std::to_string(i) + ",lane=" + std::to_string(i % kLanes) + ","))
        return true;
    return false;
  };
  if (!streams_attempts(r, kCalls, kLanes, cuda, make, fault, check, sa)) return;
  const int checked = sa.checked;
  const std::optional<ConcurrentOutcome>& co = sa.co;
  r.scope = "one warm-up call, then " + std::to_string(kCalls) + " calls (" + (checked < kCalls ? std::to_string(checked) + " checked before the "
                                                                      "stop, " : "") +
            "rows " + std::to_string(row_lo) + ".." + std::to_string(row_hi) + ", widths " + std::to_string(w_lo) +
            ".." + std::to_string(w_hi) + ", " + std::to_string(elems) + " elements in all, each on buffers of its "
            "own with random contents) enqueued round-robin on " + co->lanes +
            " with no synchronisation between them until all were enqueued; every output against the contract" +
            (ctx.model.op->has_groups() ? "; group_rows of each call seeded: 1, rows, or a divisor giving 2+ groups"
                                        : "");
}

void check_graph(const CheckContext& ctx, CheckResult& r) {
  if (!ctx.info.cuda()) {
    r.status = CheckStatus::kSkipped;
    r.note = "host-memory subject: no CUDA graph to capture";
    return;
  }
  const int64_t v = ctx.info.vector_elems();
  constexpr int kCalls = 4, kReplays = 3;
  Tally t(ctx, r);
  std::mt19937_64 rng(class_seed(ctx, CheckClass::kGraph));
  std::vector<std::pair<int64_t, int64_t>> shapes;
  const int64_t max_vecs = std::max<int64_t>(1, 2040 / v);  // below history's first width, as in streams
  for (int i = 0; i < kCalls; ++i)
    shapes.push_back({1 + int64_t(rng() % 1024), v * (1 + int64_t(rng() % uint64_t(max_vecs)))});
  // One group size per captured call (the replays write into the captured buffers, so every set has its sizes).
  std::vector<int64_t> groups;
  for (const auto& sh : shapes) groups.push_back(pick_group_rows(*ctx.model.op, sh.first, rng));
  std::vector<std::vector<CallSpec>> sets(kReplays);
  for (auto& set : sets)
    for (size_t i = 0; i < shapes.size(); ++i) {
      set.push_back(make_spec(ctx, shapes[i].first, shapes[i].second, groups[i]));
      fill_random(ctx, set.back(), rng);
    }
  std::optional<GraphOutcome> g = ctx.runner.call_graph(sets);
  if (!g) {
    r.status = CheckStatus::kSkipped;
    r.note = "this runner has no CUDA graphs";
    return;
  }
  std::string shape_list;
  for (size_t i = 0; i < shapes.size(); ++i)
    shape_list += (shape_list.empty() ? "" : ", ") + shape(shapes[i].first, shapes[i].second) +
                  (ctx.model.op->has_groups() ? ",group_rows=" + std::to_string(groups[i]) : "");
  r.scope = std::to_string(kCalls) + " calls (" + shape_list + ") each made once eagerly (warm-up), then captured "
            "on one stream (cudaStreamCaptureModeGlobal) into one CUDA graph on buffers of their own, and the graph "
            "replayed " + std::to_string(kReplays) + " times, new random inputs written into the captured buffers "
            "and out poisoned again before each replay; every warm-up and replay output against the contract";
  if (!g->fault.empty()) {
    if (!g->subject_fault) throw std::runtime_error("audit: backend failure in the graph class: " + g->fault);
    t.fault("CUDA error in the graph class: " + g->fault);
    return;
  }
  for (size_t i = 0; i < g->warmup.size(); ++i)
    if (!run_valid(ctx, t, sets[0][i], "graph warm-up call " + std::to_string(i), std::move(g->warmup[i]),
                   "warmup=" + std::to_string(i) + ","))
      return;
  if (!g->capture_error.empty()) {
    t.failure(ctx.model.op->name + " " + ref::dtype_name(ctx.model.dtype) + " CUDA graph capture failed: " +
              g->capture_error);
    r.note = "the capture failed, so no replay ran";
    return;
  }
  r.note = g->graph;
  for (size_t k = 0; k < g->replays.size(); ++k)
    for (size_t i = 0; i < g->replays[k].size(); ++i)
      if (!run_valid(ctx, t, sets[k][i], "graph replay " + std::to_string(k) + " call " + std::to_string(i),
                     std::move(g->replays[k][i]), "replay=" + std::to_string(k) + ",call=" + std::to_string(i) + ","))
        return;
}

void check_history(const CheckContext& ctx, CheckResult& r) {
  // Without the other dtype's model (one --dtype asked for), every call is of this dtype: the sequence of shapes,
  // widths and buffers is the same, the other dtype's calls become this dtype's.
  const bool both = ctx.other_model != nullptr;
  const CheckContext other{ctx.info, ctx.runner, both ? *ctx.other_model : ctx.model, ctx.options,
                           both ? ctx.other_abi_dtype : ctx.abi_dtype, ctx.domain_biases, ctx.max_width};
  const CheckContext* ctxs[2] = {&ctx, &other};
  Tally mine(ctx, r), theirs(other, r);  // both write into r; each record names its dtype
  Tally* tallies[2] = {&mine, both ? &theirs : &mine};
  const int64_t v = ctx.info.vector_elems();
  const bool off16 = v % 16 != 0;  // widths that are not multiples of 16 exist
  std::mt19937_64 rng(class_seed(ctx, CheckClass::kHistory));
  HistorySchedule<std::mt19937_64> plan(v, off16, both, rng);
  for (int i = 0; i < plan.kCalls; ++i) {
    const HistoryCall hc = plan.next(i);
    const CheckContext& c = *ctxs[hc.which];
    CallSpec s = make_spec(c, hc.rows, hc.width, pick_group_rows(*c.model.op, hc.rows, rng));
    fill_random(c, s, rng);
    const std::string label = "history call " + std::to_string(i) + " (" + ref::dtype_name(c.model.dtype) + ", " +
                              shape(hc.rows, hc.width) + ")";
    if (!run_valid(c, *tallies[hc.which], s, label, std::nullopt, "call=" + std::to_string(i) + ",")) break;
  }
  const char* mine_name = ref::dtype_name(ctx.model.dtype);
  const char* theirs_name =
      ref::dtype_name(ctx.model.dtype == ref::Dtype::kBf16 ? ref::Dtype::kFp16 : ref::Dtype::kBf16);
  r.scope = plan.scope(mine_name, theirs_name,
                       (off16 ? "not a multiple of 16 (" : "(every one a multiple of 16: the vector is " +
                                                               std::to_string(v) + " elements; ") +
                           std::to_string(v) + ".." + std::to_string(plan.max_units() * v) + " in steps of " +
                           std::to_string(v) + ")",
                       "each output against its own dtype's model; " + ctx.runner.buffers_per_call() +
                           (ctx.model.op->has_groups()
                                ? "; group_rows of each call seeded: 1, rows, or a divisor giving 2+ groups"
                                : ""));
}

}  // namespace fuseproof::audit
