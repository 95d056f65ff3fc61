// check_classes.cpp: the check classes; each compares encodings (never values) against the op's reference model.
#include "audit/check_classes.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <stdexcept>
#include <thread>

#include "audit/audit_inputs.h"
#include "audit/call_watch.h"
#include "audit/correct_rounding.h"
#include "audit/counter_patterns.h"
#include "common/exit_status.h"
#include "common/sha256.h"
#include "common/testfloat_record.h"

namespace fuseproof::audit {

namespace {

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

std::string shape(int64_t rows, int64_t width) {
  return "rows=" + std::to_string(rows) + ",width=" + std::to_string(width);
}

std::string head_of(const CheckContext& ctx, int64_t rows, int64_t width) {
  return ctx.model.op->name + " " + ref::dtype_name(ctx.model.dtype) + " [" + shape(rows, width) + "]";
}

/// Checks what a valid call's outcome says besides its elements: a refusal, guard writes, changed inputs.
/// False when the elements cannot be compared (the call was refused).
bool outcome_ok(const CheckContext& ctx, Tally& t, const CallSpec& spec, const CallOutcome& o) {
  const std::string head = head_of(ctx, spec.rows, spec.width);
  if (o.rc != 0) {
    t.failure(head + " valid call rejected: " + o.message, uint64_t(spec.rows * spec.width));
    return false;
  }
  if (o.guard_writes) t.failure(head + " wrote " + std::to_string(o.guard_writes) + " guard bytes outside out", o.guard_writes);
  if (!o.inputs_intact) t.failure(head + " modified its input " + o.modified + " (or its guards)");
  return true;
}

/// fn(lo, hi) over [0, n) on every hardware thread when n is large, else on this one.
template <class Fn>
void parallel_ranges(size_t n, Fn fn) {
  const size_t threads = n < (size_t(1) << 18) ? 1 : std::max(1u, std::thread::hardware_concurrency());
  if (threads == 1) return fn(size_t(0), n);
  std::vector<std::thread> pool;
  for (size_t w = 0; w < threads; ++w) pool.emplace_back([&, w] { fn(n * w / threads, n * (w + 1) / threads); });
  for (auto& t : pool) t.join();
}

/// Runs a valid call and compares every element; checks the return code, the guards and the inputs. The expected
/// outputs are computed first (in parallel for large calls) and compared row by row; a row that differs is compared
/// element by element for the records. False once the check should stop (or the subject faulted).
/// `where` is put before "r=..,c=.." in the records (a call's place in a sequence: "call=7,").
bool run_valid(const CheckContext& ctx, Tally& t, const CallSpec& spec, const std::string& label,
               std::optional<CallOutcome> pre_run = std::nullopt, const std::string& where = "") {
  watch_label(label);
  const CallOutcome o = pre_run ? std::move(*pre_run) : ctx.runner.call(spec);
  if (!o.fault.empty()) {
    if (!o.subject_fault) throw std::runtime_error("audit: backend failure in " + label + ": " + o.fault);
    t.fault("CUDA error in call " + label + " [" + describe_call(spec) + "]: " + o.fault);
    return false;
  }
  if (!outcome_ok(ctx, t, spec, o)) return !t.stop();
  const size_t w = size_t(spec.width), n = size_t(spec.rows) * w;
  std::vector<uint16_t> want(n);
  parallel_ranges(n, [&](size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; ++i)
      want[i] = ctx.model.expected(spec.at(0, int64_t(i / w), int64_t(i % w)), spec.at(1, int64_t(i / w), int64_t(i % w)));
  });
  const size_t stride = n > (size_t(1) << 22) ? 61 : 1;  // the distinct-output guard needs no more
  for (size_t i = 0; i < n; i += stride) t.seen(want[i]);
  for (int64_t r = 0; r < spec.rows; ++r) {
    const size_t row = size_t(r) * w;
    if (std::memcmp(want.data() + row, o.out.data() + row, w * 2) == 0) {
      t.equal(w);
      continue;
    }
    for (int64_t c = 0; c < spec.width; ++c) {
      const uint16_t in[2] = {spec.at(0, r, c), spec.at(1, r, c)};
      if (!t.element([&] { return where + "r=" + std::to_string(r) + ",c=" + std::to_string(c); }, in,
                     o.out[row + size_t(c)], want[row + size_t(c)]))
        return false;
    }
  }
  return !t.stop();
}

CallSpec make_spec(const CheckContext& ctx, int64_t rows, int64_t width) {
  return make_call(*ctx.model.op, rows, width, ctx.abi_dtype);
}

void fill_random(const CheckContext& ctx, CallSpec& s, std::mt19937_64& rng) {
  for (auto& b : s.buffers)
    for (auto& v : b) v = random_pattern(ctx.model.dtype, rng);
}

uint64_t class_seed(const CheckContext& ctx, CheckClass c) {
  return ctx.options.seed * 0x9E3779B97F4A7C15ull + uint64_t(c) * 1000003u + uint64_t(ctx.model.dtype) * 7919u;
}

/// The widths up to which a call of `rows` fits a call-sized buffer: rows * width elements per per-element input.
int64_t pad_to(int64_t n, int64_t v) { return (n + v - 1) / v * v; }

/// A call whose input 0 at (r, c) is rows_of(r, c) and input 1 is cols[c % cols.size()] (second inputs across the
/// columns, the same down each column, so that a broadcast input is expressible).
template <class In0>
CallSpec grid_call(const CheckContext& ctx, int64_t rows, const std::vector<uint16_t>& cols, const In0& in0) {
  const int64_t v = ctx.info.vector_elems();
  const int64_t width = pad_to(int64_t(cols.size()), v);
  CallSpec s = make_spec(ctx, rows, width);
  const InputView a = s.inputs[0], b = s.inputs[1];
  uint16_t* pa = s.buffers[size_t(a.buffer)].data() + a.offset;
  uint16_t* pb = s.buffers[size_t(b.buffer)].data() + b.offset;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < width; ++c) {
      pa[r * a.stride[0] + c * a.stride[1]] = in0(r, c);
      pb[r * b.stride[0] + c * b.stride[1]] = cols[size_t(c) % cols.size()];
    }
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
            "misaligned pointers), out poisoned with 0xFFA5 and " + std::to_string(kGuardElems) +
            " guard elements around every buffer";
  if (not_applicable)
    r.scope += "; " + std::to_string(not_applicable) + " of them not applicable to this subject (not counted)";
}

