// quant_call_classes.cpp: the quantization classes that call the subject as models run it: shapes above 2^31 codes,
// batch invariance, repeated calls, several streams at once, CUDA graphs, and one process's history of dtypes and
// shapes. Every call's codes and scales, byte for byte, against ref::QuantPlan (audit/quant_class_support.h).
#include "audit/quant_call_classes.h"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "audit/call_watch.h"
#include "audit/counter_patterns.h"
#include "audit/history_schedule.h"
#include "audit/quant_class_support.h"
#include "audit/streams_note.h"
#include "common/phase_clock.h"
#include "common/sha256.h"
#include "reference/half_codec.h"

namespace fuseproof::audit {

namespace {

using ref::QuantPlan;

std::string head_of(const QuantContext& ctx) {
  return ctx.model.op->name + " " + ref::dtype_name(ctx.model.dtype);
}

std::string shape(int64_t rows, int64_t width) { return std::to_string(rows) + "x" + std::to_string(width); }

/// Bytes of one scale cell under ctx's contract: an E4M3 byte, or a binary32.
int64_t cell_bytes(const QuantContext& ctx) {
  return ctx.model.plan->contract().scale_format == ref::ScaleFormat::kE4m3 ? 1 : 4;
}

/// A call of [rows, width] in `layout`, every input element counter_pattern(seed, i) (weighted random patterns:
/// activation-like values, any 16 bits, the specials); with own_scalars the scalars from its own tensor amax, else
/// 1.0.
QuantCallSpec random_call(const QuantContext& ctx, int64_t rows, int64_t width, ref::ScaleLayout layout,
                          uint64_t seed, bool own_scalars) {
  QuantCallSpec s = make_quant_call(*ctx.model.op, ctx.model.contract, rows, width, ctx.abi_dtype, layout);
  const bool bf = ctx.model.dtype == ref::Dtype::kBf16;
  uint64_t i = 0;
  for (auto& b : s.buffers)
    for (auto& e : b) e = counter_pattern(bf, seed, i++);
  if (own_scalars) quant_scalars_from_call(*ctx.model.plan, s);
  return s;
}

/// Compares an outcome the runner gave for `s` (computing its expected images); false once the class should stop.
bool check_one(const QuantContext& ctx, QuantCallTally& t, const QuantCallSpec& s, const QuantOutcome& o,
               const std::string& label) {
  const std::vector<QuantExpected> want = expected_quant_images(ctx, {s});
  return t.compare(s, o, want[0], label);
}

/// Whether a batch fault is a backend failure (thrown: the audit cannot go on) or the subject's (recorded).
bool take_fault(const QuantContext& ctx, CheckResult& r, const std::string& fault, bool subject_fault,
                const std::string& where) {
  if (fault.empty()) return false;
  if (!subject_fault) throw std::runtime_error("audit: backend failure in " + where + ": " + fault);
  r.fault = "CUDA error in " + where + " (" + head_of(ctx) + "): " + fault;
  return true;
}

}  // namespace

void quant_shapes(const QuantContext& ctx, CheckResult& r) {
  const QuantPlan& plan = *ctx.model.plan;
  const ref::QuantOpSpec& op = plan.op();
  const int64_t n = op.block_size;
  const bool cuda = ctx.info.cuda();
  auto round_up = [&](int64_t w) { return std::max(n, (w + n - 1) / n * n); };
  std::vector<Shape> shapes;
  if (ctx.options.default_shapes) {
    if (cuda) {
      // 155,345 x 13,824 = 2^31 + 5,632 codes: every flat element index past int32 (13,824 is a multiple of 128).
      shapes.push_back({155345, round_up(13824), "codes above 2^31"});
      shapes.push_back({65537, round_up(8 * n), "rows above 65,535"});
    } else {
      shapes.push_back({65537, round_up(64), "rows above 65,535"});
    }
  }
  std::vector<std::string> rounded;
  for (const Shape& s : ctx.options.extra_shapes) {
    Shape q = s;
    q.width = round_up(s.width);
    if (q.width != s.width)
      rounded.push_back(shape(s.rows, s.width) + " as " + shape(q.rows, q.width));
    shapes.push_back(q);
  }
  QuantCallTally t(ctx, r);
  std::vector<float> scalars;
  if (plan.scalars() > 0) {
    // A tensor amax of 3.0, as the rejection class's calls: the global scale a model would pass for such a tensor.
    scalars.assign(size_t(plan.scalars()), 1.0f);
    plan.scalars_from_tensor_amax(ref::f32_to_half(plan.dtype(), 3.0f, ref::NanPolicy::kCudaCvtRn), scalars.data());
  }
  std::vector<std::string> ran, not_ran;
  uint64_t biggest = 0;
  const uint64_t seed = quant_seed(ctx, CheckClass::kShapes);
  for (size_t k = 0; k < shapes.size() && !t.stop() && r.fault.empty(); ++k) {
    const Shape& sh = shapes[k];
    const std::string name = shape(sh.rows, sh.width);
    const QuantLargeSpec large =
        make_quant_large(op, ctx.model.contract, sh.rows, sh.width, ctx.abi_dtype, counter_hash(seed, k), scalars);
    const uint64_t codes = uint64_t(sh.rows) * uint64_t(sh.width);
    uint64_t need = large.view.codes_bytes + large.view.scale_bytes + (uint64_t(64) << 20);
    for (size_t b : large.buffer_elems) need += uint64_t(b) * 2;
    if (const std::string short_of = memory_shortfall(name, sh.why, need, ctx.runner.memory_available());
        !short_of.empty()) {
      not_ran.push_back(short_of);
      continue;
    }
    const std::string label = "shapes " + name + " (" + sh.why + ")";
    ref::QuantCodeMemos memos;  // the chunks share the call's scalars
    const QuantChunkCheck check = [&](int64_t row0, int64_t rows, const uint8_t* c, const uint8_t* s) {
      std::optional<PhaseClock> reference(std::in_place, "reference values");
      const QuantCallSpec part = large.rows_of(row0, rows);
      const std::vector<QuantExpected> want = expected_quant_images(ctx, {part}, &memos);
      reference.reset();
      const PhaseClock comparison("comparison");
      QuantOutcome o;
      o.codes.assign(c, c + part.codes_bytes);
      o.scales.assign(s, s + part.scale_bytes);
      return t.compare(part, o, want[0],
                       label + " rows " + std::to_string(row0) + ".." + std::to_string(row0 + rows - 1) +
                           " (the rows r= below count from the chunk's first)");
    };
    watch_label(label);
    const std::optional<QuantLargeOutcome> o = ctx.runner.large_call(large, check);
    if (!o) {
      not_ran.push_back(name + " (" + sh.why + ": this runner cannot make a call without holding it twice)");
      continue;
    }
    if (take_fault(ctx, r, o->fault, o->subject_fault, "shapes call " + name)) break;
    const std::string head = head_of(ctx) + " [" + describe_quant_call(large.view) + "]";
    if (o->rc != 0) t.failure(head + " valid call rejected: " + o->message, codes);
    if (o->guard_writes)
      t.failure(head + " wrote " + std::to_string(o->guard_writes) + " guard bytes outside codes and scales",
                o->guard_writes);
    if (o->inputs_changed)
      t.failure(head + " modified " + std::to_string(o->inputs_changed) + " elements of its inputs");
    ran.push_back(name + " (" + sh.why + ")");
    biggest = std::max(biggest, codes);
  }
  std::string scope = std::to_string(ran.size()) + " shape(s) at full size";
  for (const auto& s : ran) scope += "; " + s;
  scope += "; largest call " + std::to_string(biggest) + " codes" +
           (biggest > (uint64_t(1) << 31) ? " (above 2^31)" : "") +
           "; inputs from the counter generator, the scalars of a tensor amax of 3.0, linear scales; codes and scales "
           "streamed back and compared chunk by chunk, every code byte and scale cell";
  if (!rounded.empty()) {
    scope += "; widths rounded up to the " + std::to_string(n) + "-element block:";
    for (const auto& s : rounded) scope += " " + s;
  }
  if (!cuda && ctx.options.default_shapes)
    scope += "; calls above 2^31 codes are the CUDA runner's default shapes (host memory holds the host's)";
  r.scope = scope;
  r.note_not_run(not_ran);
}

void quant_batch(const QuantContext& ctx, CheckResult& r) {
  const QuantPlan& plan = *ctx.model.plan;
  const ref::QuantOpSpec& op = plan.op();
  const int64_t n = op.block_size, width = 8 * n, blocks = 8;
  const int64_t cell = cell_bytes(ctx);
  const bool cuda = ctx.info.cuda();
  const std::vector<int64_t> sizes =
      cuda ? std::vector<int64_t>{7, 128, 129, 4096, 75600} : std::vector<int64_t>{7, 128, 129, 1024};
  QuantCallTally t(ctx, r);
  const uint64_t seed = quant_seed(ctx, CheckClass::kBatch);
  uint64_t draw = 0, placements = 0, calls = 0;
  bool go = true;
  for (ref::ScaleLayout layout : op.scale_layouts) {
    // The probe: one row, its scalars from its own amax and passed unchanged in every batch (a tensor-wide scalar
    // is the caller's); a broadcast input is the probe's in every call.
    QuantCallSpec probe = random_call(ctx, 1, width, layout, counter_hash(seed, draw++), true);
    watch_label("batch: the probe alone (" + std::string(ref::scale_layout_name(layout)) + ")");
    const QuantOutcome alone = ctx.runner.call(probe);
    ++calls;
    go = check_one(ctx, t, probe, alone,
                   "batch probe alone (" + std::string(ref::scale_layout_name(layout)) + ")");
    if (!go) break;
    if (alone.rc != 0 || alone.not_applicable || alone.codes.size() != probe.codes_bytes ||
        alone.scales.size() != probe.scale_bytes)
      continue;  // the comparison has said why
    for (int64_t rows : sizes) {
      std::vector<QuantCallSpec> specs;
      std::vector<std::pair<int64_t, const char*>> places = {{0, "first"}, {rows / 2, "middle"}, {rows - 1, "last"}};
      for (const auto& [p, pos] : places) {
        QuantCallSpec s = random_call(ctx, rows, width, layout, counter_hash(seed, draw++), false);
        s.scalars = probe.scalars;
        for (size_t k = 0; k < s.buffers.size(); ++k) {
          const size_t one = probe.buffers[k].size();
          const bool broadcast = s.buffers[k].size() == one;
          std::copy(probe.buffers[k].begin(), probe.buffers[k].end(),
                    s.buffers[k].begin() + long(broadcast ? 0 : size_t(p) * one));
        }
        specs.push_back(std::move(s));
      }
      watch_label("batch of " + std::to_string(rows) + " rows (" + ref::scale_layout_name(layout) + ")");
      const std::vector<QuantOutcome> got = ctx.runner.call_batch(specs);
      if (got.size() != specs.size()) throw std::runtime_error("audit: the quant runner returned a short batch");
      const std::vector<QuantExpected> want = expected_quant_images(ctx, specs);
      for (size_t j = 0; j < specs.size() && go; ++j) {
        const auto& [p, pos] = places[j];
        const std::string label = "batch of " + std::to_string(rows) + " rows, probe at row " + std::to_string(p) +
                                  " (" + pos + ")";
        ++calls;
        go = t.compare(specs[j], got[j], want[j], label);
        const QuantOutcome& o = got[j];
        if (!go || o.rc != 0 || o.not_applicable || !o.fault.empty() || o.codes.size() != specs[j].codes_bytes ||
            o.scales.size() != specs[j].scale_bytes)
          continue;
        ++placements;
        // The probe row's code bytes and scale cells against the probe alone's.
        const size_t row_bytes = specs[j].codes_bytes / size_t(rows);
        uint64_t differ = 0;
        for (size_t b = 0; b < row_bytes; ++b) differ += o.codes[size_t(p) * row_bytes + b] != alone.codes[b];
        for (int64_t k = 0; k < blocks; ++k) {
          const int64_t in_batch = ref::scale_offset(layout, p, k, rows, blocks) * cell;
          const int64_t own = ref::scale_offset(layout, 0, k, 1, blocks) * cell;
          differ += std::memcmp(o.scales.data() + in_batch, alone.scales.data() + own, size_t(cell)) != 0;
        }
        if (differ)
          t.failure(head_of(ctx) + " " + label + " [" + describe_quant_call(specs[j]) + "]: " +
                        std::to_string(differ) + " code bytes and scale cells of the probe row differ from the "
                        "probe alone (a batch of 1)",
                    differ);
      }
      if (!go || t.stop()) break;
    }
    if (!go || t.stop()) break;
  }
  std::string layouts;
  for (ref::ScaleLayout l : op.scale_layouts) layouts += (layouts.empty() ? "" : ", ") + std::string(ref::scale_layout_name(l));
  std::string list;
  for (int64_t s : sizes) list += (list.empty() ? "" : ", ") + std::to_string(s);
  r.scope = "a probe row (random, width " + std::to_string(width) + " = 8 blocks, its scalars from its own amax and "
            "passed unchanged in every batch) first, in the middle and last in batches of " + list +
            " rows (the other rows random), in each scale layout (" + layouts + "): " + std::to_string(placements) +
            " placements whose probe row's code bytes and scale cells were compared with the probe alone's; all " +
            std::to_string(calls) + " calls against the contract, every code byte and scale cell";
}

void quant_repeat(const QuantContext& ctx, CheckResult& r) {
  const QuantPlan& plan = *ctx.model.plan;
  const ref::QuantOpSpec& op = plan.op();
  const int64_t n = op.block_size;
  const int64_t max_blocks = std::max<int64_t>(1, 512 / n);
  const int64_t max_rows = ctx.info.cuda() ? 256 : 64;
  constexpr int kCalls = 32;
  QuantCallTally t(ctx, r);
  std::string digest[2];
  std::vector<std::string> call_digest[2];
  bool go = true;
  for (int pass = 0; pass < 2 && go; ++pass) {
    CounterRng rng{quant_seed(ctx, CheckClass::kRepeat)};  // the same sequence in both passes
    Sha256 all;
    for (int i = 0; i < kCalls && go; ++i) {
      const int64_t rows = 1 + int64_t(rng() % uint64_t(max_rows));
      const int64_t width = n * (1 + int64_t(rng() % uint64_t(max_blocks)));
      const ref::ScaleLayout layout = op.scale_layouts[size_t(i) % op.scale_layouts.size()];
      const QuantCallSpec s = random_call(ctx, rows, width, layout, rng(), i % 2 == 0);
      const std::vector<QuantExpected> want = expected_quant_images(ctx, {s});
      QuantOutcome out[2];
      bool kept[2] = {false, false};
      for (int twice = 0; twice < 2 && go; ++twice) {
        const std::string label = "repeat pass " + std::to_string(pass + 1) + " call " + std::to_string(i) +
                                  (twice ? " (again)" : "");
        watch_label(label);
        out[twice] = ctx.runner.call(s);
        kept[twice] = out[twice].fault.empty() && out[twice].rc == 0 && !out[twice].not_applicable;
        go = t.compare(s, out[twice], want[0], label);
      }
      Sha256 one;
      for (const QuantOutcome& o : out) {
        all.update(o.codes.data(), o.codes.size());
        all.update(o.scales.data(), o.scales.size());
        one.update(o.codes.data(), o.codes.size());
        one.update(o.scales.data(), o.scales.size());
      }
      call_digest[pass].push_back(one.hex());
      if (!kept[0] || !kept[1]) continue;
      uint64_t differ = 0;
      for (size_t b = 0; b < std::min(out[0].codes.size(), out[1].codes.size()); ++b)
        differ += out[0].codes[b] != out[1].codes[b];
      for (size_t b = 0; b < std::min(out[0].scales.size(), out[1].scales.size()); ++b)
        differ += out[0].scales[b] != out[1].scales[b];
      if (differ)
        t.failure(head_of(ctx) + " pass " + std::to_string(pass + 1) + " call " + std::to_string(i) + " [" +
                      describe_quant_call(s) + "] made twice with the same inputs: " + std::to_string(differ) +
                      " code and scale bytes differ",
                  differ);
    }
    digest[pass] = all.hex();
  }
  const int calls = 2 * kCalls;
  if (go) {
    r.note = "SHA-256 of the " + std::to_string(calls) + " outputs (codes and scales) of each pass " + digest[0] +
             (digest[0] == digest[1] ? " (equal)" : " and " + digest[1]);
    if (digest[0] != digest[1]) {
      int i = 0;
      while (i < kCalls && call_digest[0][size_t(i)] == call_digest[1][size_t(i)]) ++i;
      t.failure(head_of(ctx) + " the sequence made again gave other outputs: SHA-256 of pass 1 " + digest[0] +
                ", of pass 2 " + digest[1] + "; first differing call " + std::to_string(i));
    }
  } else {
    r.note = "digests of the passes not compared (stopped early)";
  }
  r.scope = std::to_string(kCalls) + " random calls (rows 1.." + std::to_string(max_rows) + ", widths " +
            std::to_string(n) + ".." + std::to_string(max_blocks * n) + " in steps of the block, the scale layouts "
            "by turns, the scalars from the call's own amax or 1.0 by turns, weighted random patterns seeded from "
            "--seed " + std::to_string(ctx.options.seed) + "), each made twice with the same inputs and every code "
            "and scale byte compared; then the sequence again and the SHA-256 of all its codes and scales compared "
            "with the first pass's; all " + std::to_string(2 * calls) + " calls against the contract, one after "
            "another; " + ctx.runner.buffers_per_call();
}

void quant_streams(const QuantContext& ctx, CheckResult& r) {
  const ref::QuantOpSpec& op = *ctx.model.op;
  const int64_t n = op.block_size;
  const bool cuda = ctx.info.cuda();
  constexpr int kLanes = 8, kCalls = 32;
  // As the elementwise streams class: on a GPU 0.25..2 M elements a call behind the runner's gate, on the host a few
  // milliseconds of one of 8 threads released together; widths below history's prefill-sized first call.
  const int64_t row_lo = cuda ? 256 : 16, row_hi = cuda ? 1024 : 128;
  const int64_t w_lo = std::max(n, (cuda ? 1024 : 64) / n * n), w_hi = std::max(n, (cuda ? 2040 : 1024) / n * n);
  QuantCallTally t(ctx, r);
  CounterRng rng{quant_seed(ctx, CheckClass::kStreams)};
  std::vector<QuantCallSpec> specs;
  uint64_t elems = 0;
  for (int i = 0; i < kCalls; ++i) {
    const int64_t rows = row_lo + int64_t(rng() % uint64_t(row_hi - row_lo + 1));
    const int64_t width = w_lo + n * int64_t(rng() % uint64_t((w_hi - w_lo) / n + 1));
    specs.push_back(random_call(ctx, rows, width, op.scale_layouts[size_t(i) % op.scale_layouts.size()], rng(),
                                i % 2 == 0));
    elems += uint64_t(rows * width);
  }
  // One plain call first, as a model warms up before it serves (module loading, allocator pools).
  watch_label("streams warm-up call");
  if (!check_one(ctx, t, specs[0], ctx.runner.call(specs[0]), "streams warm-up call")) return;
  std::vector<QuantExpected> want;  // computed once the runner has run the set
  StreamsAttempts<QuantConcurrentOutcome> sa;
  const auto make = [&] { return ctx.runner.call_concurrent(specs, kLanes); };
  const auto fault = [&](QuantConcurrentOutcome& co) {
    return take_fault(ctx, r, co.fault, co.subject_fault,
                      "the streams calls (" + std::to_string(kCalls) + " calls on " + co.lanes + ")");
  };
  const auto check = [&](QuantConcurrentOutcome& co, int* checked) {
    if (co.calls.size() != specs.size()) throw std::runtime_error("audit: the quant runner returned a short set");
    if (want.empty()) want = expected_quant_images(ctx, specs);
    for (int i = 0; i < kCalls; ++i, ++*checked)
      if (!t.compare(specs[size_t(i)], co.calls[size_t(i)], want[size_t(i)],
                     "streams call " + std::to_string(i) + " (lane " + std::to_string(i % kLanes) + ")"))
        return true;
    return r.mismatches > 0;
  };
  if (!streams_attempts(r, kCalls, kLanes, cuda, make, fault, check, sa)) return;
  const int checked = sa.checked;
  const std::optional<QuantConcurrentOutcome>& co = sa.co;
  r.scope = "one warm-up call, then " + std::to_string(kCalls) + " calls (" +
            (checked < kCalls ? std::to_string(checked) + " checked before the stop, " : "") + "rows " +
            std::to_string(row_lo) + ".." + std::to_string(row_hi) + ", widths " + std::to_string(w_lo) + ".." +
            std::to_string(w_hi) + ", " + std::to_string(elems) + " elements in all, the scale layouts and the "
            "scalars by turns, each on images of its own with random contents) enqueued round-robin on " + co->lanes +
            " with no synchronisation between them until all were enqueued; every code byte and scale cell of every "
            "call against the contract";
}

void quant_graph(const QuantContext& ctx, CheckResult& r) {
  if (!ctx.info.cuda()) {
    r.status = CheckStatus::kSkipped;
    r.note = "host-memory subject: no CUDA graph to capture";
    return;
  }
  const ref::QuantOpSpec& op = *ctx.model.op;
  const int64_t n = op.block_size;
  constexpr int kCalls = 4, kReplays = 3;
  QuantCallTally t(ctx, r);
  CounterRng rng{quant_seed(ctx, CheckClass::kGraph)};
  const int64_t max_blocks = std::max<int64_t>(1, 2040 / n);  // below history's first width, as in streams
  struct Captured {
    int64_t rows, width;
    ref::ScaleLayout layout;
    bool own_scalars;
  };
  std::vector<Captured> shapes;
  for (int i = 0; i < kCalls; ++i)
    shapes.push_back({1 + int64_t(rng() % 1024), n * (1 + int64_t(rng() % uint64_t(max_blocks))),
                      op.scale_layouts[size_t(i) % op.scale_layouts.size()], i % 2 == 0});
  // The replays write into the captured buffers: every set has the captured calls' shapes, layouts and scalars'
  // count; the scalars themselves are captured with the call (the ABI passes them by value).
  std::vector<std::vector<QuantCallSpec>> sets(kReplays);
  for (auto& set : sets)
    for (const Captured& c : shapes) set.push_back(random_call(ctx, c.rows, c.width, c.layout, rng(), c.own_scalars));
  for (size_t k = 1; k < sets.size(); ++k)
    for (size_t i = 0; i < shapes.size(); ++i) sets[k][i].scalars = sets[0][i].scalars;
  watch_label("graph: capture and replays");
  std::optional<QuantGraphOutcome> g = ctx.runner.call_graph(sets);
  if (!g) {
    r.status = CheckStatus::kSkipped;
    r.note = "this runner has no CUDA graphs";
    return;
  }
  std::string shape_list;
  for (const Captured& c : shapes)
    shape_list += (shape_list.empty() ? "" : ", ") + shape(c.rows, c.width) + " " + ref::scale_layout_name(c.layout);
  r.scope = std::to_string(kCalls) + " calls (" + shape_list + ") each made once eagerly (warm-up), then captured "
            "on one stream (cudaStreamCaptureModeGlobal) into one CUDA graph on images of their own, and the graph "
            "replayed " + std::to_string(kReplays) + " times, new random inputs written into the captured buffers "
            "and codes and scales poisoned again before each replay (the scalars, passed by value, are the "
            "captured ones); every warm-up and replay code byte and scale cell against the contract";
  if (take_fault(ctx, r, g->fault, g->subject_fault, "the graph class")) return;
  for (size_t i = 0; i < g->warmup.size(); ++i)
    if (!check_one(ctx, t, sets[0][i], g->warmup[i], "graph warm-up call " + std::to_string(i))) return;
  if (!g->capture_error.empty()) {
    t.failure(head_of(ctx) + " CUDA graph capture failed: " + g->capture_error);
    r.note = "the capture failed, so no replay ran";
    return;
  }
  r.note = g->graph;
  for (size_t k = 0; k < g->replays.size() && k < sets.size(); ++k) {
    const std::vector<QuantExpected> want = expected_quant_images(ctx, sets[k]);
    for (size_t i = 0; i < g->replays[k].size() && i < sets[k].size(); ++i)
      if (!t.compare(sets[k][i], g->replays[k][i], want[i],
                     "graph replay " + std::to_string(k) + " call " + std::to_string(i)))
        return;
  }
}

void quant_history(const QuantContext& ctx, CheckResult& r) {
  // Without the other dtype's model (one --dtype asked for), every call is of this dtype: the sequence of shapes,
  // layouts and scalars is the same.
  const bool both = ctx.other_model != nullptr;
  const QuantContext theirs_ctx = both ? QuantContext{ctx.info, ctx.runner, *ctx.other_model, ctx.options,
                                                      ctx.other_abi_dtype, ctx.max_width, ctx.stage_rows}
                                       : ctx;
  const QuantContext* ctxs[2] = {&ctx, &theirs_ctx};
  QuantCallTally mine(ctx, r), theirs(theirs_ctx, r);  // both write into r; each record names its dtype
  QuantCallTally* tallies[2] = {&mine, both ? &theirs : &mine};
  const ref::QuantOpSpec& op = *ctx.model.op;
  const int64_t n = op.block_size;
  CounterRng rng{quant_seed(ctx, CheckClass::kHistory)};
  HistorySchedule<CounterRng> plan(n, false, both, rng);
  for (int i = 0; i < plan.kCalls; ++i) {
    const HistoryCall hc = plan.next(i);
    const QuantContext& c = *ctxs[hc.which];
    const ref::ScaleLayout layout = op.scale_layouts[size_t(rng() % op.scale_layouts.size())];
    const QuantCallSpec s = random_call(c, hc.rows, hc.width, layout, rng(), rng() % 2 == 0);
    const std::string label = "history call " + std::to_string(i) + " (" + ref::dtype_name(c.model.dtype) + ", " +
                              shape(hc.rows, hc.width) + ", " + ref::scale_layout_name(layout) + ")";
    watch_label(label);
    if (!check_one(c, *tallies[hc.which], s, ctx.runner.call(s), label)) break;
  }
  const char* mine_name = ref::dtype_name(ctx.model.dtype);
  const char* theirs_name =
      ref::dtype_name(ctx.model.dtype == ref::Dtype::kBf16 ? ref::Dtype::kFp16 : ref::Dtype::kBf16);
  r.scope = plan.scope(mine_name, theirs_name,
                       std::to_string(n) + ".." + std::to_string(plan.max_units() * n) + " in steps of the block",
                       "the scale layouts and the scalars (own amax or 1.0) at random; every code byte and scale "
                       "cell against its own dtype's model; " + ctx.runner.buffers_per_call());
}

}  // namespace fuseproof::audit
