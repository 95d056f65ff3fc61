// check_stages.cpp: the stage-exhaustive class: every rounding boundary of a 3-input eager composition over all pairs
// of its operands' reachable patterns.
#include "audit/check_stages.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>

#include "audit/audit_inputs.h"
#include "audit/call_watch.h"
#include "audit/check_support.h"
#include "audit/kernel_runner.h"
#include "common/golden_library.h"
#include "common/number_text.h"
#include "common/parallel_for.h"
#include "common/sha256.h"
#include "common/tree_digest.h"

namespace fuseproof::audit {

using namespace detail;

namespace {

/// Elements of one call at most: 64 M on a GPU (2^32 pairs in 64 calls), 1 M in host memory (buffers of 2 MiB, which
/// the allocator reuses from call to call; 16 M ones were mapped afresh for every call, and the page faults cost a
/// quarter of the class's time).
constexpr uint64_t kCudaCallElems = uint64_t(1) << 26;
constexpr uint64_t kHostCallElems = uint64_t(1) << 20;
/// A stage of at most this many pairs runs in full whatever the subset (the unary step: 65,536 pairs).
constexpr uint64_t kAlwaysFullPairs = uint64_t(1) << 20;

std::string hex4(uint16_t v) {
  char b[8];
  std::snprintf(b, sizeof b, "0x%04X", v);
  return b;
}

int64_t pad_to(int64_t n, int64_t v) { return (n + v - 1) / v * v; }

/// Whether the plan's results do not depend on the math model (no activation node): the golden digests, captured on
/// the device, then apply whatever the model.
bool math_free(const ref::OpPlan& plan) {
  for (const ref::Node& n : plan.op().contract(plan.contract())->nodes)
    if (n.op == ref::NodeOp::kActivation) return false;
  return true;
}

/// "all 65,536 x", "all 33,796 reachable round_T(1 + scale) (each through its first scale)", "1 = 0x3F80", or for a
/// subset "64 of the 65,536 y".
std::string operand_words(const ref::Stage::Operand& o, size_t used, bool subset) {
  const size_t n = o.values.size();
  const std::string what = std::string(n < 65536 && o.depends ? "reachable " : "") + o.text;
  if (n == 1 && !o.depends) return o.text + " = " + hex4(o.values[0]);  // a constant
  std::string s = subset ? grouped(used) + " of the " + grouped(n) + " " + what : "all " + grouped(n) + " " + what;
  if (!o.how.empty() && o.how != "every " + o.text) s += " (" + o.how + ")";
  return s;
}

}  // namespace

std::vector<size_t> stage_subset(ref::Dtype d, const std::vector<uint16_t>& values, uint32_t count, uint64_t seed) {
  if (count >= values.size()) {
    std::vector<size_t> all(values.size());
    std::iota(all.begin(), all.end(), size_t(0));
    return all;
  }
  std::mt19937_64 rng(seed);
  std::set<size_t> s;
  for (uint16_t e : extreme_patterns(d)) {
    const auto it = std::lower_bound(values.begin(), values.end(), e);
    if (it != values.end() && *it == e) s.insert(size_t(it - values.begin()));
  }
  // Ascending patterns group by sign and exponent (the bits above the mantissa): one random member of each group, of
  // as many groups (chosen at random) as the count leaves room for.
  const int mant = d == ref::Dtype::kBf16 ? 7 : 10;
  std::vector<size_t> picks;
  for (size_t g = 0, i = 1; i <= values.size(); ++i)
    if (i == values.size() || values[i] >> mant != values[g] >> mant) {
      picks.push_back(g + size_t(rng() % (i - g)));
      g = i;
    }
  std::shuffle(picks.begin(), picks.end(), rng);
  for (size_t p : picks)
    if (s.size() < count) s.insert(p);
  while (s.size() < count) s.insert(size_t(rng() % values.size()));
  return {s.begin(), s.end()};
}

namespace {

/// One stage made and compared on the device (KernelRunner::calls_compared, kWitness): the host path's calls (the
/// same layout, b values and sampling of the distinct outputs), two a synchronisation, each output compared there
/// with the stage's table (OpPlan::stage_row per b value). As the table is built, the reference's rows are hashed:
/// with `tree`, each row on the worker that made it (the tree digest, golden's "<key>.stage<k>_tree"); else in
/// canonical order on one thread (the flat SHA-256 of "<key>.stage<k>", which then sets the table's pace: one
/// thread's SHA-256 rate over up to 8 GiB).
struct StageOnDevice {
  bool clean = false;            ///< every call accepted, nothing written outside out, inputs intact, no mismatch
  std::string fault;             ///< a CUDA error of the subject's (recorded in the tally)
  std::string reference_digest;  ///< the reference's outputs' digest (tree or flat, as asked), when clean
  std::string scope;             ///< where the pairs were compared, in words
};

StageOnDevice stage_on_device(const CheckContext& ctx, Tally& t, const ref::Stage& st, int k,
                              const std::vector<size_t>& bs, size_t b_per_call, bool tree) {
  StageOnDevice out;
  const ref::OpSpec& op = *ctx.model.op;
  const ref::OpPlan& plan = *ctx.model.plan;
  const int64_t v = ctx.info.vector_elems();
  const size_t na = st.a.values.size(), nb = st.b.values.size();
  if (na > 65536 || nb > 65536 || op.inputs.size() > size_t(ref::kMaxOpInputs)) return out;
  WitnessPairs wp;
  wp.na = uint32_t(na);
  wp.b_bits = st.b.depends;
  wp.a.resize(na);
  wp.b.resize(nb);
  for (size_t ia = 0; ia < na; ++ia) wp.a[ia] = st.inputs(ia, 0);  // b's bits are overwritten by the device
  for (size_t ib = 0; ib < nb; ++ib) wp.b[ib] = st.inputs(0, ib);
  for (size_t j : bs) wp.b_index.push_back(uint32_t(j));
  // The reference's rows (b ascending, as bs lists them in full), hashed as the table is built.
  Sha256 digest;
  std::vector<std::string> row_hex(tree ? nb : 0);
  std::atomic<uint32_t> hashed{0};
  const RowFn row = [&](uint16_t ib, uint16_t* o) {
    if (ib < nb) plan.stage_row(st, ib, o);
    std::fill(o + (ib < nb ? na : 0), o + 65536, uint16_t(0));
  };
  const SweepConsumer in_order = [&](uint32_t first, uint32_t count, const uint16_t* rows) {
    for (uint32_t i = 0; i < count; ++i)
      if (first + i < nb) {
        digest.update(rows + size_t(i) * 65536, na * 2);  // little-endian
        ++hashed;
      }
  };
  const SweepConsumer tap = [&](uint32_t first, uint32_t count, const uint16_t* rows) {
    for (uint32_t i = 0; i < count; ++i)
      if (first + i < nb) {
        row_hex[first + i] = Sha256::of(rows + size_t(i) * 65536, na * 2);  // each row its own slot
        ++hashed;
      }
  };
  ExpectedTable table{ctx.model.digest_key + "." + ref::dtype_name(ctx.model.dtype) + ".math" +
                          std::to_string(int(ctx.model.math)) + ".stage" + std::to_string(k),
                      row, nullptr, nullptr};
  if (tree) table.tap = tap;
  else table.in_order = in_order;
  constexpr size_t kCallsPerSync = 2;
  const std::string name = "stage " + std::to_string(k) + " " + st.text;
  // The host path's distinct-output guard samples every 61st pair of a call above 2^22 pairs, every pair of a
  // smaller one: a batch holds calls of one kind, so that it samples the same pairs.
  const auto stride_of = [](size_t n) { return n > (size_t(1) << 22) ? 61 : 1; };
  std::vector<uint8_t> seen(65536, 0);
  uint64_t calls = 0, compared = 0;
  for (size_t j0 = 0; j0 < bs.size();) {
    std::vector<LargeSpec> specs;
    Sampling sampling;
    for (size_t c = 0; c < kCallsPerSync && j0 < bs.size(); ++c) {
      const size_t nbj = std::min(b_per_call, bs.size() - j0), n = nbj * na;
      if (c == 0) sampling.index_every = stride_of(n);
      else if (stride_of(n) != sampling.index_every) break;
      const int64_t width = int64_t(na) % v == 0 ? int64_t(na) : pad_to(int64_t(std::min<size_t>(n, 65536)), v);
      LargeSpec s{&op, (int64_t(n) + width - 1) / width, width, ctx.abi_dtype, class_seed(ctx, CheckClass::kStages), 1};
      s.patterns = Patterns::kWitness;
      s.witness = &wp;
      s.pairs = n;
      s.b_first = uint32_t(j0);
      specs.push_back(s);
      j0 += nbj;
    }
    watch_label(name + ", " + st.b.text + " values " + std::to_string(specs.front().b_first) + ".." +
                std::to_string(j0 - 1) + " of " + std::to_string(bs.size()) + " on the device");
    std::vector<DeviceComparison> cmps;
    const std::optional<std::vector<LargeOutcome>> got = ctx.runner.calls_compared(specs, table, sampling, &cmps);
    if (!got) return out;
    if (!(*got)[0].fault.empty()) {
      const LargeOutcome& f = (*got)[0];
      if (!f.subject_fault) throw std::runtime_error("audit: backend failure in the stages class: " + f.fault);
      out.fault = "CUDA error in " + name + " on the device (" + std::to_string(specs.size()) +
                  " calls back to back, one synchronisation): " + f.fault;
      t.fault(out.fault);
      return out;
    }
    for (size_t i = 0; i < specs.size(); ++i) {
      const LargeOutcome& o = (*got)[i];
      if (o.rc != 0 || o.guard_writes || o.inputs_changed || cmps[i].compared != specs[i].pairs || cmps[i].mismatches)
        return out;
      for (size_t e = 0; e < 65536; ++e) seen[e] |= cmps[i].seen[e];
      ++calls;
      compared += specs[i].pairs;
    }
  }
  if (hashed != bs.size()) return out;  // the table was not built here: no digest of the reference
  t.equal(compared);
  for (uint32_t e = 0; e < 65536; ++e)
    if (seen[e]) t.seen(uint16_t(e));
  out.clean = true;
  out.reference_digest = tree ? tree_of_row_digests(row_hex) : digest.hex();
  out.scope = std::to_string(calls) + " calls made on the device (inputs written there from the witnesses) and " +
              "compared there with the stage's table (OpPlan::stage_row)";
  return out;
}

}  // namespace

void check_stage_list(const CheckContext& ctx, const std::vector<ref::Stage>& stages, CheckResult& r) {
  const ref::Dtype d = ctx.model.dtype;
  const ref::OpSpec& op = *ctx.model.op;
  const ref::OpPlan& plan = *ctx.model.plan;
  const int n_in = int(op.inputs.size());
  const int64_t v = ctx.info.vector_elems();
  const uint64_t call_cap = ctx.info.cuda() ? kCudaCallElems : kHostCallElems;
  const bool compare_golden = (ctx.model.digest_applies() || math_free(plan)) && !ctx.options.arch.empty();
  const GoldenArch golden(ctx.options.golden_dir.empty() ? default_golden_dir() : ctx.options.golden_dir,
                          ctx.options.golden_build_dir.empty() ? default_golden_build_dir() : ctx.options.golden_build_dir,
                          ctx.options.arch);
  Tally t(ctx, r);
  std::vector<std::string> scopes, notes, unreached;
  bool stopped = false;
  for (size_t k = 0; k < stages.size() && !stopped; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    const ref::Stage& st = stages[k];
    const size_t na = st.a.values.size(), nb = st.b.values.size();
    const std::string name = "stage " + std::to_string(k) + " " + st.text;
    if (na == 0 || nb == 0) throw std::logic_error("audit: " + op.name + " " + name + " has an operand of no values");
    const bool full = ctx.domain_biases >= nb || st.pairs() <= kAlwaysFullPairs;
    const std::vector<size_t> bs =
        stage_subset(d, st.b.values, full ? uint32_t(nb) : ctx.domain_biases,
                     class_seed(ctx, CheckClass::kStages) + k);
    const uint64_t pairs = uint64_t(bs.size()) * na;
    const size_t b_per_call = std::max<size_t>(1, size_t(call_cap / na));
    Sha256 subject_digest, reference_digest;
    std::vector<uint16_t> want;
    CallSpec spec;  // the buffers of one shape, every element rewritten for each call
    // A whole stage of a CUDA subject is made and compared on the device (stage_on_device); a stage found not clean
    // there, or one the runner cannot take, runs below on the host path, which gives the exact counts and records.
    std::string device_digest, device_scope;  // the reference's digest, when the device pass was clean
    const std::string key = golden_stage_digest_key(ctx.model.digest_key, int(k));
    const bool on_device = ctx.options.device_compare && ctx.info.cuda() && full && st.pairs() > kAlwaysFullPairs;
    // The device pass hashes the reference's rows for a tree digest where golden has the stage's tree (or where no
    // golden digest is compared), on every core; else the flat SHA-256 golden has, on one thread.
    const std::optional<std::string> golden_tree =
        on_device && compare_golden ? golden.digest(key + "_tree", d) : std::optional<std::string>();
    const bool device_tree = !compare_golden || golden_tree.has_value();
    if (on_device) {
      const StageOnDevice dev = stage_on_device(ctx, t, st, int(k), bs, b_per_call, device_tree);
      if (!dev.fault.empty()) {
        stopped = true;
        scopes.push_back(name + " (stopped by a CUDA error)");
        break;
      }
      if (dev.clean) {
        device_digest = dev.reference_digest;
        device_scope = dev.scope;
      }
    }
    for (size_t j0 = 0; j0 < bs.size() && !stopped && device_digest.empty(); j0 += b_per_call) {
      const size_t nbj = std::min(b_per_call, bs.size() - j0);
      const size_t n = nbj * na;
      // Pairs in canonical order, flat: a row per b value when a's count fits the vector, else rows of up to 65,536
      // elements; the padding repeats the first pairs and is not compared. Every input is per element (group_rows 1),
      // so any combination of witnesses is one element.
      const int64_t width = int64_t(na) % v == 0 ? int64_t(na) : pad_to(int64_t(std::min<size_t>(n, 65536)), v);
      const int64_t rows = (int64_t(n) + width - 1) / width;
      if (spec.rows != rows || spec.width != width) spec = make_call(op, rows, width, ctx.abi_dtype, 1);
      want.resize(n);
      // Every view of a call with group_rows 1 is [rows, width] row-major: element i of input q is data[q][i].
      std::array<uint16_t*, ref::kMaxOpInputs> data{};
      for (int q = 0; q < n_in; ++q) {
        const InputView& iv = spec.inputs[size_t(q)];
        if (iv.stride[0] != width || iv.stride[1] != 1)
          throw std::logic_error("audit: stages: input " + op.inputs[size_t(q)].name + " is not per element");
        data[size_t(q)] = spec.buffers[size_t(iv.buffer)].data() + iv.offset;
      }
      parallel_for(size_t(rows * width), [&](unsigned, size_t lo, size_t hi) {
        for (size_t i = lo; i < hi; ++i) {
          const size_t p = i < n ? i : i % n;
          const auto in = st.inputs(p % na, bs[j0 + p / na]);
          for (int q = 0; q < n_in; ++q) data[size_t(q)][i] = in[size_t(q)];
        }
      }, kParallelGrain);
      // The expected outputs, a row of pairs per b value: the step's own rounding, which the stage's neutral inputs
      // pass to the output unchanged (verified bitwise in the stage analysis; stage_row equals eval on the pair's inputs,
      // property_tests/reference/op_stages_test.cpp). 1.9 ns a pair against eval's 9.5-24 for a 3-input composition,
      // which made the class CPU-bound on an H200 (docs/OPS.md, Stages: each rounding boundary, exhaustively).
      parallel_for(n, [&](unsigned, size_t lo, size_t hi) {  // whole rows: those that start in [lo, hi)
        for (size_t jb = (lo + na - 1) / na; jb * na < hi; ++jb) plan.stage_row(st, bs[j0 + jb], want.data() + jb * na);
      }, kParallelGrain);
      const std::string label = name + ", " + st.b.text + " values " + std::to_string(j0) + ".." +
                                std::to_string(j0 + nbj - 1) + " of " + std::to_string(bs.size());
      watch_label(label);
      const CallOutcome got = ctx.runner.call(spec);
      if (!got.fault.empty()) {
        if (!got.subject_fault) throw std::runtime_error("audit: backend failure in the stages class: " + got.fault);
        t.fault("CUDA error in " + label + " [" + describe_call(spec) + "]: " + got.fault);
        stopped = true;
        break;
      }
      if (!outcome_ok(ctx, t, spec, got)) {
        stopped = true;
        break;
      }
      // The block's digests are hashed by two workers while this one compares (they only read).
      const uint16_t* subject = got.out.data();
      const uint16_t* reference = want.data();
      run_workers(full ? 3 : 1, [&](unsigned w) {
        if (w == 1) return subject_digest.update(subject, n * 2);  // little-endian
        if (w == 2) return reference_digest.update(reference, n * 2);
        const size_t stride = n > (size_t(1) << 22) ? 61 : 1;  // the distinct-output guard needs no more
        for (size_t i = 0; i < n; i += stride) t.seen(want[i]);
        for (size_t jb = 0; jb < nbj && !stopped; ++jb) {
          const uint16_t* g = got.out.data() + jb * na;
          const uint16_t* e = want.data() + jb * na;
          if (std::memcmp(g, e, na * 2) == 0) {
            t.equal(na);
            continue;
          }
          const size_t ib = bs[j0 + jb];
          for (size_t ia = 0; ia < na; ++ia) {
            const auto in = st.inputs(ia, ib);
            const auto where = [&] {
              return "stage=" + std::to_string(k) + ",a=" + hex4(st.a.values[ia]) + ",b=" + hex4(st.b.values[ib]);
            };
            if (!t.element(where, in.data(), g[ia], e[ia])) {
              stopped = true;
              break;
            }
          }
        }
      });
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::string scope = name + ": " + operand_words(st.a, na, false) + " for " +
                        operand_words(st.b, bs.size(), !full) + " = " + grouped(pairs) + " pairs";
    if (!full) {
      const int mant = d == ref::Dtype::kBf16 ? 7 : 10;
      std::set<int> all_groups, groups;
      for (uint16_t b : st.b.values) all_groups.insert(b >> mant);
      for (size_t ib : bs) groups.insert(st.b.values[ib] >> mant);
      scope += " of " + grouped(st.pairs()) + " (every extreme pattern of " + st.b.text + " among them, " +
               std::to_string(groups.size()) + " of its " + std::to_string(all_groups.size()) +
               " signs and exponents, the rest uniform random, seeded from --seed " + std::to_string(ctx.options.seed) +
               ")";
    }
    if ((st.a.depends | st.b.depends) == (1u << n_in) - 1u) scope += ", at the op's output itself";
    else scope += ", observed at the output through " + st.neutral_text;
    if (stopped) scope += " (stopped early)";
    if (!device_scope.empty()) scope += ", " + device_scope;
    scopes.push_back(scope);
    for (const ref::Stage::Operand* o : {&st.a, &st.b})
      if (o->depends && o->values.size() < 65536)
        unreached.push_back("the " + grouped(65536 - o->values.size()) + " patterns of " + o->text +
                            " no input reaches (stage " + std::to_string(k) + ")");
    char secs[32];
    std::snprintf(secs, sizeof secs, "%.1f s", seconds);
    std::string note = "stage " + std::to_string(k) + " (" + secs + ")";
    if (stopped) {
      note += ": digest not computed (stopped early)";
    } else if (!full) {
      note += ": no digest (a subset of " + st.b.text + ")";
    } else {
      // On the device path the subject equalled the reference at every pair, so its digest is the reference's.
      const bool as_tree = !device_digest.empty() && device_tree;
      const std::string sd = device_digest.empty() ? subject_digest.hex() : device_digest;
      const std::string rd = device_digest.empty() ? reference_digest.hex() : device_digest;
      note += std::string(as_tree ? ": tree digest (a SHA-256 per row of b) of its " : ": SHA-256 of its ") +
              grouped(pairs) + " outputs " + sd +
              (!device_digest.empty() ? " (equal to the reference's at every pair, compared on the device; the "
                                        "digest is the reference's, hashed as its table was built)"
               : sd == rd             ? " (the reference's the same)"
                                      : " (the reference's " + rd + ")");
      const std::string entry = key + (as_tree ? "_tree." : ".") + ref::dtype_name(d);
      if (!compare_golden) {
        note += "; golden digest not compared (" +
                std::string(ctx.options.arch.empty() ? "no golden architecture" : "the math model differs from the device's") + ")";
      } else if (const auto want_digest = as_tree ? golden_tree : golden.digest(key, d)) {
        const bool ok = sd == *want_digest;
        note += (ok ? " equals " : " DIFFERS from ") + golden.label() + "/digests.json " + entry;
        if (!ok)
          t.failed_check(op.name + " " + ref::dtype_name(d) + " " + name + " digest " + sd + " expected " + *want_digest +
                    " (" + golden.label() + "/digests.json " + entry + ")");
      } else {
        note += "; no golden digest for stage " + std::to_string(k) +
                " yet (capture with scripts/capture_golden.py --add-stages)";
      }
    }
    notes.push_back(note);
  }
  std::string scope;
  for (const auto& s : scopes) scope += (scope.empty() ? "" : "; ") + s;
  if (scopes.size() + 1 == stages.size())
    scope += "; stage " + std::to_string(scopes.size()) + " not run (stopped)";
  else if (scopes.size() < stages.size())
    scope += "; stages " + std::to_string(scopes.size()) + ".." + std::to_string(stages.size() - 1) + " not run (stopped)";
  scope += "; every call with group_rows = 1 (every input per element, so any combination of witnesses is one "
           "element); not proven: joint triples (a kernel right at each step on its own but wrong on a combination no "
           "stage enumerates)";
  for (const auto& u : unreached) scope += ", " + u;
  scope += ", group_rows > 1";
  r.scope = scope;
  for (const auto& n : notes) r.note += (r.note.empty() ? "" : "; ") + n;
}

void check_stages(const CheckContext& ctx, CheckResult& r) {
  const ref::OpPlan& plan = *ctx.model.plan;
  if (plan.inputs() < 3) {
    r.status = CheckStatus::kSkipped;
    r.note = std::to_string(plan.inputs()) + "-input op: the domain class enumerates its one rounding boundary";
    return;
  }
  const std::vector<ref::Stage>& stages = plan.stages();
  if (stages.empty()) {
    r.status = CheckStatus::kSkipped;
    r.note = plan.no_stages_reason();
    return;
  }
  check_stage_list(ctx, stages, r);
}

}  // namespace fuseproof::audit
