// check_classes.cpp: the check classes; each compares encodings (never values) against the reference model.
#include "audit/check_classes.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>

#include "audit/audit_inputs.h"
#include "audit/call_watch.h"
#include "audit/counter_patterns.h"
#include "common/testfloat_record.h"
#include "common/sha256.h"
#include "reference/domain_sweep.h"

namespace fuseproof::audit {

namespace {

/// Per-check comparison state: counts, the first records, the distinct-expected guard, the early stop.
class Tally {
 public:
  Tally(const CheckContext& ctx, CheckResult& r) : ctx_(ctx), r_(r), seen_(65536, false) {}

  /// Compares one element; false once the check should stop. `where` is called only for a record.
  template <class Where>
  bool element(const Where& where, uint16_t x, uint16_t b, uint16_t got, uint16_t expected) {
    ++r_.cases;
    if (!seen_[expected]) seen_[expected] = true, ++r_.distinct_expected;
    if (got != expected) {
      ++r_.mismatches;
      if (r_.records.size() < ctx_.options.records)
        r_.records.push_back(testfloat_record(ctx_.options.op, ctx_.model.dtype, where(), x, b, got, expected));
      return !stop();
    }
    return true;
  }
  /// Counts `n` elements compared equal in bulk.
  void equal(uint64_t n) { r_.cases += n; }
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
};

std::string shape(int64_t rows, int64_t width) {
  return "rows=" + std::to_string(rows) + ",width=" + std::to_string(width);
}

/// Runs a valid call and compares every element; checks the return code, the guards and the inputs.
/// False once the check should stop (or the backend faulted, which throws).
bool run_valid(const CheckContext& ctx, Tally& t, CallSpec spec, const std::string& label,
               std::optional<CallOutcome> pre_run = std::nullopt) {
  watch_label(label);
  const CallOutcome o = pre_run ? std::move(*pre_run) : ctx.runner.call(spec);
  if (!o.fault.empty()) {
    if (!o.subject_fault) throw std::runtime_error("audit: backend failure in " + label + ": " + o.fault);
    t.fault("CUDA error in call " + label + " [" + describe_call(spec) + "]: " + o.fault);
    return false;
  }
  const std::string head = ctx.options.op + " " + ref::dtype_name(ctx.model.dtype) + " [" + shape(spec.rows, spec.width) + "]";
  if (o.rc != 0) {
    t.failure(head + " valid call rejected: " + o.message, uint64_t(spec.rows * spec.width));
    return !t.stop();
  }
  if (o.guard_writes) t.failure(head + " wrote " + std::to_string(o.guard_writes) + " guard bytes outside out", o.guard_writes);
  if (!o.inputs_intact) t.failure(head + " modified x or bias");
  for (int64_t r = 0; r < spec.rows; ++r)
    for (int64_t c = 0; c < spec.width; ++c) {
      const size_t i = size_t(r * spec.width + c);
      const uint16_t x = spec.x[i], b = spec.bias[size_t(c)];
      if (!t.element([&] { return "r=" + std::to_string(r) + ",c=" + std::to_string(c); }, x, b, o.out[i],
                     ctx.model.expected(x, b)))
        return false;
    }
  return !t.stop();
}

CallSpec make_spec(const CheckContext& ctx, int64_t rows, int64_t width) {
  CallSpec s;
  s.rows = rows;
  s.width = width;
  s.dtype = ctx.abi_dtype;
  s.x.resize(size_t(rows * width));
  s.bias.resize(size_t(width));
  s.out_elems = size_t(rows * width);
  return s;
}

void fill_random(const CheckContext& ctx, CallSpec& s, std::mt19937_64& rng) {
  for (auto& v : s.x) v = random_pattern(ctx.model.dtype, rng);
  for (auto& v : s.bias) v = random_pattern(ctx.model.dtype, rng);
}

uint64_t class_seed(const CheckContext& ctx, CheckClass c) {
  return ctx.options.seed * 0x9E3779B97F4A7C15ull + uint64_t(c) * 1000003u + uint64_t(ctx.model.dtype) * 7919u;
}

}  // namespace

void check_rejection(const CheckContext& ctx, CheckResult& r) {
  const int64_t v = ctx.info.vector_elems();
  struct Probe {
    std::string what;
    CallSpec spec;
    bool may_accept = false;  // an empty call may be a no-op instead of a rejection; it must still write nothing
  };
  std::vector<Probe> probes;
  std::mt19937_64 rng(class_seed(ctx, CheckClass::kRejection));
  auto base = [&](int64_t rows, int64_t width, size_t elems) {
    CallSpec s;
    s.rows = rows;
    s.width = width;
    s.dtype = ctx.abi_dtype;
    s.x.resize(elems);
    s.bias.resize(std::max<size_t>(size_t(std::max<int64_t>(width, 0)), 1));
    s.out_elems = elems;
    for (auto& e : s.x) e = random_pattern(ctx.model.dtype, rng);
    for (auto& e : s.bias) e = random_pattern(ctx.model.dtype, rng);
    return s;
  };
  // Widths that are not multiples of the vector; the buffers hold exactly rows * width, so an honest elementwise
  // kernel stays in bounds and a vector kernel that rounds up runs into the guards.
  std::vector<int64_t> bad_widths{1, v - 1, v + 1, v + v / 2, 3 * v - 1, 64 * v + 1};
  std::sort(bad_widths.begin(), bad_widths.end());
  bad_widths.erase(std::unique(bad_widths.begin(), bad_widths.end()), bad_widths.end());
  for (int64_t w : bad_widths) {
    if (w < 1 || w % v == 0) continue;
    for (int64_t rows : {int64_t(1), int64_t(3)})
      probes.push_back({"width " + std::to_string(w) + " not a multiple of " + std::to_string(v) + ", rows " +
                            std::to_string(rows), base(rows, w, size_t(rows * w))});
  }
  probes.push_back({"width 0", base(2, 0, 16), true});
  probes.push_back({"width -" + std::to_string(v), base(2, -v, 16)});
  probes.push_back({"rows 0", base(0, 4 * v, 16), true});
  probes.push_back({"rows -1", base(-1, 4 * v, 16)});
  probes.push_back({"rows * width overflows int64", base(INT64_MAX / 4, 4 * v, size_t(4 * v))});
  for (int32_t dt : {int32_t(FUSEPROOF_DTYPE_FLOAT32), int32_t(FUSEPROOF_DTYPE_INT16), int32_t(-1), int32_t(7)}) {
    Probe p{"dtype code " + std::to_string(dt), base(2, 4 * v, size_t(8 * v))};
    p.spec.dtype = dt;
    probes.push_back(p);
  }
  for (int k = 0; k < 3; ++k) {
    Probe p{std::string(k == 0 ? "out" : k == 1 ? "x" : "bias") + " null", base(2, 4 * v, size_t(8 * v))};
    (k == 0 ? p.spec.null_out : k == 1 ? p.spec.null_x : p.spec.null_bias) = true;
    probes.push_back(p);
  }
  if (ctx.info.vector_bytes > 2) {
    for (int k = 0; k < 3; ++k) {
      Probe p{std::string(k == 0 ? "out" : k == 1 ? "x" : "bias") + " misaligned by 2 bytes",
              base(2, 4 * v, size_t(8 * v))};
      (k == 0 ? p.spec.out_misalign : k == 1 ? p.spec.x_misalign : p.spec.bias_misalign) = 2;
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
    const std::string head = ctx.options.op + " " + ref::dtype_name(ctx.model.dtype) + " reject " + p.what + " [" +
                             shape(p.spec.rows, p.spec.width) + ",dtype=" + std::to_string(p.spec.dtype) + "]: ";
    std::string why;
    if (o.rc == 0 && !p.may_accept) why += "returned 0 (accepted); ";
    if (o.rc != 0 && (o.message.empty() || o.message.find('\n') != std::string::npos))
      why += "rejection message must be one non-empty line; ";
    if (written) why += "wrote " + std::to_string(written) + " of " + std::to_string(o.out.size()) + " out elements; ";
    if (o.guard_writes) why += "wrote " + std::to_string(o.guard_writes) + " guard bytes; ";
    if (!o.inputs_intact) why += "modified x or bias; ";
    if (!why.empty()) t.failure(head + why.substr(0, why.size() - 2));
  }
  r.distinct_expected = 0;
  r.scope = std::to_string(probes.size()) + " invalid calls (widths not a multiple of " + std::to_string(v) +
            ", empty and negative shapes, int64 overflow, 4 invalid dtype codes, null and misaligned pointers), out "
            "poisoned with 0xFFA5 and " + std::to_string(kGuardElems) + " guard elements around every buffer";
  if (not_applicable)
    r.scope += "; " + std::to_string(not_applicable) + " of them not applicable to this subject (not counted)";
}

void check_extreme(const CheckContext& ctx, CheckResult& r) {
  const ref::Dtype d = ctx.model.dtype;
  const int64_t v = ctx.info.vector_elems();
  Tally t(ctx, r);
  // Every pair of extreme patterns: x down the rows, bias across the columns (padded to the vector by repetition).
  const std::vector<uint16_t> s = extreme_patterns(d);
  const int64_t width = (int64_t(s.size()) + v - 1) / v * v;
  CallSpec spec = make_spec(ctx, int64_t(s.size()), width);
  for (size_t i = 0; i < s.size(); ++i)
    for (int64_t c = 0; c < width; ++c) spec.x[i * size_t(width) + size_t(c)] = s[i];
  for (int64_t c = 0; c < width; ++c) spec.bias[size_t(c)] = s[size_t(c) % s.size()];
  if (!run_valid(ctx, t, spec, "extreme pairs")) return;
  // Ties: x + bias exactly halfway between two patterns (and one step either side), every binade.
  uint64_t tie_cases = 0;
  for (int e = min_normal_exponent(d); e <= max_exponent(d); ++e) {
    const std::vector<uint16_t> b = tie_biases(d, e);
    if (b.empty()) continue;
    const std::vector<uint16_t> xs = binade_patterns(d, e);
    const int64_t w = (int64_t(b.size()) + v - 1) / v * v;
    CallSpec ts = make_spec(ctx, int64_t(xs.size()), w);
    for (size_t i = 0; i < xs.size(); ++i)
      for (int64_t c = 0; c < w; ++c) ts.x[i * size_t(w) + size_t(c)] = xs[i];
    for (int64_t c = 0; c < w; ++c) ts.bias[size_t(c)] = b[size_t(c) % b.size()];
    tie_cases += uint64_t(xs.size()) * uint64_t(w);
    if (!run_valid(ctx, t, ts, "rounding ties")) return;
  }
  r.scope = std::to_string(s.size()) + " x " + std::to_string(s.size()) +
            " pairs of extreme patterns (NaN payloads, +-Inf, subnormals, +-0, max finite) and " +
            std::to_string(tie_cases) + " rounding ties of x + bias and their neighbours in every binade";
}

void check_property(const CheckContext& ctx, CheckResult& r) {
  const int64_t v = ctx.info.vector_elems();
  Tally t(ctx, r);
  const uint64_t seed = class_seed(ctx, CheckClass::kProperty);
  std::mt19937_64 rng(seed);
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
            "), weighted random patterns, std::mt19937_64 seeded from --seed " + std::to_string(ctx.options.seed);
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

void check_shapes(const CheckContext& ctx, CheckResult& r) {
  const ref::Dtype d = ctx.model.dtype;
  const bool bf16 = d == ref::Dtype::kBf16;
  const int64_t v = ctx.info.vector_elems();
  std::vector<Shape> shapes;
  if (ctx.options.default_shapes) {
    if (ctx.info.cuda()) {
      shapes = model_shapes("wan2.2");
      // 2^31 / 13,824 = 155,344.6: one more row puts the call above 2^31 elements.
      shapes.push_back({155345, 13824, "above 2^31 elements (2,147,489,280)"});
    } else {
      shapes.push_back({65537, 8 * v, "rows above 65,535"});
      shapes.push_back({100003, v, "rows above 65,535 at the narrowest width"});
    }
  }
  shapes.insert(shapes.end(), ctx.options.shapes.begin(), ctx.options.shapes.end());
  Tally t(ctx, r);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::string> ran, not_ran;
  uint64_t biggest = 0;
  for (size_t k = 0; k < shapes.size() && !t.stop() && r.fault.empty(); ++k) {
    const Shape& sh = shapes[k];
    const std::string name = std::to_string(sh.rows) + "x" + std::to_string(sh.width);
    if (sh.width % v != 0) {
      not_ran.push_back(name + " (width not a multiple of " + std::to_string(v) + ")");
      continue;
    }
    const uint64_t elems = uint64_t(sh.rows) * uint64_t(sh.width);
    const uint64_t need = elems * 4 + (uint64_t(64) << 20), have = ctx.runner.memory_available();
    if (have && need > have) {
      char b[160];
      std::snprintf(b, sizeof b, "%s (%s: needs %.1f GiB, %.1f GiB free)", name.c_str(), sh.why.c_str(),
                    double(need) / double(1ull << 30), double(have) / double(1ull << 30));
      not_ran.push_back(b);
      continue;
    }
    LargeSpec spec{sh.rows, sh.width, ctx.abi_dtype, class_seed(ctx, CheckClass::kShapes) + k};
    std::vector<uint16_t> bias(size_t(sh.width)), expected;
    for (int64_t c = 0; c < sh.width; ++c) bias[size_t(c)] = counter_pattern(bf16, spec.seed ^ kBiasSalt, uint64_t(c));
    const std::string head = ctx.options.op + " " + ref::dtype_name(d) + " [rows=" + std::to_string(sh.rows) +
                             ",width=" + std::to_string(sh.width) + "]";
    bool go_on = true;
    // Expected rows computed in parallel where the output arrives; compared in order.
    const ChunkCheck check = [&](int64_t row0, int64_t nrows, const uint16_t* out) {
      const size_t n = size_t(nrows) * size_t(sh.width);
      expected.resize(n);
      const uint64_t first = uint64_t(row0) * uint64_t(sh.width);
      std::vector<std::thread> pool;
      for (unsigned w = 0; w < threads; ++w)
        pool.emplace_back([&, w] {
          const size_t lo = n * w / threads, hi = n * (w + 1) / threads;
          for (size_t i = lo; i < hi; ++i)
            expected[i] = ctx.model.expected(counter_pattern(bf16, spec.seed, first + i), bias[(first + i) % size_t(sh.width)]);
        });
      for (auto& th : pool) th.join();
      for (size_t i = 0; i < n; i += 61) t.seen(expected[i]);
      if (std::memcmp(expected.data(), out, n * 2) == 0) {
        t.equal(n);
        return true;
      }
      for (size_t i = 0; i < n; ++i) {
        const uint64_t g = first + i;
        const int64_t row = int64_t(g / uint64_t(sh.width)), col = int64_t(g % uint64_t(sh.width));
        if (!t.element([&] { return "r=" + std::to_string(row) + ",c=" + std::to_string(col); },
                       counter_pattern(bf16, spec.seed, g), bias[size_t(col)], out[i], expected[i]))
          return go_on = false;
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
    if (o.inputs_changed) t.failure(head + " modified " + std::to_string(o.inputs_changed) + " elements of x or bias");
    ran.push_back(name + " (" + sh.why + ")");
    biggest = std::max(biggest, elems);
    (void)go_on;
  }
  std::string scope = std::to_string(ran.size()) + " shape(s) at full size";
  for (const auto& s : ran) scope += "; " + s;
  scope += "; largest call " + std::to_string(biggest) + " elements" + (biggest > (uint64_t(1) << 31) ? " (above 2^31)" : "");
  scope += "; inputs from the counter generator, output streamed back and compared chunk by chunk";
  r.scope = scope;
  if (!not_ran.empty()) {
    r.note = "not run:";
    for (const auto& s : not_ran) r.note += " " + s + ";";
  }
}

void check_domain(const CheckContext& ctx, CheckResult& r) {
  const ref::Dtype d = ctx.model.dtype;
  const int64_t v = ctx.info.vector_elems();
  const bool full = ctx.domain_biases >= 65536;
  std::vector<uint16_t> biases;
  if (full) {
    biases.resize(65536);
    for (uint32_t i = 0; i < 65536; ++i) biases[i] = uint16_t(i);
  } else {
    biases = domain_subset_biases(d, ctx.domain_biases, class_seed(ctx, CheckClass::kDomain));
  }
  Tally t(ctx, r);
  Sha256 sha;
  const size_t block = full ? 256 : 128;
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<uint16_t> expected;
  bool stopped = false;
  for (size_t b0 = 0; b0 < biases.size() && !stopped; b0 += block) {
    const size_t n = std::min(block, biases.size() - b0);
    std::vector<uint16_t> cols(biases.begin() + long(b0), biases.begin() + long(b0 + n));
    while (int64_t(cols.size()) % v) cols.push_back(cols[cols.size() % n]);  // pad to the vector; padding not compared
    watch_label("domain block of biases " + std::to_string(b0) + ".." + std::to_string(b0 + n - 1));
    const DomainBlock got = ctx.runner.domain_block(ctx.abi_dtype, cols);
    if (!got.fault.empty()) {
      if (!got.subject_fault) throw std::runtime_error("audit: backend failure in the domain class: " + got.fault);
      t.fault("CUDA error in domain block of biases " + std::to_string(b0) + ".." + std::to_string(b0 + n - 1) +
              " [rows=65536,width=" + std::to_string(cols.size()) + "]: " + got.fault);
      stopped = true;
      break;
    }
    if (got.rc != 0) {
      t.failure(ctx.options.op + " " + ref::dtype_name(d) + " [rows=65536,width=" + std::to_string(cols.size()) +
                    "] valid call rejected: " + got.message,
                uint64_t(n) * 65536);
      break;
    }
    // The reference rows, computed in parallel; then compared (and hashed) in canonical order.
    expected.resize(n * 65536);
    std::vector<std::thread> pool;
    for (unsigned k = 0; k < threads; ++k)
      pool.emplace_back([&, k] {
        for (size_t c = k; c < n; c += threads)
          ref::sweep_row(d, ctx.model.gelu_table.data(), ref::NanPolicy::kCudaCvtRn, cols[c], expected.data() + c * 65536);
      });
    for (auto& th : pool) th.join();
    if (full) sha.update(got.out_canonical.data(), n * 65536 * 2);  // little-endian host
    for (size_t c = 0; c < n && !stopped; ++c) {
      const uint16_t* e = expected.data() + c * 65536;
      const uint16_t* g = got.out_canonical.data() + c * 65536;
      if (std::memcmp(e, g, 65536 * 2) == 0) {
        r.cases += 65536;
        if (r.distinct_expected < 65536)
          for (uint32_t x = 0; x < 65536; x += 7) t.seen(e[x]);
        continue;
      }
      for (uint32_t x = 0; x < 65536; ++x)
        if (!t.element([&] { return "x=all,b=" + std::to_string(c + b0); }, uint16_t(x), cols[c], g[x], e[x])) {
          stopped = true;
          break;
        }
    }
  }
  if (full) {
    const std::string hex = sha.hex();
    if (stopped) {
      r.note = "digest not computed (stopped early)";
    } else if (ctx.model.digest_applies) {
      const bool ok = hex == ctx.model.golden_digest;
      r.note = "SHA-256 of all 2^32 outputs " + hex + (ok ? " equals" : " DIFFERS from") +
               " golden/sm_90/digests.json bias_gelu_tanh." + ref::dtype_name(d);
      if (!ok) t.failure(ctx.options.op + " " + ref::dtype_name(d) + " 2^32-domain digest " + hex + " expected " +
                         ctx.model.golden_digest);
    } else {
      r.note = "SHA-256 of all 2^32 outputs " + hex + " (the golden digest is of the CUDA tanh model; not compared)";
    }
    r.scope = "the whole 2^32 (x, bias) domain, canonical order (bias outer, x inner)";
  } else {
    r.scope = "stratified subset: all 65536 x for " + std::to_string(biases.size()) +
              " biases (every extreme pattern, one per binade and sign, the rest uniform random) = " +
              std::to_string(uint64_t(biases.size()) * 65536) + " of 2^32 pairs";
  }
}

void check_pdl(const CheckContext& ctx, CheckResult& r) {
  if (!ctx.info.cuda()) {
    r.status = "skipped";
    r.note = "host-memory plugin: no stream ordering to check";
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
    std::vector<uint16_t> stale_x(s.x), stale_b(s.bias);
    for (auto& e : stale_x) e = uint16_t(e ^ 0x0A5A);
    for (auto& e : stale_b) e = uint16_t(e ^ 0x05A5);
    watch_label("pdl trial " + std::to_string(trial));
    auto o = ctx.runner.call_after_producer(s, stale_x, stale_b, ctx.options.pdl_delay_ms);
    if (!run_valid(ctx, t, s, "pdl trial " + std::to_string(trial), std::move(o))) break;
  }
  r.scope = "3 launches of " + std::to_string(rows) + " x " + std::to_string(width) +
            " after a producer kernel on the same stream that releases dependents at once "
            "(griddepcontrol.launch_dependents) and writes x and bias " +
            std::to_string(ctx.options.pdl_delay_ms) + " ms later";
}

}  // namespace fuseproof::audit