void check_extreme(const CheckContext& ctx, CheckResult& r) {
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
  for (uint32_t i = 0; i < ctx.options.property_cases; ++i) {
    const int64_t rows = 1 + int64_t(rng() % 4);
    const int64_t width = v * (1 + int64_t(rng() % uint64_t(max_vecs)));
    CallSpec s = make_spec(ctx, rows, width);
    fill_random(ctx, s, rng);
    if (!run_valid(ctx, t, s, "property case " + std::to_string(i))) break;
  }
  r.scope = std::to_string(ctx.options.property_cases) + " random shapes (rows 1..4, widths " + std::to_string(v) +
            ".." + std::to_string(max_vecs * v) + " in steps of " + std::to_string(v) +
            "), weighted random patterns in every input, std::mt19937_64 seeded from --seed " +
            std::to_string(ctx.options.seed);
}

void check_widths(const CheckContext& ctx, CheckResult& r) {
  const int64_t v = ctx.info.vector_elems();
  Tally t(ctx, r);
  std::mt19937_64 rng(class_seed(ctx, CheckClass::kWidths));
  for (int64_t w = v; w <= ctx.max_width; w += v) {
    CallSpec s = make_spec(ctx, 3, w);
    fill_random(ctx, s, rng);
    if (!run_valid(ctx, t, s, "width " + std::to_string(w))) break;
  }
  r.scope = "every valid width " + std::to_string(v) + ".." + std::to_string(ctx.max_width) + " (" +
            std::to_string(ctx.max_width / v) + " widths), 3 rows each, random patterns";
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
    }
  }
  shapes.insert(shapes.end(), ctx.options.extra_shapes.begin(), ctx.options.extra_shapes.end());
  Tally t(ctx, r);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::string> ran, not_ran;
  uint64_t biggest = 0;
  for (size_t k = 0; k < shapes.size() && !t.stop() && r.fault.empty(); ++k) {
    const Shape& sh = shapes[k];
    const std::string name = std::to_string(sh.rows) + "x" + std::to_string(sh.width);
    if (sh.width % v != 0) {  // only the defaults can get here: --shapes entries were refused up front
      not_ran.push_back(name + " (width not a multiple of " + std::to_string(v) + ")");
      continue;
    }
    const uint64_t elems = uint64_t(sh.rows) * uint64_t(sh.width);
    const uint64_t need = elems * uint64_t(op.bytes_per_element()) + elems * 2 + (uint64_t(64) << 20);
    const uint64_t have = ctx.runner.memory_available();
    if (have && need > have) {
      char b[200];
      std::snprintf(b, sizeof b, "%s (%s: needs %.1f GiB, %.1f GiB free)", name.c_str(), sh.why.c_str(),
                    double(need) / double(1ull << 30), double(have) / double(1ull << 30));
      not_ran.push_back(b);
      continue;
    }
    LargeSpec spec{&op, sh.rows, sh.width, ctx.abi_dtype, class_seed(ctx, CheckClass::kShapes) + k};
    std::vector<uint16_t> expected;
    const std::string head = head_of(ctx, sh.rows, sh.width);
    // Expected rows computed in parallel where the output arrives; compared in order.
    const ChunkCheck check = [&](int64_t row0, int64_t nrows, const uint16_t* out) {
      const size_t n = size_t(nrows) * size_t(sh.width);
      expected.resize(n);
      std::vector<std::thread> pool;
      for (unsigned w = 0; w < threads; ++w)
        pool.emplace_back([&, w] {
          const size_t lo = n * w / threads, hi = n * (w + 1) / threads;
          for (size_t i = lo; i < hi; ++i) {
            const int64_t row = row0 + int64_t(i / size_t(sh.width)), col = int64_t(i % size_t(sh.width));
            expected[i] = ctx.model.expected(spec.input(0, row, col), spec.input(1, row, col));
          }
        });
      for (auto& th : pool) th.join();
      for (size_t i = 0; i < n; i += 61) t.seen(expected[i]);
      if (std::memcmp(expected.data(), out, n * 2) == 0) {
        t.equal(n);
        return true;
      }
      for (size_t i = 0; i < n; ++i) {
        const int64_t row = row0 + int64_t(i / size_t(sh.width)), col = int64_t(i % size_t(sh.width));
        const uint16_t in[2] = {spec.input(0, row, col), spec.input(1, row, col)};
        if (!t.element([&] { return "r=" + std::to_string(row) + ",c=" + std::to_string(col); }, in, out[i],
                       expected[i]))
          return false;
      }
      return true;
    };
    watch_label("shapes " + name + " (" + sh.why + ")");
    const LargeOutcome o = ctx.runner.large_call(spec, check);
    if (!o.fault.empty()) {
      if (!o.subject_fault) throw std::runtime_error("audit: backend failure in shapes " + name + ": " + o.fault);
      t.fault("CUDA error in call shapes " + name + " [" + head + "]: " + o.fault);
      break;
    }
    if (o.rc != 0) t.failure(head + " valid call rejected: " + o.message, elems);
    if (o.guard_writes) t.failure(head + " wrote " + std::to_string(o.guard_writes) + " guard bytes outside out", o.guard_writes);
    if (o.inputs_changed) t.failure(head + " modified " + std::to_string(o.inputs_changed) + " elements of its inputs");
    ran.push_back(name + " (" + sh.why + ")");
    biggest = std::max(biggest, elems);
  }
  std::string scope = std::to_string(ran.size()) + " shape(s) at full size (the op's output [rows, width])";
  for (const auto& s : ran) scope += "; " + s;
  scope += "; largest call " + std::to_string(biggest) + " elements" + (biggest > (uint64_t(1) << 31) ? " (above 2^31)" : "");
  scope += "; inputs from the counter generator, output streamed back and compared chunk by chunk";
  r.scope = scope;
  if (!not_ran.empty()) {
    r.note = "not run:";
    for (const auto& s : not_ran) r.note += " " + s + ";";
    r.incomplete_when_passing = true;
  }
}

void check_domain(const CheckContext& ctx, CheckResult& r) {
  const ref::Dtype d = ctx.model.dtype;
  const ref::OpSpec& op = *ctx.model.op;
  const int64_t v = ctx.info.vector_elems();
  const bool full = ctx.domain_biases >= 65536;
  std::vector<uint16_t> seconds;
  if (full) {
    seconds.resize(65536);
    for (uint32_t i = 0; i < 65536; ++i) seconds[i] = uint16_t(i);
  } else {
    seconds = domain_subset_biases(d, ctx.domain_biases, class_seed(ctx, CheckClass::kDomain));
  }
  Tally t(ctx, r);
  const CorrectRounding cr(op, d);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  // The correctly rounded values cost more than the rest of the class together (binary64 with bounds per pair), and
  // a subject that equals the contract everywhere is exactly as far from them as the contract. So they are computed
  // from the first block with a mismatch on, and then, once, for the blocks before it (the subject equals the
  // contract there, so both histograms take the contract's distance).
  bool with_cr = false;
  std::vector<size_t> clean_blocks;  // first index into `seconds` of each block compared before with_cr
  const auto add_cr = [&](const uint16_t* cols, size_t n, const uint16_t* subject, const uint16_t* contract) {
    std::vector<UlpHistogram> vs_cr(threads), eager_cr(threads);
    std::vector<std::thread> pool;
    for (unsigned k = 0; k < threads; ++k)
      pool.emplace_back([&, k] {
        for (size_t c = k; c < n; c += threads)
          for (uint32_t x = 0; x < 65536; ++x) {
            const uint16_t cv = cr.value(uint16_t(x), cols[c]);
            vs_cr[k].add(d, subject[c * 65536 + x], cv);
            eager_cr[k].add(d, contract[c * 65536 + x], cv);
          }
        CorrectRounding::release_thread_caches();
      });
    for (auto& th : pool) th.join();
    for (unsigned k = 0; k < threads; ++k) {
      r.vs_correct.merge(vs_cr[k]);
      r.contract_vs_correct.merge(eager_cr[k]);
    }
  };
  const size_t block = full ? 256 : 128;
  std::vector<uint16_t> expected;
  Sha256 flat, tree;
  bool stopped = false;
  for (size_t b0 = 0; b0 < seconds.size() && !stopped; b0 += block) {
    const size_t n = std::min(block, seconds.size() - b0);
    std::vector<uint16_t> cols(seconds.begin() + long(b0), seconds.begin() + long(b0 + n));
    while (int64_t(cols.size()) % v) cols.push_back(cols[cols.size() % n]);  // pad to the vector; padding not compared
    const std::string label = "domain block of second inputs " + std::to_string(b0) + ".." + std::to_string(b0 + n - 1);
    CallSpec spec = grid_call(ctx, 65536, cols, [](int64_t row, int64_t) { return uint16_t(row); });
    watch_label(label);
    const CallOutcome got = ctx.runner.call(spec);
    if (!got.fault.empty()) {
      if (!got.subject_fault) throw std::runtime_error("audit: backend failure in the domain class: " + got.fault);
      t.fault("CUDA error in " + label + " [rows=65536,width=" + std::to_string(cols.size()) + "]: " + got.fault);
      stopped = true;
      break;
    }
    if (!outcome_ok(ctx, t, spec, got)) break;
    // The reference rows computed in parallel; then compared (and hashed) in canonical order: out[r, c] is element
    // r of row c.
    expected.resize(n * 65536);
    std::vector<uint16_t> canon(n * 65536);
    std::vector<std::thread> pool;
    for (unsigned k = 0; k < threads; ++k)
      pool.emplace_back([&, k] {
        for (size_t c = k; c < n; c += threads) {
          ctx.model.plan->row(cols[c], expected.data() + c * 65536);
          for (uint32_t x = 0; x < 65536; ++x) canon[c * 65536 + x] = got.out[size_t(x) * cols.size() + c];
        }
      });
    for (auto& th : pool) th.join();
    if (full) {
      flat.update(canon.data(), n * 65536 * 2);  // little-endian host
      for (size_t c = 0; c < n; ++c) {
        const std::string row = Sha256::of(canon.data() + c * 65536, 65536 * 2);
        tree.update(row.data(), row.size());
      }
    }
    const uint64_t mismatches_before = r.mismatches;
    for (size_t c = 0; c < n && !stopped; ++c) {
      const uint16_t* e = expected.data() + c * 65536;
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
          break;
        }
      }
    }
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
      add_cr(cols.data(), n, canon.data(), expected.data());
    else
      clean_blocks.push_back(b0);
  }
  const std::string names = op.inputs[0].name + ", " + op.inputs[1].name;
  if (full) {
    const std::string key = ctx.model.digest_key + "." + ref::dtype_name(d);
    if (stopped) {
      r.note = "digests not computed (stopped early)";
    } else if (ctx.model.digest_applies()) {
      const std::string hf = flat.hex(), ht = tree.hex();
      r.note = "SHA-256 of all 2^32 outputs " + hf;
      if (ctx.model.golden_flat) {
        const bool ok = hf == *ctx.model.golden_flat;
        r.note += (ok ? " equals " : " DIFFERS from ") + ctx.model.golden_label + "/digests.json " + key;
        if (!ok) t.failure(op.name + " " + ref::dtype_name(d) + " 2^32-domain digest " + hf + " expected " + *ctx.model.golden_flat);
      }
      r.note += "; tree digest " + ht;
      if (ctx.model.golden_tree) {
        const bool ok = ht == *ctx.model.golden_tree;
        r.note += (ok ? " equals " : " DIFFERS from ") + ctx.model.golden_label + " " + ctx.model.digest_key + "_tree." + ref::dtype_name(d);
        if (!ok) t.failure(op.name + " " + ref::dtype_name(d) + " 2^32-domain tree digest " + ht + " expected " + *ctx.model.golden_tree);
      }
    } else {
      r.note = "SHA-256 of all 2^32 outputs " + flat.hex() + " (the golden digests are of the cuda math model; not compared)";
    }
    r.scope = "the whole 2^32 (" + names + ") domain, canonical order (" + op.inputs[1].name + " outer, " +
              op.inputs[0].name + " inner)";
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
    CallSpec s = make_spec(ctx, rows, width);
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
            std::to_string(ctx.options.pdl_delay_ms) + " ms later";
}

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
    for (const auto& [p, pos] : places) {
      if (!go) break;
      CallSpec s = make_spec(ctx, rows, width);
      fill_random(ctx, s, rng);
      for (size_t k = 0; k < s.buffers.size(); ++k) {
        const size_t n = probe.buffers[k].size();  // one row of the buffer
        std::copy(probe.buffers[k].begin(), probe.buffers[k].end(),
                  s.buffers[k].begin() + long(op.buffer_broadcast(int(k)) ? 0 : size_t(p) * n));
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
            const uint16_t in[2] = {s.at(0, p, c), s.at(1, p, c)};
            t.failure(head_of(ctx, rows, width) + " probe at row " + std::to_string(p) + " (" + pos + ") " +
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
            " calls against the contract";
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
      CallSpec s = make_spec(ctx, rows, width);
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
      const uint16_t in[2] = {s.at(0, rr, cc), s.at(1, rr, cc)};
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
            " calls against the contract, one after another on one thread; " + ctx.runner.buffers_per_call();
}

void check_history(const CheckContext& ctx, CheckResult& r) {
  if (!ctx.other_model) throw std::logic_error("audit: the history class needs the other dtype's model");
  const CheckContext other{ctx.info, ctx.runner, *ctx.other_model, ctx.options, ctx.other_abi_dtype,
                           ctx.domain_biases, ctx.max_width};
  const CheckContext* ctxs[2] = {&ctx, &other};
  Tally mine(ctx, r), theirs(other, r);  // both write into r; each record names its dtype
  Tally* tallies[2] = {&mine, &theirs};
  const int64_t v = ctx.info.vector_elems();
  const int64_t v16 = std::lcm(v, int64_t(16));  // the first width: a multiple of 16 and of the vector
  const bool off16 = v % 16 != 0;                 // widths that are not multiples of 16 exist
  const int64_t max_vecs = std::max<int64_t>(2, 1024 / v);
  constexpr int kCalls = 64;
  std::mt19937_64 rng(class_seed(ctx, CheckClass::kHistory));
  int64_t rows = 1 + int64_t(rng() % 200);
  int64_t width = v16 * (1 + int64_t(rng() % uint64_t(std::max<int64_t>(1, 256 / v16))));
  const int64_t first_width = width;
  int calls[2] = {0, 0}, repeats = 0;
  for (int i = 0; i < kCalls; ++i) {
    int which = 0;
    if (i == 1) {
      which = 1;  // the other dtype at once, on the same shape
      ++repeats;
    } else if (i > 1) {
      which = int(rng() % 2);
      if (rng() % 3 == 0) {
        ++repeats;
      } else {
        rows = 1 + int64_t(rng() % 200);
        do width = v * (1 + int64_t(rng() % uint64_t(max_vecs)));
        while (off16 && width % 16 == 0);
      }
    }
    const CheckContext& c = *ctxs[which];
    CallSpec s = make_spec(c, rows, width);
    fill_random(c, s, rng);
    ++calls[which];
    const std::string label = "history call " + std::to_string(i) + " (" + ref::dtype_name(c.model.dtype) + ", " +
                              shape(rows, width) + ")";
    if (!run_valid(c, *tallies[which], s, label, std::nullopt, "call=" + std::to_string(i) + ",")) break;
  }
  const char* mine_name = ref::dtype_name(ctx.model.dtype);
  const char* theirs_name = ref::dtype_name(other.model.dtype);
  const int made = calls[0] + calls[1];
  r.scope = (made < kCalls ? std::to_string(made) + " of " + std::to_string(kCalls) + " calls (stopped early)"
                           : std::to_string(kCalls) + " calls") +
            " in one process, " + std::to_string(calls[0]) + " " + mine_name +
            " and " + std::to_string(calls[1]) + " " + theirs_name + " interleaved at random (the first " +
            mine_name + " at width " + std::to_string(first_width) + ", a multiple of 16, the second " +
            theirs_name + " on the same shape), then widths " +
            (off16 ? "not a multiple of 16 (" : "(every one a multiple of 16: the vector is " + std::to_string(v) +
                                                    " elements; ") +
            std::to_string(v) + ".." + std::to_string(max_vecs * v) + " in steps of " + std::to_string(v) +
            "), rows 1..200, " + std::to_string(repeats) +
            " calls repeating the previous shape with new contents; each output against its own dtype's model; " +
            ctx.runner.buffers_per_call();
}

void run_check_class(CheckClass c, const CheckContext& ctx, CheckResult& r) {
  switch (c) {
    case CheckClass::kRejection: return check_rejection(ctx, r);
    case CheckClass::kExtreme: return check_extreme(ctx, r);
    case CheckClass::kProperty: return check_property(ctx, r);
    case CheckClass::kWidths: return check_widths(ctx, r);
    case CheckClass::kShapes: return check_shapes(ctx, r);
    case CheckClass::kDomain: return check_domain(ctx, r);
    case CheckClass::kPdl: return check_pdl(ctx, r);
    case CheckClass::kBatch: return check_batch(ctx, r);
    case CheckClass::kRepeat: return check_repeat(ctx, r);
    case CheckClass::kHistory: return check_history(ctx, r);
  }
}

}  // namespace fuseproof::audit
