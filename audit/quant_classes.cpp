// quant_classes.cpp: the check classes of a quantization op: rejection, widths, stages (the scale step over every
// (tensor amax, block amax) pair and the element step over every (value, scale) pair), blocks and layout; every
// comparison on the bytes of the codes and scales tensors against ref::QuantPlan.
#include "audit/quant_classes.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "audit/call_watch.h"
#include "audit/counter_patterns.h"
#include "audit/guarded_image.h"
#include "audit/quant_call_classes.h"
#include "audit/quant_class_support.h"
#include "audit/quant_differences.h"
#include "common/parallel_for.h"
#include "common/phase_clock.h"
#include "reference/half_codec.h"
#include "reference/op_plan.h"

namespace fuseproof::audit {

namespace {

using ref::QuantPlan;

constexpr size_t kMaxDistancePairs = 64;  ///< (value, scale) lines kept per other contract
constexpr size_t kMaxDistinctPairs = size_t(1) << 21;  ///< differing inputs told apart per other contract
// The stage sweeps' default rows. On the host a whole audit of one op, both dtypes, takes about 30 s on 2 cores: 24
// tensor amaxes, 4 global scales, 96 FP8 group amaxes. On CUDA the audit's host side sets the pace: every FP8 group
// amax (1.1 G cases, about a minute a dtype on a 16-core H100 host), every NVFP4 global scale of the set, and 256
// tensor amaxes of the NVFP4 scale step (about 2 minutes for a whole op, both dtypes, at the old path's rate). All
// 65,536 tensor amaxes, 2^32 (tensor amax, block amax) pairs and 73 G cases a dtype, are the envelope scope's
// (--stage-rows 65536): the scale step's fast path (scale_sweep) costs about 26 ms of one core a tensor amax on the
// host side with the three other contracts' distances, about 2 minutes a dtype over 16 cores by that measure, but a
// bf16 sweep on an H100 host had not finished after 138 s (docs/AUDIT.md, Quantization classes), so it stays out of
// the default until its time is known. --stage-rows N sets N tensor amaxes, N / 6 global scales (at least 2: those
// of tensor amaxes 1.0 and 2688) and 4 N group amaxes; the quick scope takes 4.
constexpr uint32_t kHostScaleRows = 24;
constexpr uint32_t kCudaScaleRows = 256;
constexpr uint32_t kRowsPerGlobalScale = 6;
constexpr uint32_t kAmaxRowsPerRow = 4;
constexpr uint32_t kAllRows = 65536;

uint64_t quant_class_seed(const QuantContext& ctx, CheckClass c) {
  return ctx.options.seed * 0x9E3779B97F4A7C15ull + uint64_t(c) * 1000003u + uint64_t(ctx.model.dtype) * 7919u +
         0x5155414E54ull;  // "QUANT": the quantization classes draw streams of their own
}

uint16_t abs_bits(uint16_t h) { return uint16_t(h & 0x7FFFu); }
uint16_t inf_bits(ref::Dtype d) { return d == ref::Dtype::kBf16 ? 0x7F80 : 0x7C00; }
uint16_t nan_bits(ref::Dtype d) { return d == ref::Dtype::kBf16 ? 0x7FC0 : 0x7E00; }
uint16_t t_of(ref::Dtype d, float f) { return ref::f32_to_half(d, f, ref::NanPolicy::kCudaCvtRn); }

std::string hex(uint32_t v, int digits) {
  char b[16];
  std::snprintf(b, sizeof b, "0x%0*X", digits, v);
  return b;
}

bool e4m3_scales(const QuantPlan& p) { return p.contract().scale_format == ref::ScaleFormat::kE4m3; }
int scale_cell_bytes(const QuantPlan& p) { return e4m3_scales(p) ? 1 : 4; }

std::string scale_text(const QuantPlan& p, uint32_t bits) { return hex(bits, e4m3_scales(p) ? 2 : 8); }

/// How a wanted T value of the quantizer's input is reached through the op's activation stage: the identity for a
/// quantizer alone; bias 0 and the x whose activation is the value (row-broadcast second input); a gate whose
/// activation output is exactly 1.0 and up = the value (a packed pair). Every value is checked with
/// QuantPlan::activation: `reach[v]` is false where no input gives exactly v.
struct Driver {
  int inputs = 1;
  std::vector<std::array<uint16_t, 2>> in;  ///< per wanted T pattern: the op's inputs
  std::vector<bool> reach;
  uint32_t reachable = 0;
  std::string words;  ///< how the values are reached, for the scope
};

Driver make_driver(const QuantPlan& plan) {
  const ref::QuantOpSpec& op = plan.op();
  const ref::Dtype d = plan.dtype();
  Driver dr;
  dr.inputs = plan.inputs();
  dr.in.assign(65536, {0, 0});
  dr.reach.assign(65536, false);
  auto act = [&](uint16_t a, uint16_t b) {
    const uint16_t va[1] = {a}, vb[1] = {b};
    const uint16_t* in[2] = {va, vb};
    return plan.activation(in, 0);
  };
  if (dr.inputs == 1) {
    for (uint32_t v = 0; v < 65536; ++v) dr.in[v] = {uint16_t(v), 0}, dr.reach[v] = true;
    dr.reachable = 65536;
    dr.words = "the values fed to the quantizer directly";
    return dr;
  }
  if (dr.inputs == 2 && op.inputs[1].layout == ref::Layout::kRowBroadcast) {
    // Second input 0 (a bias): every first input's activation, the first x found for each value.
    for (uint32_t x = 0; x < 65536; ++x) {
      const uint16_t y = act(uint16_t(x), 0);
      if (!dr.reach[y]) dr.reach[y] = true, dr.in[y] = {uint16_t(x), 0}, ++dr.reachable;
    }
    dr.words = op.inputs[1].name + " 0 and " + op.inputs[0].name + " enumerated: the " +
               std::to_string(dr.reachable) + " of 65536 T values " + op.activation.family_op + " reaches";
    return dr;
  }
  // A packed pair: a first input whose activation times 1.0 is exactly 1.0, then the second input is the value.
  const uint16_t one = t_of(d, 1.0f);
  int64_t gate = -1;
  for (uint32_t g = 0; g < 65536 && gate < 0; ++g)
    if (act(uint16_t(g), one) == one) gate = g;
  if (gate < 0) {
    dr.words = "no " + op.inputs[0].name + " gives an activation of exactly 1.0: no value reached";
    return dr;
  }
  for (uint32_t v = 0; v < 65536; ++v)
    if (act(uint16_t(gate), uint16_t(v)) == v) dr.reach[v] = true, dr.in[v] = {uint16_t(gate), uint16_t(v)}, ++dr.reachable;
  dr.words = op.inputs[0].name + " " + hex(uint32_t(gate), 4) + " (activation exactly 1.0) and " + op.inputs[1].name +
             " the value: " + std::to_string(dr.reachable) + " of 65536 T values reached exactly (checked with "
             "QuantPlan::activation)";
  return dr;
}

using Image = QuantExpected;

/// The quantizer's T inputs of block (r, k) (after the activation stage).
void block_values(const QuantPlan& plan, const QuantCallSpec& s, int64_t r, int64_t k, uint16_t* values) {
  const int n = plan.block_size(), ni = plan.inputs();
  uint16_t in[ref::kMaxOpInputs][128];
  const uint16_t* rows[ref::kMaxOpInputs];
  for (int i = 0; i < ni; ++i) {
    for (int e = 0; e < n; ++e) in[i][e] = s.at(i, r, k * n + e);
    rows[i] = in[i];
  }
  for (int e = 0; e < n; ++e) values[e] = plan.activation(rows, e);
}

/// Work items of a batch of calls: rows [lo, hi) of call `call`, about 2^16 elements each (whole rows), call by call,
/// so that a batch of few large calls still spreads over every core.
struct RowRange {
  size_t call;
  int64_t lo, hi;
};

std::vector<RowRange> row_ranges(const QuantCallSpec* specs, size_t count) {
  std::vector<RowRange> out;
  for (size_t c = 0; c < count; ++c) {
    const int64_t step = std::max<int64_t>(1, (int64_t(1) << 16) / std::max<int64_t>(1, specs[c].width));
    for (int64_t lo = 0; lo < specs[c].rows; lo += step) out.push_back({c, lo, std::min(specs[c].rows, lo + step)});
  }
  return out;
}

std::vector<RowRange> row_ranges(const std::vector<QuantCallSpec>& specs) { return row_ranges(specs.data(), specs.size()); }

/// The T values of a batch (the activation stage once for every contract: the contracts of an op share it), each
/// call's row-major.
std::vector<std::vector<uint16_t>> batch_values(const QuantPlan& plan, const std::vector<QuantCallSpec>& specs) {
  std::vector<std::vector<uint16_t>> out(specs.size());
  for (size_t c = 0; c < specs.size(); ++c) out[c].resize(size_t(specs[c].rows * specs[c].width));
  const std::vector<RowRange> items = row_ranges(specs);
  const int n = plan.block_size();
  parallel_items(items.size(), [&](unsigned, size_t it) {
    const RowRange& g = items[it];
    const QuantCallSpec& s = specs[g.call];
    for (int64_t r = g.lo; r < g.hi; ++r)
      for (int64_t k = 0; k < s.blocks_per_row(); ++k) block_values(plan, s, r, k, out[g.call].data() + r * s.width + k * n);
  });
  return out;
}

std::vector<uint16_t> call_values(const QuantPlan& plan, const QuantCallSpec& s) {
  return std::move(batch_values(plan, {s})[0]);
}

/// Rows [lo, hi) of call s's expected image under `plan` into img (already sized): QuantPlan::quantize through the
/// worker's memo (the blocks of a call share few scales, so each (value, scale) code is computed once).
void image_rows(const QuantPlan& plan, const QuantCallSpec& s, const uint16_t* tv, Image& img, int64_t lo, int64_t hi,
                ref::QuantCodeMemo& memo, uint8_t* raw = nullptr) {
  const int n = plan.block_size();
  const int64_t blocks = s.blocks_per_row();
  const int cell = scale_cell_bytes(plan);
  const bool e2m1 = plan.op().element_format == ref::ElementFormat::kE2m1;
  uint8_t codes[128];
  for (int64_t r = lo; r < hi; ++r)
    for (int64_t k = 0; k < blocks; ++k) {
      const int64_t base = r * s.width + k * n;
      const uint16_t* values = tv + base;
      const ref::QuantScale sc = memo.block(plan.block_amax(values, n)).scale;
      for (int e = 0; e < n; ++e) codes[e] = memo.code(values[e]);
      if (raw) std::memcpy(raw + base, codes, size_t(n));
      for (int e = 0; e < n; ++e) {
        if (e2m1) {
          uint8_t& b = img.codes[size_t((base + e) / 2)];
          b = uint8_t(e & 1 ? (b & 0x0F) | uint8_t((codes[e] & 0x0F) << 4) : (b & 0xF0) | (codes[e] & 0x0F));
        } else {
          img.codes[size_t(base + e)] = codes[e];
        }
      }
      const int64_t off = ref::scale_offset(s.layout, r, k, s.rows, blocks) * cell;
      if (cell == 1) {
        img.scales[size_t(off)] = sc.byte;
      } else {
        const uint32_t u = ref::f32_bits(sc.value);
        for (int b = 0; b < 4; ++b) img.scales[size_t(off + b)] = uint8_t(u >> (8 * b));
      }
    }
}

/// The expected images of a batch under `plan` from its T values, row ranges on every core. `memos`: one code memo
/// a worker, kept across batches of the same scalars (the chunks of a large call), or null. `raw`: where given,
/// (*raw)[c] gets call c's codes before packing, one byte an element (element_step's, kQuantNoCode included).
std::vector<Image> expected_images(const QuantPlan& plan, const std::vector<QuantCallSpec>& specs,
                                   const std::vector<std::vector<uint16_t>>& values,
                                   ref::QuantCodeMemos* memos = nullptr,
                                   std::vector<std::vector<uint8_t>>* raw = nullptr) {
  std::vector<Image> out(specs.size());
  for (size_t c = 0; c < specs.size(); ++c) {
    // Rows own whole bytes (a width is a whole number of blocks, and a block an even number of E2M1 codes).
    out[c].codes.assign(specs[c].codes_bytes, 0);
    out[c].scales.assign(specs[c].scale_bytes, 0);
  }
  if (raw) {
    raw->resize(specs.size());
    for (size_t c = 0; c < specs.size(); ++c) (*raw)[c].assign(size_t(specs[c].rows * specs[c].width), 0);
  }
  ref::QuantCodeMemos own;
  if (!memos) memos = &own;
  memos->prepare(worker_count());
  const std::vector<RowRange> items = row_ranges(specs);
  parallel_items(items.size(), [&](unsigned w, size_t it) {
    const RowRange& g = items[it];
    const QuantCallSpec& s = specs[g.call];
    image_rows(plan, s, values[g.call].data(), out[g.call], g.lo, g.hi, memos->memo(w, plan, s.scalars.data()),
               raw ? (*raw)[g.call].data() : nullptr);
  });
  return out;
}

Image expected_image(const QuantPlan& plan, const QuantCallSpec& s) {
  return std::move(expected_images(plan, {s}, {call_values(plan, s)})[0]);
}

uint32_t scale_bits_at(const QuantPlan& plan, const std::vector<uint8_t>& scales, int64_t cell) {
  if (scale_cell_bytes(plan) == 1) return scales[size_t(cell)];
  uint32_t u = 0;
  for (int b = 0; b < 4; ++b) u |= uint32_t(scales[size_t(cell * 4 + b)]) << (8 * b);
  return u;
}

uint8_t code_in(const QuantPlan& plan, const std::vector<uint8_t>& codes, int64_t width, int64_t r, int64_t c) {
  return code_at(plan.op(), codes.data(), width, r, c);
}

/// Position along the code format's magnitude order, signed (E2M1 0..7, E4M3 0..126); nullopt for NaN, no code and
/// (E4M3) the NaN bytes.
std::optional<int> code_position(const QuantPlan& plan, uint8_t code) {
  if (plan.op().element_format == ref::ElementFormat::kE2m1) {
    if (code > 0x0F) return std::nullopt;
    const int m = code & 7;
    return code & 8 ? -m : m;
  }
  const int m = code & 0x7F;
  if (m == 0x7F) return std::nullopt;
  return code & 0x80 ? -m : m;
}

std::optional<int64_t> scale_position(const QuantPlan& plan, uint32_t bits) {
  if (e4m3_scales(plan)) {
    const int m = int(bits & 0x7F);
    if (m == 0x7F) return std::nullopt;
    return bits & 0x80 ? -m : m;
  }
  if ((bits & 0x7F800000u) == 0x7F800000u) return std::nullopt;  // NaN or Inf
  const int64_t m = int64_t(bits & 0x7FFFFFFFu);
  return bits & 0x80000000u ? -m : m;
}

/// The histogram bin of a mismatch: steps along the format's order as ulps, NaN (or no code) against a number, the
/// sign of zero.
Distance step_distance(std::optional<int64_t> got, std::optional<int64_t> want) {
  if (!got && !want) return Distance::kNanPattern;
  if (!got) return Distance::kNanForNumber;
  if (!want) return Distance::kNumberForNan;
  const int64_t d = std::abs(*got - *want);
  return d == 0 ? Distance::kZeroSign : d == 1 ? Distance::kOne : d == 2 ? Distance::kTwo : d <= 10 ? Distance::kThreeToTen
                                                                                                     : Distance::kMore;
}

void add_step(std::vector<std::pair<int, uint64_t>>& hist, int64_t steps) {
  const int s = int(std::min<int64_t>(steps, INT32_MAX));
  auto it = std::lower_bound(hist.begin(), hist.end(), s, [](const auto& p, int v) { return p.first < v; });
  if (it != hist.end() && it->first == s) ++it->second;
  else hist.insert(it, {s, 1});
}

void add_steps(std::vector<std::pair<int, uint64_t>>& hist, int s, uint64_t count) {
  auto it = std::lower_bound(hist.begin(), hist.end(), s, [](const auto& p, int v) { return p.first < v; });
  if (it != hist.end() && it->first == s) it->second += count;
  else hist.insert(it, {s, count});
}

/// One class's comparison state: counts, records, the distinct-output guard, the early stop, and the distances from
/// the other contracts.
class QuantTally {
 public:
  QuantTally(const QuantContext& ctx, CheckResult& r)
      : ctx_(ctx), r_(r), plan_(*ctx.model.plan),
        max_distinct_(ctx.max_distinct_pairs ? ctx.max_distinct_pairs : kMaxDistinctPairs) {
    for (const auto& in : plan_.op().inputs) names_.push_back(in.name);
  }

  bool stop() {
    if (ctx_.options.stop_after && r_.mismatches >= ctx_.options.stop_after) r_.stopped_early = true;
    return r_.stopped_early || !r_.fault.empty();
  }
  void failure(const std::string& line, uint64_t count = 1) {
    r_.mismatches += count;
    record(line);
  }
  void record(const std::string& line) {
    if (r_.records.size() < ctx_.options.records) r_.records.push_back(line);
  }
  void seen_code(uint8_t c) {
    if (!codes_seen_[c]) codes_seen_[c] = true, ++r_.distinct_expected;
  }
  void seen_scale(uint32_t bits) {
    // The guard needs two; a few thousand tell enough, and the last value spares the hash of a repeated one.
    if ((has_last_ && bits == last_scale_) || scales_seen_.size() >= 4096) return;
    last_scale_ = bits;
    has_last_ = true;
    if (scales_seen_.insert(bits).second) ++r_.distinct_expected;
  }

  /// "nvfp4_quant bf16 [r=3,k=1,e=5] x=0x3F80 amax=0x4040 global_scale=0x3F800000": an element's inputs, the value
  /// the quantizer saw (fused ops: t=), the block's amax and the call's scalars.
  std::string element_head(const QuantCallSpec& s, int64_t r, int64_t k, int e) const {
    const int n = plan_.block_size();
    std::string h = plan_.op().name + " " + ref::dtype_name(plan_.dtype()) + " [r=" + std::to_string(r) +
                    ",k=" + std::to_string(k) + (e >= 0 ? ",e=" + std::to_string(e) : std::string()) + "]";
    uint16_t values[128];
    block_values(plan_, s, r, k, values);
    if (e >= 0) {
      for (int i = 0; i < plan_.inputs(); ++i) h += " " + names_[size_t(i)] + "=" + hex(s.at(i, r, k * n + e), 4);
      if (plan_.inputs() > 1 || !plan_.op().activation.family_op.empty()) h += " t=" + hex(values[e], 4);
    }
    h += " amax=" + hex(plan_.block_amax(values, n), 4);
    for (size_t j = 0; j < s.scalars.size(); ++j)
      h += " " + plan_.contract().scalars[j] + "=" + hex(ref::f32_bits(s.scalars[j]), 8);
    return h;
  }

  /// The distance of a code mismatch at (r, c): E2M1's nibble 0xF is vLLM's "no code" where the contract's own code
  /// is 0xFF, and -6 elsewhere.
  Distance code_distance(const QuantCallSpec& s, int64_t r, int64_t c, uint8_t got, uint8_t exp) const {
    auto pos = [&](uint8_t code) -> std::optional<int64_t> {
      const auto p = code_position(plan_, code);
      return p ? std::optional<int64_t>(*p) : std::nullopt;
    };
    std::optional<int64_t> pe = pos(exp);
    if (plan_.op().element_format == ref::ElementFormat::kE2m1 && exp == 0xF) {
      const int n = plan_.block_size();
      uint16_t values[128];
      block_values(plan_, s, r, c / n, values);
      const ref::QuantBlockState st = plan_.scale_step(plan_.block_amax(values, n), s.scalars.data());
      if (plan_.element_step(values[c % n], st) == ref::kQuantNoCode) pe = std::nullopt;
    }
    return step_distance(pos(got), pe);
  }

  /// Compares a valid call's outcome with the expected images; false once the class should stop.
  bool compare(const QuantCallSpec& s, const QuantOutcome& o, const Image& want, const std::string& label) {
    if (!o.fault.empty()) {
      if (!o.subject_fault) throw std::runtime_error("audit: backend failure in " + label + ": " + o.fault);
      r_.fault = "CUDA error in call " + label + " [" + describe_quant_call(s) + "]: " + o.fault;
      return false;
    }
    if (o.not_applicable) {
      r_.incomplete_when_passing = true;
      if (r_.note.find("not applicable") == std::string::npos)
        r_.note += (r_.note.empty() ? "" : "; ") + std::string("a valid call was not applicable to this runner");
      return true;
    }
    const std::string head = plan_.op().name + " " + ref::dtype_name(plan_.dtype()) + " " + label + " [" +
                             describe_quant_call(s) + "]";
    const int n = plan_.block_size();
    const int64_t blocks = s.blocks_per_row();
    if (o.rc != 0) {
      failure(head + " valid call rejected: " + o.message, uint64_t(s.rows * s.width));
      return !stop();
    }
    if (o.guard_writes) failure(head + " wrote " + std::to_string(o.guard_writes) + " guard bytes", o.guard_writes);
    if (!o.inputs_intact) failure(head + " modified its input " + o.modified);
    if (o.codes.size() != want.codes.size() || o.scales.size() != want.scales.size()) {
      failure(head + " read back " + std::to_string(o.codes.size()) + " code and " + std::to_string(o.scales.size()) +
              " scale bytes, expected " + std::to_string(want.codes.size()) + " and " + std::to_string(want.scales.size()));
      return !stop();
    }
    if (want.has_bytes_present) {  // the same set of byte values, counted once each
      for (int b = 0; b < 256; ++b)
        if (want.codes_present[size_t(b)]) seen_code(uint8_t(b));
    } else {
      for (uint8_t b : want.codes) seen_code(b);
    }
    const int cell = scale_cell_bytes(plan_);
    // Codes, row by row; a row that differs element by element.
    const size_t row_bytes = want.codes.size() / size_t(s.rows);
    for (int64_t r = 0; r < s.rows; ++r) {
      const size_t at = size_t(r) * row_bytes;
      if (std::memcmp(want.codes.data() + at, o.codes.data() + at, row_bytes) == 0) {
        r_.cases += uint64_t(s.width);
        r_.vs_contract.add_exact(uint64_t(s.width));
        continue;
      }
      for (int64_t c = 0; c < s.width; ++c) {
        ++r_.cases;
        const uint8_t got = code_in(plan_, o.codes, s.width, r, c), exp = code_in(plan_, want.codes, s.width, r, c);
        if (got == exp) {
          r_.vs_contract.add_exact(1);
          continue;
        }
        ++r_.mismatches;
        r_.vs_contract.add(code_distance(s, r, c, got, exp));
        if (r_.records.size() < ctx_.options.records) {
          const int64_t k = c / n;
          const int64_t off = ref::scale_offset(s.layout, r, k, s.rows, blocks);
          const std::string sc = " (scale " + scale_text(plan_, scale_bits_at(plan_, o.scales, off)) + " expected " +
                                 scale_text(plan_, scale_bits_at(plan_, want.scales, off)) + ")";
          record(element_head(s, r, k, int(c % n)) + " => code " + hex(got, 1) + " expected " + hex(exp, 1) + sc);
        }
        if (stop()) return false;
      }
    }
    // Scales, cell by cell: a block's scale at its offset, and every padding cell 0x00.
    const int64_t cells = int64_t(want.scales.size()) / cell;
    if (want.scales == o.scales) {  // the common case, in bulk
      if (want.has_bytes_present && cell == 1) {  // at most 256 values: the guard's set never fills, order is free
        for (int b = 0; b < 256; ++b)
          if (want.scales_present[size_t(b)]) seen_scale(uint32_t(b));
      } else {
        for (int64_t q = 0; q < cells; ++q) seen_scale(scale_bits_at(plan_, want.scales, q));
      }
      r_.cases += uint64_t(cells);
      r_.vs_contract.add_exact(uint64_t(cells));
      return !stop();
    }
    std::vector<int64_t> owner;  // cell -> r * blocks + k, or -1 for padding (built on the first difference)
    for (int64_t q = 0; q < cells; ++q) {
      const uint32_t exp = scale_bits_at(plan_, want.scales, q);
      seen_scale(exp);
      ++r_.cases;
      const uint32_t got = scale_bits_at(plan_, o.scales, q);
      if (got == exp) {
        r_.vs_contract.add_exact(1);
        continue;
      }
      ++r_.mismatches;
      r_.vs_contract.add(step_distance(scale_position(plan_, got), scale_position(plan_, exp)));
      if (r_.records.size() < ctx_.options.records) {
        if (owner.empty()) {
          owner.assign(size_t(cells), -1);
          for (int64_t r = 0; r < s.rows; ++r)
            for (int64_t k = 0; k < blocks; ++k) owner[size_t(ref::scale_offset(s.layout, r, k, s.rows, blocks))] = r * blocks + k;
        }
        const int64_t w = owner[size_t(q)];
        if (w < 0)
          record(plan_.op().name + " " + ref::dtype_name(plan_.dtype()) + " [" + describe_quant_call(s) +
                 "] padding scale cell " + std::to_string(q) + " => " + scale_text(plan_, got) + " expected " +
                 scale_text(plan_, exp) + " (padding cells must be 0x00)");
        else
          record(element_head(s, w / blocks, w % blocks, -1) + " => scale " + scale_text(plan_, got) + " expected " +
                 scale_text(plan_, exp) + " (cell " + std::to_string(q) + ")");
      }
      if (stop()) return false;
    }
    return !stop();
  }

  /// --differences: opens the file of every input where the subject and d's contract differ.
  void open_differences(const ContractDistance& d) {
    if (ctx_.options.differences.empty()) return;
    const std::string name = plan_.op().name + "." + ref::quant_contract_name(plan_.contract().contract) + ".vs." +
                             d.contract + "." + ref::dtype_name(plan_.dtype()) + ".tsv";
    sides_[d.contract].file = std::make_unique<DifferencesFile>(ctx_.options.differences, name);
  }

  /// The lines kept for d: the finite differences first, then those where NaN or Inf is involved; the --differences
  /// file written, under a header naming `scope`.
  void finish_distance(ContractDistance& d, const std::string& scope) {
    DistanceSide& side = sides_[d.contract];
    d.pairs = side.finite;
    d.pairs.insert(d.pairs.end(), side.special.begin(), side.special.end());
    if (!side.file) return;
    const std::string header =
        "# " + plan_.op().name + " " + ref::dtype_name(plan_.dtype()) + ": every input where the subject (claiming " +
        ref::quant_contract_name(plan_.contract().contract) + ") and " + d.contract + " differ, once each by (value, " +
        "the subject's scale, scalars) (scale lines: by (block amax, scale, scalars)); scope: " + scope +
        "; columns: " + std::string(kDifferenceColumns);
    d.differences_sha256 = side.file->finish(header);
    d.differences_path = side.file->path();
    d.differences_lines = side.file->lines();
    side.file.reset();
  }

  /// The key a differing input is told apart by: (value or block amax, the subject's scale, the first scalar), exact
  /// for E4M3 scales and for ops without scalars, else hashed.
  uint64_t pair_key(bool scale_line, uint16_t v, uint32_t sg, uint32_t g) const {
    const uint64_t tag = uint64_t(scale_line) << 63;
    if (e4m3_scales(plan_)) return tag | uint64_t(v) << 40 | uint64_t(sg & 0xFFu) << 32 | g;
    if (g == 0) return tag | uint64_t(v) << 32 | sg;
    return tag | uint64_t(v) << 32 | (uint64_t(sg) * 0x9E3779B97F4A7C15ull >> 32 ^ g);
  }

  /// Adds the distance of the subject's outputs from contract `other`'s images of the same call (`tv`: its T values).
  /// A differing input is a (value, subject's scale, scalars) triple, each counted and listed once: pairs_total
  /// counts the distinct ones (past kMaxDistinctPairs, every further difference); the lines kept are the first
  /// finite ones, then up to a quarter of them where NaN or Inf is involved. --differences: each counted input is
  /// also written to the file, so that its lines are exactly pairs_total.
  void distance(ContractDistance& d, const QuantPlan& other, const QuantCallSpec& s, const QuantOutcome& o,
                const Image& theirs, const std::vector<uint16_t>& tv) {
    if (o.rc != 0 || !o.fault.empty() || o.not_applicable || o.codes.size() != theirs.codes.size() ||
        o.scales.size() != theirs.scales.size())
      return;
    DistanceSide& side = sides_[d.contract];
    const ref::Dtype dt = plan_.dtype();
    const int n = plan_.block_size();
    const int64_t blocks = s.blocks_per_row();
    const uint32_t g = s.scalars.empty() ? 0 : ref::f32_bits(s.scalars[0]);
    std::vector<uint32_t> scalar_bits;
    for (float x : s.scalars) scalar_bits.push_back(ref::f32_bits(x));
    const int digits = e4m3_scales(plan_) ? 2 : 8;
    auto keep = [&](uint64_t key, bool special, const std::function<std::string()>& line,
                    const std::function<DifferenceLine()>& entry) {
      if (side.keys.size() >= max_distinct_) {
        ++d.pairs_total;
      } else if (side.keys.insert(key).second) {
        ++d.pairs_total;
      } else {
        return;
      }
      if (side.file) {
        DifferenceLine l = entry();
        l.scalars = scalar_bits;
        side.file->add(difference_line_text(l, digits));
      }
      std::vector<std::string>& kept = special ? side.special : side.finite;
      const size_t cap = special ? kMaxDistancePairs / 4 : kMaxDistancePairs - kMaxDistancePairs / 4;
      if (kept.size() < cap) kept.push_back(line());
    };
    const size_t row_code_bytes = theirs.codes.size() / size_t(s.rows);
    const int cell = scale_cell_bytes(plan_);
    const bool linear = s.layout == ref::ScaleLayout::kLinear;
    for (int64_t r = 0; r < s.rows; ++r) {
      // A row whose codes and (linear) scales are equal is counted in bulk.
      if (linear &&
          std::memcmp(o.codes.data() + size_t(r) * row_code_bytes, theirs.codes.data() + size_t(r) * row_code_bytes,
                      row_code_bytes) == 0 &&
          std::memcmp(o.scales.data() + size_t(r * blocks * cell), theirs.scales.data() + size_t(r * blocks * cell),
                      size_t(blocks * cell)) == 0) {
        d.blocks += uint64_t(blocks);
        d.cases += uint64_t(blocks * n);
        continue;
      }
      for (int64_t k = 0; k < blocks; ++k) {
        ++d.blocks;
        d.cases += uint64_t(n);
        const int64_t off = ref::scale_offset(s.layout, r, k, s.rows, blocks);
        const uint32_t sg = scale_bits_at(plan_, o.scales, off), so = scale_bits_at(other, theirs.scales, off);
        const auto sgp = scale_position(plan_, sg), sop = scale_position(other, so);
        const bool scale_special = !sgp || !sop;
        const uint16_t* values = tv.data() + r * s.width + k * n;
        const uint16_t amax = plan_.block_amax(values, n), other_amax = other.block_amax(values, n);
        if (sg != so) {
          ++d.scales_differ;
          if (!scale_special) add_step(d.scale_steps, std::abs(*sgp - *sop));
          else ++d.nan_inf_differ;
          keep(pair_key(true, amax, sg, g), scale_special, [&] {
            return element_head(s, r, k, -1) + " => scale " + scale_text(plan_, sg) + ", " + d.contract + " scale " +
                   scale_text(other, so);
          }, [&] {
            DifferenceLine l;
            l.amax = amax;
            l.other_amax = other_amax;
            l.scale = sg;
            l.other_scale = so;
            l.kind = scale_special ? "nan-inf" : "scale:" + std::to_string(std::abs(*sgp - *sop));
            return l;
          });
        }
        for (int e = 0; e < n; ++e) {
          const uint8_t cg = code_in(plan_, o.codes, s.width, r, k * n + e);
          const uint8_t co = code_in(other, theirs.codes, s.width, r, k * n + e);
          if (cg == co) continue;
          ++d.codes_differ;
          const uint16_t v = values[e];
          // A code byte with no number behind it (vLLM's table on a NaN product: 0xFF, the nibble 0xF, which also
          // codes -6) is a NaN difference: the contracts' own codes tell which (the subject's by its claim's).
          bool no_code = false;
          if (!scale_special) {
            const uint8_t raw_other = other.element_step(v, other.scale_step(amax, s.scalars.data()));
            const uint8_t raw_own = plan_.element_step(v, plan_.scale_step(amax, s.scalars.data()));
            no_code = raw_other == ref::kQuantNoCode || (raw_own == ref::kQuantNoCode && cg == (raw_own & 0x0F));
          }
          const bool special = scale_special || no_code || ref::is_nan_bits(dt, v) || abs_bits(v) == inf_bits(dt);
          const auto pg = code_position(plan_, cg), po = code_position(other, co);
          if (!special && pg && po) {
            if (*pg == 0 && *po == 0) ++d.sign_of_zero_differ;
            add_step(d.code_steps, std::abs(*pg - *po));
          } else {
            ++d.nan_inf_differ;
          }
          const bool nan_inf = special || !pg || !po;
          keep(pair_key(false, v, sg, g), nan_inf, [&] {
            return element_head(s, r, k, e) + " => code " + hex(cg, 1) + " scale " + scale_text(plan_, sg) + ", " +
                   d.contract + " code " + hex(co, 1) + " scale " + scale_text(other, so);
          }, [&] {
            DifferenceLine l;
            l.value = v;
            l.amax = amax;
            l.other_amax = other_amax;
            l.scale = sg;
            l.code = cg;
            l.other_scale = so;
            l.other_code = co;
            l.kind = nan_inf                  ? std::string("nan-inf")
                     : *pg == 0 && *po == 0 ? std::string("sign-of-zero")
                                            : "code:" + std::to_string(std::abs(*pg - *po));
            return l;
          });
        }
      }
    }
  }

  /// One difference of a stage-1 call from another contract, as distance() meets it: a block's scale (e < 0) or an
  /// element's code; everything keep() and its line need.
  struct DistanceEvent {
    uint64_t key = 0;
    int32_t r = 0, k = 0, e = -1;
    uint16_t value = 0, amax = 0, other_amax = 0;
    uint32_t sg = 0, so = 0;
    uint8_t cg = 0, co = 0;
    bool special = false;  ///< a NaN or Inf is involved: the kept line goes to the special list
    int64_t steps = 0;     ///< |steps| along the format's order (finite, not sign-of-zero)
    bool sign_of_zero = false;
    /// keep() calls this event stands for: consecutive differing elements of one block with the same inputs and codes
    /// (a block's zeros); the i-th is the block's i-th differing element from e on.
    uint32_t count = 1;
    bool same_as(const DistanceEvent& o) const {
      return key == o.key && value == o.value && cg == o.cg && co == o.co && special == o.special && steps == o.steps &&
             sign_of_zero == o.sign_of_zero;
    }
  };
  /// A worker's share of distance_batch: the order-free counts, and the keep() calls in order (or only their number,
  /// where the state at the batch's start shows they can only count).
  struct DistancePart {
    uint64_t blocks = 0, cases = 0, scales_differ = 0, codes_differ = 0, nan_inf_differ = 0, sign_of_zero_differ = 0;
    std::vector<std::pair<int, uint64_t>> scale_steps, code_steps;
    uint64_t code_steps_small[256] = {};  ///< code steps below 256 (every E2M1 and E4M3 step), counted here first
    std::vector<DistanceEvent> events;
    uint64_t counted_only = 0;
  };

  /// What distance_batch reads of one call besides its outcome: `other`'s image and the call's T values; where known
  /// (the scale step's fast path), each element's code before packing under `other` and under the claimed contract,
  /// and each block's amax by each contract's rule (else computed as distance() computes them).
  struct DistanceInputs {
    const Image* theirs = nullptr;
    const uint16_t* tv = nullptr;
    const std::vector<uint8_t>* theirs_raw = nullptr;
    const std::vector<uint8_t>* own_raw = nullptr;
    const uint16_t* own_amax = nullptr;
    const uint16_t* other_amax = nullptr;
  };

  /// distance() over a batch of calls, exactly: the calls' rows scanned on every core, then the keep() calls applied
  /// in distance()'s order.
  void distance_batch(ContractDistance& d, const QuantPlan& other, const std::vector<QuantCallSpec>& specs,
                      const std::vector<QuantOutcome>& got, const std::vector<DistanceInputs>& in) {
    DistanceSide& side = sides_[d.contract];
    const size_t finite_cap = kMaxDistancePairs - kMaxDistancePairs / 4, special_cap = kMaxDistancePairs / 4;
    // keep() calls that can only count (the key set full, no file, their list of lines full) need no event.
    const bool all_events = side.keys.size() < max_distinct_ || side.file != nullptr;
    const bool finite_events = side.finite.size() < finite_cap, special_events = side.special.size() < special_cap;
    constexpr int64_t kChunkRows = 128;
    struct Item {
      size_t call;
      int64_t r0, r1;
    };
    std::vector<Item> items;
    for (size_t j = 0; j < specs.size(); ++j) {
      const QuantCallSpec& s = specs[j];
      const QuantOutcome& o = got[j];
      if (o.rc != 0 || !o.fault.empty() || o.not_applicable || o.codes.size() != in[j].theirs->codes.size() ||
          o.scales.size() != in[j].theirs->scales.size())
        continue;
      for (int64_t r0 = 0; r0 < s.rows; r0 += kChunkRows) items.push_back({j, r0, std::min(s.rows, r0 + kChunkRows)});
    }
    std::vector<DistancePart> parts(items.size());
    parallel_items(items.size(), [&](unsigned, size_t it) {
      const Item& item = items[it];
      const QuantCallSpec& s = specs[item.call];
      const QuantOutcome& o = got[item.call];
      const DistanceInputs& call = in[item.call];
      const Image& th = *call.theirs;
      DistancePart& p = parts[it];
      const ref::Dtype dt = plan_.dtype();
      const int n = plan_.block_size();
      const int64_t blocks = s.blocks_per_row();
      const uint32_t g = s.scalars.empty() ? 0 : ref::f32_bits(s.scalars[0]);
      const size_t row_code_bytes = th.codes.size() / size_t(s.rows);
      const int cell = scale_cell_bytes(plan_);
      const bool linear = s.layout == ref::ScaleLayout::kLinear;
      const bool e2m1 = plan_.op().element_format == ref::ElementFormat::kE2m1;
      bool run_open = false;  // the last keep() of this block went to p.events.back()
      auto keep = [&](const DistanceEvent& ev, bool element) {
        if (all_events || (ev.special ? special_events : finite_events)) {
          if (element && run_open && p.events.back().same_as(ev)) {
            ++p.events.back().count;
          } else {
            p.events.push_back(ev);
            run_open = element;
          }
        } else {
          ++p.counted_only;
          run_open = false;
        }
      };
      for (int64_t r = item.r0; r < item.r1; ++r) {
        if (linear &&
            std::memcmp(o.codes.data() + size_t(r) * row_code_bytes, th.codes.data() + size_t(r) * row_code_bytes,
                        row_code_bytes) == 0 &&
            std::memcmp(o.scales.data() + size_t(r * blocks * cell), th.scales.data() + size_t(r * blocks * cell),
                        size_t(blocks * cell)) == 0) {
          p.blocks += uint64_t(blocks);
          p.cases += uint64_t(blocks * n);
          continue;
        }
        for (int64_t k = 0; k < blocks; ++k) {
          ++p.blocks;
          p.cases += uint64_t(n);
          const int64_t off = ref::scale_offset(s.layout, r, k, s.rows, blocks);
          const uint32_t sg = scale_bits_at(plan_, o.scales, off), so = scale_bits_at(other, th.scales, off);
          const auto sgp = scale_position(plan_, sg), sop = scale_position(other, so);
          const bool scale_special = !sgp || !sop;
          const int64_t base = r * s.width + k * n;
          const uint16_t* values = call.tv + base;
          const size_t b = size_t(r * blocks + k);
          const uint16_t amax = call.own_amax ? call.own_amax[b] : plan_.block_amax(values, n);
          const uint16_t oamax = call.other_amax ? call.other_amax[b] : other.block_amax(values, n);
          DistanceEvent ev;
          ev.r = int32_t(r), ev.k = int32_t(k), ev.amax = amax, ev.other_amax = oamax, ev.sg = sg, ev.so = so;
          if (sg != so) {
            ++p.scales_differ;
            if (!scale_special) add_step(p.scale_steps, std::abs(*sgp - *sop));
            else ++p.nan_inf_differ;
            ev.key = pair_key(true, amax, sg, g);
            ev.special = scale_special;
            ev.steps = scale_special ? 0 : std::abs(*sgp - *sop);
            keep(ev, false);
          }
          // A block whose code bytes are equal has no code difference (E2M1: n / 2 whole bytes, n even).
          const size_t cb = e2m1 ? size_t(n / 2) : size_t(n), co0 = e2m1 ? size_t(base / 2) : size_t(base);
          if (std::memcmp(o.codes.data() + co0, th.codes.data() + co0, cb) == 0) continue;
          std::optional<ref::QuantBlockState> other_state, own_state;  // where no image's code serves
          run_open = false;
          // The last differing element's inputs and what followed from them (a block's zeros repeat them).
          bool have_last = false;
          uint16_t last_v = 0;
          uint8_t last_cg = 0, last_co = 0, last_ro = 0, last_rp = 0;
          DistanceEvent ce = ev;
          for (int e = 0; e < n; ++e) {
            // code_at's reading: the E2M1 nibble (element 2j low, 2j + 1 high), or the byte.
            const size_t at = size_t(base + e);
            const uint8_t cg = e2m1 ? uint8_t(at & 1 ? o.codes[at / 2] >> 4 : o.codes[at / 2] & 0x0F) : o.codes[at];
            const uint8_t co = e2m1 ? uint8_t(at & 1 ? th.codes[at / 2] >> 4 : th.codes[at / 2] & 0x0F) : th.codes[at];
            if (cg == co) continue;
            ++p.codes_differ;
            const uint16_t v = values[e];
            // The contracts' own codes of v under the claimed contract's amax: the images' where the amaxes agree.
            uint8_t raw_other = 0, raw_own = 0;
            if (!scale_special) {
              if (call.theirs_raw && oamax == amax) {
                raw_other = (*call.theirs_raw)[size_t(base + e)];
              } else {
                if (!other_state) other_state = other.scale_step(amax, s.scalars.data());
                raw_other = other.element_step(v, *other_state);
              }
              if (call.own_raw) {
                raw_own = (*call.own_raw)[size_t(base + e)];
              } else {
                if (!own_state) own_state = plan_.scale_step(amax, s.scalars.data());
                raw_own = plan_.element_step(v, *own_state);
              }
            }
            if (!(have_last && v == last_v && cg == last_cg && co == last_co && raw_other == last_ro &&
                  raw_own == last_rp)) {
              const bool no_code = !scale_special && (raw_other == ref::kQuantNoCode ||
                                                      (raw_own == ref::kQuantNoCode && cg == (raw_own & 0x0F)));
              const bool special = scale_special || no_code || ref::is_nan_bits(dt, v) || abs_bits(v) == inf_bits(dt);
              const auto pg = code_position(plan_, cg), po = code_position(other, co);
              ce.value = v;
              ce.cg = cg;
              ce.co = co;
              ce.special = special || !pg || !po;
              ce.sign_of_zero = !ce.special && *pg == 0 && *po == 0;
              ce.steps = ce.special ? 0 : std::abs(*pg - *po);
              ce.key = pair_key(false, v, sg, g);
              have_last = true, last_v = v, last_cg = cg, last_co = co, last_ro = raw_other, last_rp = raw_own;
            }
            if (!ce.special) {
              if (ce.sign_of_zero) ++p.sign_of_zero_differ;
              if (ce.steps >= 0 && ce.steps < 256) ++p.code_steps_small[ce.steps];
              else add_step(p.code_steps, ce.steps);
            } else {
              ++p.nan_inf_differ;
            }
            ce.e = e;
            keep(ce, true);
          }
        }
      }
    });
    // In order: the counts (order-free), then every keep() as distance() makes it.
    const PhaseClock in_order("other contracts: differences in order");
    const int digits = e4m3_scales(plan_) ? 2 : 8;
    for (size_t it = 0; it < items.size(); ++it) {
      DistancePart& p = parts[it];
      const QuantCallSpec& s = specs[items[it].call];
      d.blocks += p.blocks;
      d.cases += p.cases;
      d.scales_differ += p.scales_differ;
      d.codes_differ += p.codes_differ;
      d.nan_inf_differ += p.nan_inf_differ;
      d.sign_of_zero_differ += p.sign_of_zero_differ;
      for (const auto& [st, c] : p.scale_steps) add_steps(d.scale_steps, st, c);
      for (const auto& [st, c] : p.code_steps) add_steps(d.code_steps, st, c);
      for (int st = 0; st < 256; ++st)
        if (p.code_steps_small[st]) add_steps(d.code_steps, st, p.code_steps_small[st]);
      d.pairs_total += p.counted_only;
      std::vector<uint32_t> scalar_bits;
      for (float x : s.scalars) scalar_bits.push_back(ref::f32_bits(x));
      const QuantOutcome& o = got[items[it].call];
      const Image& th = *in[items[it].call].theirs;
      for (const DistanceEvent& ev : p.events)
        for (uint32_t i = 0; i < ev.count; ++i) {
        if (side.keys.size() >= max_distinct_) {
          if (!side.file && (ev.special ? side.special.size() >= special_cap : side.finite.size() >= finite_cap)) {
            d.pairs_total += ev.count - i;  // each remaining call only counts
            break;
          }
          ++d.pairs_total;
        } else if (side.keys.insert(ev.key).second) {
          ++d.pairs_total;
        } else {
          continue;
        }
        if (side.file) {
          DifferenceLine l;
          if (ev.e >= 0) l.value = ev.value, l.code = ev.cg, l.other_code = ev.co;
          l.amax = ev.amax;
          l.other_amax = ev.other_amax;
          l.scale = ev.sg;
          l.other_scale = ev.so;
          l.kind = ev.special        ? std::string("nan-inf")
                   : ev.e < 0        ? "scale:" + std::to_string(ev.steps)
                   : ev.sign_of_zero ? std::string("sign-of-zero")
                                     : "code:" + std::to_string(ev.steps);
          l.scalars = scalar_bits;
          side.file->add(difference_line_text(l, digits));
        }
        std::vector<std::string>& kept = ev.special ? side.special : side.finite;
        if (kept.size() < (ev.special ? special_cap : finite_cap)) {
          // The i-th differing element of the block from ev.e on.
          int e = ev.e;
          for (uint32_t left = i; e >= 0 && left > 0;) {
            ++e;
            if (code_in(plan_, o.codes, s.width, ev.r, int64_t(ev.k) * plan_.block_size() + e) !=
                code_in(other, th.codes, s.width, ev.r, int64_t(ev.k) * plan_.block_size() + e))
              --left;
          }
          kept.push_back(e < 0 ? element_head(s, ev.r, ev.k, -1) + " => scale " + scale_text(plan_, ev.sg) + ", " +
                                     d.contract + " scale " + scale_text(other, ev.so)
                               : element_head(s, ev.r, ev.k, e) + " => code " + hex(ev.cg, 1) + " scale " +
                                     scale_text(plan_, ev.sg) + ", " + d.contract + " code " + hex(ev.co, 1) +
                                     " scale " + scale_text(other, ev.so));
        }
      }
    }
  }

 private:
  const QuantContext& ctx_;
  CheckResult& r_;
  const QuantPlan& plan_;
  size_t max_distinct_;  ///< differing inputs told apart per other contract
  std::vector<std::string> names_;
  bool codes_seen_[256] = {};
  std::unordered_set<uint32_t> scales_seen_;
  uint32_t last_scale_ = 0;
  bool has_last_ = false;
  struct DistanceSide {
    std::unordered_set<uint64_t> keys;
    std::vector<std::string> finite, special;  ///< the lines kept, finite differences first
    std::unique_ptr<DifferencesFile> file;     ///< --differences
  };
  std::map<std::string, DistanceSide> sides_;  ///< per other contract
};

/// Runs the calls in batches of the runner's size: expected images on every core, the subject's batch, the
/// comparison; with `distances`, every other contract's images too. False once the class should stop.
bool run_batches(const QuantContext& ctx, QuantTally& t, std::vector<QuantCallSpec>& specs, const std::string& label,
                 std::vector<ContractDistance>* distances = nullptr) {
  const size_t batch = size_t(std::max(1, ctx.runner.preferred_batch()));
  for (size_t k0 = 0; k0 < specs.size(); k0 += batch) {
    const size_t k1 = std::min(specs.size(), k0 + batch);
    std::vector<QuantCallSpec> part(std::make_move_iterator(specs.begin() + long(k0)),
                                    std::make_move_iterator(specs.begin() + long(k1)));
    std::vector<Image> want;
    std::vector<std::vector<uint16_t>> values;
    // With distances, each contract's codes before packing, one byte an element: distance_batch then reads a differing
    // element's codes there instead of computing them again.
    std::vector<std::vector<uint8_t>> own_raw;
    const bool raw = distances && !ctx.generic_paths;
    {
      const PhaseClock reference("reference values");
      values = batch_values(*ctx.model.plan, part);
      want = expected_images(*ctx.model.plan, part, values, nullptr, raw ? &own_raw : nullptr);
    }
    watch_label(label + " (calls " + std::to_string(k0) + ".." + std::to_string(k1 - 1) + ")");
    std::vector<QuantOutcome> got;
    {
      const PhaseClock kernel("kernel");
      got = ctx.runner.call_batch(part);
    }
    if (got.size() != part.size()) throw std::runtime_error("audit: the quant runner returned a short batch");
    {
      const PhaseClock comparison("comparison");
      for (size_t j = 0; j < part.size(); ++j)
        if (!t.compare(part[j], got[j], want[j], label + " call " + std::to_string(k0 + j))) return false;
    }
    if (distances) {
      const PhaseClock other("other contracts");
      for (size_t m = 0; m < ctx.model.others.size(); ++m) {
        std::vector<std::vector<uint8_t>> their_raw;
        const std::vector<Image> theirs =
            expected_images(*ctx.model.others[m], part, values, nullptr, raw ? &their_raw : nullptr);
        if (ctx.generic_paths) {  // the reference of distance_batch's test
          for (size_t j = 0; j < part.size(); ++j)
            t.distance((*distances)[m], *ctx.model.others[m], part[j], got[j], theirs[j], values[j]);
          continue;
        }
        std::vector<QuantTally::DistanceInputs> in(part.size());
        for (size_t j = 0; j < part.size(); ++j) {
          in[j].theirs = &theirs[j], in[j].tv = values[j].data();
          in[j].theirs_raw = &their_raw[j], in[j].own_raw = &own_raw[j];
        }
        t.distance_batch((*distances)[m], *ctx.model.others[m], part, got, in);
      }
    }
  }
  return true;
}

/// Blocks of wanted T values (block_size each) under one set of scalars, packed into calls of up to `call_elems`
/// elements, `per_row` blocks a row; the last row padded with all-zero blocks.
void add_block_calls(const QuantContext& ctx, const Driver& dr, const std::vector<float>& scalars,
                     const std::vector<uint16_t>& values, std::vector<QuantCallSpec>& out, int64_t per_row = 64,
                     int64_t call_elems = int64_t(1) << 20, ref::ScaleLayout layout = ref::ScaleLayout::kLinear) {
  const QuantPlan& plan = *ctx.model.plan;
  const int64_t n = plan.block_size();
  const int64_t nblocks = int64_t(values.size()) / n;
  const int64_t blocks_per_call = std::max<int64_t>(per_row, call_elems / n / per_row * per_row);
  const size_t first = out.size();
  std::vector<int64_t> starts, counts;  // each new call's first element in `values`, and its elements
  for (int64_t b0 = 0; b0 < nblocks; b0 += blocks_per_call) {
    const int64_t nb = std::min(blocks_per_call, nblocks - b0);
    const int64_t width = std::min(per_row, nb) * n;
    const int64_t rows = (nb * n + width - 1) / width;
    QuantCallSpec s = make_quant_call(plan.op(), ctx.model.contract, rows, width, ctx.abi_dtype, layout);
    s.scalars = scalars;
    out.push_back(std::move(s));
    starts.push_back(b0 * n);
    counts.push_back(nb * n);
  }
  // The elements through the driver (the last row's padding untouched): the per-row inputs by row ranges of every
  // new call on every core; a row-broadcast input (one element a column for every row) then on this thread, each
  // column from the last row that has it, as writing the rows in order leaves it.
  const std::vector<RowRange> items = row_ranges(out.data() + first, out.size() - first);
  auto value_at = [&](size_t call, int64_t r, int64_t c) {
    return values[size_t(starts[call] + r * out[first + call].width + c)];
  };
  parallel_items(items.size(), [&](unsigned, size_t it) {
    const RowRange& g = items[it];
    QuantCallSpec& s = out[first + g.call];
    for (int64_t r = g.lo; r < g.hi; ++r)
      for (int64_t c = 0; c < s.width && r * s.width + c < counts[g.call]; ++c)
        for (int i = 0; i < dr.inputs; ++i)
          if (s.inputs[size_t(i)].stride[0] != 0) s.at(i, r, c) = dr.in[value_at(g.call, r, c)][size_t(i)];
  });
  for (size_t call = 0; call + first < out.size(); ++call) {
    QuantCallSpec& s = out[first + call];
    for (int i = 0; i < dr.inputs; ++i) {
      if (s.inputs[size_t(i)].stride[0] != 0) continue;
      for (int64_t c = 0; c < s.width && c < counts[call]; ++c) {
        const int64_t last = (counts[call] - 1 - c) / s.width;  // the last row whose element c is written
        s.at(i, last, c) = dr.in[value_at(call, last, c)][size_t(i)];
      }
    }
  }
}

/// Every T pattern that is not NaN and whose magnitude is at most |a|'s, both signs, in pattern order.
std::vector<uint16_t> values_up_to(const Driver& dr, ref::Dtype d, uint16_t a) {
  // |x| patterns order like magnitudes: the positive patterns 0..|a|, then the negative ones of those magnitudes.
  std::vector<uint16_t> v;
  const uint32_t top = abs_bits(a);
  for (uint32_t sign : {0u, 0x8000u})
    for (uint32_t m = 0; m <= top; ++m) {
      const uint16_t p = uint16_t(sign | m);
      if (dr.reach[p] && !ref::is_nan_bits(d, p)) v.push_back(p);
    }
  return v;
}

/// `count` rows of 0..65535 (all when count >= 65536): the specials first, then every stride-th pattern; `words`
/// says which.
std::vector<uint16_t> strided_rows(uint32_t count, const std::vector<uint16_t>& specials, std::string* words = nullptr) {
  std::vector<uint16_t> rows;
  std::vector<bool> have(65536, false);
  if (count >= 65536) {
    for (uint32_t p = 0; p < 65536; ++p) rows.push_back(uint16_t(p));
    if (words) *words = "every T pattern";
    return rows;
  }
  for (uint16_t s : specials)
    if (!have[s] && rows.size() < count) have[s] = true, rows.push_back(s);
  const size_t first = rows.size();
  const uint32_t rest = count > rows.size() ? count - uint32_t(rows.size()) : 0;
  uint32_t stride = 0;
  if (rest) {
    stride = std::max<uint32_t>(1, 65536 / rest);
    for (uint32_t p = stride / 2; p < 65536 && rows.size() < count; p += stride)
      if (!have[p]) have[p] = true, rows.push_back(uint16_t(p));
  }
  if (words) {
    std::string list;
    for (size_t i = 0; i < first; ++i) list += (i ? " " : "") + hex(rows[i], 4);
    *words = std::to_string(first) + " specials (" + list + ")";
    if (stride)
      *words += " and " + std::to_string(rows.size() - first) + " patterns " + hex(stride / 2, 4) + " + " +
                std::to_string(stride) + " k";
    *words += "; a stated subset of the 65536 patterns (--stage-rows; every pattern at 65536)";
  }
  return rows;
}

/// Amaxes every class visits, the typical first (a sweep of a few rows takes the first): one and 448 * 6 (global
/// scales 2688 and 1), 6, 448, 0.1, then zero, the subnormal ends, the normal ends, around 448 * 6, Inf, NaN, -0, -1.
std::vector<uint16_t> special_amaxes(ref::Dtype d) {
  const bool bf = d == ref::Dtype::kBf16;
  std::vector<uint16_t> s = {t_of(d, 1.0f), t_of(d, 2688.0f), t_of(d, 6.0f), t_of(d, 448.0f), t_of(d, 0.1f), 0x0000,
                             0x0001, uint16_t(bf ? 0x007F : 0x03FF), uint16_t(bf ? 0x0080 : 0x0400),
                             uint16_t(t_of(d, 2688.0f) + 1), uint16_t(t_of(d, 2688.0f) - 1),
                             uint16_t(bf ? 0x7F7F : 0x7BFF), inf_bits(d), nan_bits(d), 0x8000, t_of(d, -1.0f)};
  return s;
}

}  // namespace

const std::vector<CheckClass>& quant_check_classes() {
  static const std::vector<CheckClass> c = {CheckClass::kRejection, CheckClass::kWidths, CheckClass::kStages,
                                            CheckClass::kBlocks,    CheckClass::kLayout, CheckClass::kShapes,
                                            CheckClass::kBatch,     CheckClass::kRepeat, CheckClass::kStreams,
                                            CheckClass::kGraph,     CheckClass::kHistory};
  return c;
}

namespace {

bool all_poison(const std::vector<uint8_t>& b) {
  // The runner's images hold kPoison's little-endian bytes from an even address; a misaligned tensor starts inside.
  for (int phase = 0; phase < 2; ++phase) {
    bool ok = true;
    for (size_t i = 0; i < b.size() && ok; ++i)
      ok = b[i] == uint8_t((i + size_t(phase)) % 2 == 0 ? kPoison & 0xFF : kPoison >> 8);
    if (ok) return true;
  }
  return false;
}

void quant_rejection(const QuantContext& ctx, CheckResult& r) {
  const QuantPlan& plan = *ctx.model.plan;
  const ref::QuantOpSpec& op = plan.op();
  const ref::Dtype d = plan.dtype();
  const int64_t n = op.block_size;
  const int64_t v = std::max<int64_t>(1, ctx.info.vector_elems());
  QuantTally t(ctx, r);
  CounterRng rng{quant_class_seed(ctx, CheckClass::kRejection)};
  struct Probe {
    std::string what;
    QuantCallSpec spec;
    bool valid = false;
  };
  std::vector<Probe> probes;
  auto base = [&](int64_t rows, int64_t width) {
    QuantCallSpec s = make_quant_call(op, ctx.model.contract, rows, width, ctx.abi_dtype, op.scale_layouts[0]);
    for (auto& b : s.buffers)
      for (auto& e : b) e = counter_pattern(d == ref::Dtype::kBf16, rng.seed, rng.next++);
    if (!s.scalars.empty()) plan.scalars_from_tensor_amax(t_of(d, 3.0f), s.scalars.data());
    return s;
  };
  // Widths that are multiples of the vector but not of the block: the buffers hold what the layout needs.
  std::vector<int64_t> widths;
  for (int64_t w : {n / 2, n + v, 3 * n / 2, 2 * n - v})
    if (w > 0 && w % n != 0 && w % v == 0 && std::find(widths.begin(), widths.end(), w) == widths.end()) widths.push_back(w);
  if (widths.empty()) widths.push_back(n + 1);
  for (int64_t w : widths)
    probes.push_back({"width " + std::to_string(w) + " not a multiple of the block " + std::to_string(n), base(2, w)});
  for (int32_t dt : {int32_t(FUSEPROOF_DTYPE_FLOAT32), int32_t(FUSEPROOF_DTYPE_INT16)}) {
    Probe p{"dtype code " + std::to_string(dt), base(2, 4 * n)};
    p.spec.dtype = dt;
    probes.push_back(p);
  }
  {
    Probe p{"rows 0", base(1, 4 * n)};
    p.spec.rows = 0;
    probes.push_back(p);
  }
  for (int i = 0; i < int(op.inputs.size()); ++i) {
    Probe p{op.inputs[size_t(i)].name + " null", base(2, 4 * n)};
    p.spec.null_input.assign(op.inputs.size(), false);
    p.spec.null_input[size_t(i)] = true;
    probes.push_back(p);
  }
  {
    Probe p{"codes null", base(2, 4 * n)};
    p.spec.null_codes = true;
    probes.push_back(p);
    Probe q{"scales null", base(2, 4 * n)};
    q.spec.null_scales = true;
    probes.push_back(q);
  }
  if (ctx.info.vector_bytes > 2)
    for (int i = 0; i < int(op.inputs.size()); ++i) {
      Probe p{op.inputs[size_t(i)].name + " misaligned by 2 bytes", base(2, 4 * n)};
      p.spec.input_misalign.assign(op.inputs.size(), 0);
      p.spec.input_misalign[size_t(i)] = 2;
      probes.push_back(p);
    }
  if (ctx.info.vector_bytes > 1) {
    const uint32_t m = ctx.info.vector_bytes > 2 ? 2 : 1;
    Probe p{"codes misaligned by " + std::to_string(m) + " bytes", base(2, 4 * n)};
    p.spec.codes_misalign = m;
    probes.push_back(p);
  }
  {
    Probe p{"scales misaligned by 2 bytes", base(2, 4 * n)};
    p.spec.scales_misalign = 2;
    probes.push_back(p);
  }
  {
    const int32_t k = int32_t(op.inputs.size());
    Probe p{std::to_string(k + 1) + " inputs where the op has " + std::to_string(k), base(2, 4 * n)};
    p.spec.n_inputs_override = k + 1;
    probes.push_back(p);
    Probe q{std::to_string(k - 1) + " inputs where the op has " + std::to_string(k), base(2, 4 * n)};
    q.spec.n_inputs_override = k - 1;
    probes.push_back(q);
  }
  {
    const int32_t k = int32_t(plan.scalars());
    Probe p{std::to_string(k + 1) + " scalars where the contract has " + std::to_string(k), base(2, 4 * n)};
    p.spec.n_scalars_override = k + 1;
    probes.push_back(p);
    if (k > 0) {
      Probe q{std::to_string(k - 1) + " scalars where the contract has " + std::to_string(k), base(2, 4 * n)};
      q.spec.n_scalars_override = k - 1;
      probes.push_back(q);
    }
  }
  for (ref::ScaleLayout l : {ref::ScaleLayout::kLinear, ref::ScaleLayout::kSwizzled128x4})
    if (std::find(op.scale_layouts.begin(), op.scale_layouts.end(), l) == op.scale_layouts.end()) {
      Probe p{std::string("scale layout ") + ref::scale_layout_name(l) + ", which the op lacks", base(2, 4 * n)};
      p.spec.scale_layout_override = int32_t(l);
      probes.push_back(p);
    }
  {
    Probe p{"scale layout 7", base(2, 4 * n)};
    p.spec.scale_layout_override = 7;
    probes.push_back(p);
  }
  probes.push_back({"a valid call", base(3, 4 * n), true});

  size_t not_applicable = 0;
  for (Probe& p : probes) {
    watch_label("rejection probe: " + p.what);
    const QuantOutcome o = ctx.runner.call(p.spec);
    if (o.not_applicable) {
      ++not_applicable;
      continue;
    }
    if (p.valid) {
      const Image want = expected_image(plan, p.spec);
      if (!t.compare(p.spec, o, want, "valid call")) break;
      continue;
    }
    ++r.cases;
    if (!o.fault.empty()) {
      if (!o.subject_fault) throw std::runtime_error("audit: backend failure in rejection probe " + p.what + ": " + o.fault);
      r.fault = "CUDA error in rejection probe " + p.what + " [" + describe_quant_call(p.spec) + "]: " + o.fault;
      break;
    }
    std::string why;
    if (o.rc == 0) why += "returned 0 (accepted); ";
    if (o.rc != 0 && (o.message.empty() || o.message.find('\n') != std::string::npos))
      why += "rejection message must be one non-empty line; ";
    if (!all_poison(o.codes)) why += "wrote the codes; ";
    if (!all_poison(o.scales)) why += "wrote the scales; ";
    if (o.guard_writes) why += "wrote " + std::to_string(o.guard_writes) + " guard bytes; ";
    if (!o.inputs_intact) why += "modified its input " + o.modified + "; ";
    if (!why.empty())
      t.failure(op.name + " " + ref::dtype_name(d) + " reject " + p.what + " [" + describe_quant_call(p.spec) +
                "]: " + why.substr(0, why.size() - 2));
    if (t.stop()) break;
  }
  r.scope = std::to_string(probes.size() - 1) + " invalid calls (widths " ;
  for (size_t i = 0; i < widths.size(); ++i) r.scope += (i ? ", " : "") + std::to_string(widths[i]);
  r.scope += " not a multiple of the " + std::to_string(n) + "-element block, dtype codes 2 and 3, rows 0, null and "
             "misaligned inputs, codes and scales, a wrong input count, a wrong scalar count, a scale layout the op "
             "lacks, scale layout 7): each must return non-zero with a one-line message and leave the poisoned codes "
             "and scales, their guards and the inputs untouched; and one valid call compared byte for byte";
  if (not_applicable)
    r.scope += "; " + std::to_string(not_applicable) + " of them not applicable to this subject (not counted)";
}

/// The scalars of a call from its own tensor's amax (the reference's derivation), or none.
void scalars_from_call(const QuantPlan& plan, QuantCallSpec& s) {
  if (s.scalars.empty()) return;
  uint16_t amax = 0;
  const int n = plan.block_size();
  uint16_t values[128];
  for (int64_t r = 0; r < s.rows; ++r)
    for (int64_t k = 0; k < s.blocks_per_row(); ++k) {
      block_values(plan, s, r, k, values);
      const uint16_t a = plan.block_amax(values, n);
      if (!ref::is_nan_bits(plan.dtype(), a) && a > amax) amax = a;
    }
  plan.scalars_from_tensor_amax(amax, s.scalars.data());
}

void quant_widths(const QuantContext& ctx, CheckResult& r) {
  const QuantPlan& plan = *ctx.model.plan;
  const ref::QuantOpSpec& op = plan.op();
  const bool bf = plan.dtype() == ref::Dtype::kBf16;
  const int64_t n = op.block_size;
  const int64_t max_width =
      ctx.max_width > 0 ? ctx.max_width : ctx.options.max_width > 0 ? ctx.options.max_width : ctx.info.cuda() ? 65536 : 4096;
  const uint64_t seed = quant_class_seed(ctx, CheckClass::kWidths);
  QuantTally t(ctx, r);
  const int64_t count = max_width / n;
  const size_t batch = size_t(std::max(1, ctx.runner.preferred_batch()));
  uint64_t swizzled = 0;
  for (int64_t k0 = 0; k0 < count; k0 += int64_t(batch)) {
    const int64_t kn = std::min<int64_t>(int64_t(batch), count - k0);
    std::vector<QuantCallSpec> specs(static_cast<size_t>(kn));
    parallel_items(size_t(kn), [&](unsigned, size_t j) {
      const int64_t k = k0 + int64_t(j), w = (k + 1) * n;
      // The op's layouts by turns; the scalars from the call's own tensor amax, or 1.0, by turns.
      const ref::ScaleLayout layout = op.scale_layouts[size_t(k) % op.scale_layouts.size()];
      QuantCallSpec s = make_quant_call(op, ctx.model.contract, 3, w, ctx.abi_dtype, layout);
      const uint64_t cs = counter_hash(seed, uint64_t(k));
      uint64_t i = 0;
      for (auto& b : s.buffers)
        for (auto& e : b) e = counter_pattern(bf, cs, i++);
      if ((k / int64_t(op.scale_layouts.size())) % 2 == 0) scalars_from_call(plan, s);
      specs[j] = std::move(s);
    });
    for (const auto& s : specs) swizzled += s.layout == ref::ScaleLayout::kSwizzled128x4;
    if (!run_batches(ctx, t, specs, "widths")) break;
  }
  r.scope = "every width " + std::to_string(n) + ".." + std::to_string(count * n) + " in steps of the " +
            std::to_string(n) + "-element block (" + std::to_string(count) + " widths), 3 rows each, weighted random "
            "patterns in every input (SplitMix64 of --seed, the width and the element)";
  if (op.scale_layouts.size() > 1) r.scope += ", the scale layouts by turns (" + std::to_string(swizzled) + " swizzled)";
  if (plan.scalars() > 0) r.scope += ", the scalars from the call's own tensor amax or 1.0 by turns";
}

/// The rows a stage sweep was asked for: QuantContext::stage_rows, else --stage-rows, else 0 (the backend's default).
uint32_t asked_stage_rows(const QuantContext& ctx) {
  return ctx.stage_rows ? ctx.stage_rows : ctx.options.stage_rows;
}

/// The blocks of one call as a plan sees them, fixed while only the scalars change: each block's amax by the plan's
/// rule, and the blocks in order of amax (one scale step for every block of an amax).
struct AmaxGroups {
  std::vector<uint16_t> amax;    ///< per block, r * blocks + k
  std::vector<uint32_t> order;   ///< block indices sorted by amax (stable)
};

AmaxGroups amax_groups(const QuantPlan& plan, const QuantCallSpec& s, const std::vector<uint16_t>& tv) {
  const int n = plan.block_size();
  AmaxGroups g;
  g.amax.resize(size_t(s.rows * s.blocks_per_row()));
  for (size_t b = 0; b < g.amax.size(); ++b) g.amax[b] = plan.block_amax(tv.data() + b * size_t(n), n);
  g.order.resize(g.amax.size());
  for (size_t b = 0; b < g.order.size(); ++b) g.order[b] = uint32_t(b);
  std::stable_sort(g.order.begin(), g.order.end(), [&](uint32_t x, uint32_t y) { return g.amax[x] < g.amax[y]; });
  return g;
}

/// expected_image of call s with its codes before packing (`raw`, one per element), on one thread. The same
/// arithmetic: a block's scale is plan.scale_step(plan.block_amax(values)), each element's code
/// plan.element_step(value, that state); the state is computed once for every block of one amax, and the code of +0
/// once under it (both are functions of their arguments only). `bytes_present`: Image::codes_present and
/// scales_present too (the claimed contract's image, for QuantTally::compare).
void grouped_image(const QuantPlan& plan, const QuantCallSpec& s, const std::vector<uint16_t>& tv, const AmaxGroups& g,
                   Image& img, std::vector<uint8_t>& raw, bool bytes_present) {
  const int n = plan.block_size();
  const int64_t blocks = s.blocks_per_row();
  const int cell = scale_cell_bytes(plan);
  img.codes.assign(s.codes_bytes, 0);
  img.scales.assign(s.scale_bytes, 0);
  raw.resize(size_t(s.rows * s.width));
  for (size_t i = 0; i < g.order.size();) {
    const uint16_t a = g.amax[g.order[i]];
    const ref::QuantBlockState st = plan.scale_step(a, s.scalars.data());
    int zero_code = -1;
    for (; i < g.order.size() && g.amax[g.order[i]] == a; ++i) {
      const uint32_t b = g.order[i];
      const int64_t r = int64_t(b) / blocks, k = int64_t(b) % blocks;
      const size_t base = size_t(b) * size_t(n);
      for (int e = 0; e < n; ++e) {
        const uint16_t v = tv[base + size_t(e)];
        if (v != 0) {
          raw[base + size_t(e)] = plan.element_step(v, st);
        } else {
          if (zero_code < 0) zero_code = plan.element_step(0, st);
          raw[base + size_t(e)] = uint8_t(zero_code);
        }
      }
      const int64_t off = ref::scale_offset(s.layout, r, k, s.rows, blocks) * cell;
      if (cell == 1) {
        img.scales[size_t(off)] = st.scale.byte;
      } else {
        const uint32_t u = ref::f32_bits(st.scale.value);
        for (int q = 0; q < 4; ++q) img.scales[size_t(off + q)] = uint8_t(u >> (8 * q));
      }
    }
  }
  if (plan.op().element_format == ref::ElementFormat::kE2m1) {
    for (size_t i = 0; i < img.codes.size(); ++i)
      img.codes[i] = uint8_t((raw[2 * i] & 0x0F) | uint8_t((raw[2 * i + 1] & 0x0F) << 4));
  } else {
    std::copy(raw.begin(), raw.end(), img.codes.begin());
  }
  img.has_bytes_present = bytes_present;
  if (!bytes_present) return;
  img.codes_present.fill(false);
  img.scales_present.fill(false);
  for (uint8_t b : img.codes) img.codes_present[b] = true;
  for (uint8_t b : img.scales) img.scales_present[b] = true;
  img.has_bytes_present = true;
}

/// The scale step's calls on the fast path: one call per tensor amax, all of the same blocks (the template `call`),
/// only the scalars differing. The T values and each contract's block amaxes once; per batch of the runner's size
/// the expected images of the claimed contract and of every other (each call and contract on a core of its own,
/// grouped_image), the subject's batch, the comparison (QuantTally::compare, as run_batches), and the distances
/// (QuantTally::distance_batch). Counts, records, distances and --differences lines equal run_batches'. False once the
/// class should stop; `reached`: the rows of the batches begun.
bool scale_sweep(const QuantContext& ctx, QuantTally& t, const QuantCallSpec& call, const std::vector<uint16_t>& rows,
                 bool scalars, std::vector<ContractDistance>& dist, size_t* reached) {
  const QuantPlan& plan = *ctx.model.plan;
  std::vector<const QuantPlan*> plans = {&plan};
  for (const auto& o : ctx.model.others) plans.push_back(o.get());
  std::vector<uint16_t> tv;
  std::vector<AmaxGroups> groups(plans.size());
  {
    const PhaseClock reference("reference values (scale step: amaxes grouped)");
    tv = call_values(plan, call);
    parallel_items(plans.size(), [&](unsigned, size_t p) { groups[p] = amax_groups(*plans[p], call, tv); });
  }
  const size_t batch = size_t(std::max(1, ctx.runner.preferred_batch()));
  // The calls and images of a batch, kept from batch to batch (only the scalars and the bytes change).
  std::vector<QuantCallSpec> specs;
  std::vector<Image> img;
  std::vector<std::vector<uint8_t>> raw;
  for (size_t i0 = 0; i0 < rows.size(); i0 += batch) {
    const size_t i1 = std::min(rows.size(), i0 + batch), nb = i1 - i0;
    *reached = i1;
    const std::string label =
        "scale step" + (scalars ? " up to tensor amax " + hex(rows[i1 - 1], 4) : std::string());
    specs.resize(nb, call);
    for (size_t j = 0; j < nb; ++j)
      if (scalars) plan.scalars_from_tensor_amax(rows[i0 + j], specs[j].scalars.data());
    img.resize(nb * plans.size());
    raw.resize(nb * plans.size());
    watch_label(label + " (calls 0.." + std::to_string(nb - 1) + ")");
    std::vector<QuantOutcome> got;
    {
      // The subject's batch on this thread while the expected images are computed on the others: a runner's host
      // side (guarded images, copies) is serial, and the images need nothing from it.
      const PhaseClock overlapped("reference values and kernel (overlapped)");
      run_workers(2, [&](unsigned w) {
        if (w == 0) {
          got = ctx.runner.call_batch(specs);
          return;
        }
        parallel_items(img.size(), [&](unsigned, size_t q) {
          const size_t j = q / plans.size(), p = q % plans.size();
          grouped_image(*plans[p], specs[j], tv, groups[p], img[q], raw[q], p == 0);
        });
      });
    }
    if (got.size() != specs.size()) throw std::runtime_error("audit: the quant runner returned a short batch");
    {
      const PhaseClock comparison("comparison");
      for (size_t j = 0; j < nb; ++j)
        if (!t.compare(specs[j], got[j], img[j * plans.size()], label + " call " + std::to_string(j))) return false;
    }
    const PhaseClock other("other contracts");
    for (size_t m = 0; m + 1 < plans.size(); ++m) {
      std::vector<QuantTally::DistanceInputs> in(nb);
      for (size_t j = 0; j < nb; ++j) {
        in[j].theirs = &img[j * plans.size() + m + 1];
        in[j].tv = tv.data();
        in[j].theirs_raw = &raw[j * plans.size() + m + 1];
        in[j].own_raw = &raw[j * plans.size()];
        in[j].own_amax = groups[0].amax.data();
        in[j].other_amax = groups[m + 1].amax.data();
      }
      t.distance_batch(dist[m], *plans[m + 1], specs, got, in);
    }
  }
  return true;
}

void quant_stages(const QuantContext& ctx, CheckResult& r) {
  const QuantPlan& plan = *ctx.model.plan;
  const ref::QuantOpSpec& op = plan.op();
  const ref::Dtype d = plan.dtype();
  const int n = op.block_size;
  QuantTally t(ctx, r);
  const Driver dr = make_driver(plan);
  std::vector<ContractDistance> dist(ctx.model.others.size());
  for (size_t m = 0; m < dist.size(); ++m) {
    dist[m].contract = ref::quant_contract_name(ctx.model.others[m]->contract().contract);
    t.open_differences(dist[m]);
  }
  // Rows of the sweeps: as asked, else the backend's defaults (kCudaScaleRows above).
  const uint32_t asked = asked_stage_rows(ctx);
  const uint32_t scale_rows = asked ? asked : ctx.info.cuda() ? kCudaScaleRows : kHostScaleRows;
  const bool scalars = plan.scalars() > 0 && !plan.contract().global_steps.empty();
  std::vector<float> sc(size_t(plan.scalars()), 1.0f);
  std::string scope;
  bool go = true;

  // Stage 1, the scale step: each block one member b (at position b mod block) among zeros, every reachable b, for
  // each tensor amax's scalars (or once, without scalars).
  std::vector<uint16_t> bvals;
  for (uint32_t b = 0; b < 65536; ++b)
    if (dr.reach[b]) bvals.push_back(uint16_t(b));
  const uint16_t zero = 0;
  if (!dr.reach[zero]) throw std::logic_error("audit: " + op.name + ": 0 is not reachable through the activation");
  std::vector<uint16_t> block_list(bvals.size() * size_t(n), 0);
  for (size_t j = 0; j < bvals.size(); ++j) block_list[j * size_t(n) + j % size_t(n)] = bvals[j];
  std::string rows_words;
  const std::vector<uint16_t> amax_rows =
      scalars ? strided_rows(scale_rows, special_amaxes(d), &rows_words) : std::vector<uint16_t>{0};
  uint64_t stage1_blocks = 0;
  // The fast path where every tensor amax is one call of the same blocks (every op: at most 65,536 blocks a call);
  // the generic one (QuantContext::generic_paths) is its test's reference.
  std::vector<QuantCallSpec> specs;
  add_block_calls(ctx, dr, sc, block_list, specs);
  const bool fast = specs.size() == 1 && specs[0].layout == ref::ScaleLayout::kLinear && !ctx.generic_paths;
  if (fast) {
    size_t reached = 0;
    go = scale_sweep(ctx, t, specs[0], amax_rows, scalars, dist, &reached);
    stage1_blocks = uint64_t(bvals.size()) * reached;
  }
  specs.clear();
  // Several tensor amaxes' calls to a batch, so that the runner can overlap them.
  const size_t batch = size_t(std::max(1, ctx.runner.preferred_batch()));
  for (size_t i = 0; i < amax_rows.size() && go && !fast; ++i) {
    if (scalars) plan.scalars_from_tensor_amax(amax_rows[i], sc.data());
    add_block_calls(ctx, dr, sc, block_list, specs);
    stage1_blocks += bvals.size();
    if (specs.size() >= batch || i + 1 == amax_rows.size()) {
      go = run_batches(ctx, t, specs, "scale step" + (scalars ? " up to tensor amax " + hex(amax_rows[i], 4) : std::string()),
                       &dist);
      specs.clear();
    }
  }
  if (scalars)
    scope = "scale step: " + std::to_string(amax_rows.size()) + " tensor amaxes (" + rows_words + "), their scalars by the contract's global steps (" + plan.contract().global_source + "), x " +
            std::to_string(bvals.size()) + " block amaxes: " + std::to_string(stage1_blocks) + " blocks";
  else
    scope = "scale step: every reachable block amax (" + std::to_string(bvals.size()) + " blocks, one member among zeros)";

  // Stage 2, the element step.
  uint64_t stage2_values = 0;
  std::string stage2;
  if (go && e4m3_scales(plan)) {
    // Every reachable E4M3 scale code under each global scale of a set covering every binade: the scales of tensor
    // amaxes 2^k (every k of the dtype) and of a few typical amaxes; per code its largest amax, then every value of
    // magnitude at most that amax.
    std::vector<uint16_t> tensor_amaxes;
    const int kmin = d == ref::Dtype::kBf16 ? -133 : -24, kmax = d == ref::Dtype::kBf16 ? 127 : 15;
    for (int k = kmin; k <= kmax; ++k) tensor_amaxes.push_back(t_of(d, std::ldexp(1.0f, k)));
    const std::vector<uint16_t> typical = {t_of(d, 3.0f), t_of(d, 10.0f), t_of(d, 0.37f), t_of(d, 100.0f),
                                           t_of(d, 2688.0f), t_of(d, 1000.0f)};
    std::vector<uint16_t> g_rows;
    const uint32_t want_g = asked ? std::max(2u, asked / kRowsPerGlobalScale)
                            : ctx.info.cuda() ? kAllRows : kHostScaleRows / kRowsPerGlobalScale;
    if (want_g * kRowsPerGlobalScale >= kAllRows || want_g >= tensor_amaxes.size() + typical.size()) {
      g_rows = tensor_amaxes;
      g_rows.insert(g_rows.end(), typical.begin(), typical.end());
    } else {
      // The host's subset: 1.0 and 2688 (global scales 2688 and 1), then every stride-th binade.
      g_rows = {t_of(d, 1.0f), t_of(d, 2688.0f)};
      const size_t rest = want_g > 2 ? std::min<size_t>(want_g - 2, tensor_amaxes.size()) : 0;
      for (size_t j = 0; j < rest; ++j) g_rows.push_back(tensor_amaxes[(j * tensor_amaxes.size()) / rest]);
      g_rows.resize(std::max<size_t>(1, std::min<size_t>(g_rows.size(), want_g)));
    }
    uint64_t codes_total = 0;
    for (size_t gi = 0; gi < g_rows.size() && go; ++gi) {
      std::vector<QuantCallSpec> specs;
      {
        const PhaseClock inputs("element-step inputs (scale codes, blocks, calls)");
        plan.scalars_from_tensor_amax(g_rows[gi], sc.data());
        std::vector<int32_t> rep(256, -1);  // code -> its largest reachable amax pattern
        for (uint32_t b = 0; b < 0x8000; ++b)
          if (dr.reach[b] && !ref::is_nan_bits(d, uint16_t(b))) {
            const uint8_t q = plan.scale_step(uint16_t(b), sc.data()).scale.byte;
            if (rep[q] < 0 || int32_t(b) > rep[q]) rep[q] = int32_t(b);
          }
        std::vector<uint16_t> blocks;
        for (int q = 0; q < 256; ++q) {
          if (rep[q] < 0) continue;
          ++codes_total;
          const uint16_t a = uint16_t(rep[q]);
          const std::vector<uint16_t> vals = values_up_to(dr, d, a);
          stage2_values += vals.size();
          for (size_t j = 0; j < vals.size(); j += size_t(n - 1)) {
            blocks.push_back(a);
            for (size_t e = 0; e < size_t(n - 1); ++e) blocks.push_back(j + e < vals.size() ? vals[j + e] : zero);
          }
        }
        add_block_calls(ctx, dr, sc, blocks, specs);
      }
      go = run_batches(ctx, t, specs, "element step tensor amax " + hex(g_rows[gi], 4), &dist);
    }
    stage2 = "element step: " + std::to_string(g_rows.size()) + " global scales (" +
             (g_rows.size() >= tensor_amaxes.size() + typical.size()
                  ? "those of the tensor amaxes 2^" + std::to_string(kmin) + "..2^" + std::to_string(kmax) +
                        " and of 3, 10, 0.37, 100, 2688, 1000"
                  : "those of the tensor amaxes " + [&] {
                      std::string l;
                      for (uint16_t a : g_rows) l += (l.empty() ? "" : ", ") + hex(a, 4);
                      return l;
                    }() + ": 1.0 and 2688, then binades by a stride; a stated subset (--stage-rows; at 65536 and CUDA's default: "
                          "the tensor amaxes 2^" + std::to_string(kmin) + "..2^" + std::to_string(kmax) +
                          " and 3, 10, 0.37, 100, 2688, 1000)") +
             "), each reachable scale code (" + std::to_string(codes_total) + " in all) with its largest amax, and " +
             "every value of magnitude at most that amax: " + std::to_string(stage2_values) + " (value, scale) pairs";
  } else if (go) {
    // A binary32 scale: every (value, block amax) pair with |value| <= amax, blocks of amax then block - 1 values.
    const uint32_t want_a = asked ? asked * kAmaxRowsPerRow : ctx.info.cuda() ? kAllRows : kHostScaleRows * kAmaxRowsPerRow;
    std::vector<uint16_t> amaxes;
    std::string amax_words;
    for (uint16_t a : strided_rows(want_a >= 0x8000 ? 65536u : want_a, special_amaxes(d), &amax_words))
      if (a < 0x8000 && dr.reach[a] && !ref::is_nan_bits(d, a)) amaxes.push_back(a);
    std::vector<uint16_t> blocks;
    std::vector<QuantCallSpec> specs;
    for (size_t ai = 0; ai < amaxes.size() && go; ++ai) {
      std::optional<PhaseClock> inputs(std::in_place, "element-step inputs (blocks, calls)");
      const std::vector<uint16_t> vals = values_up_to(dr, d, amaxes[ai]);
      stage2_values += vals.size();
      for (size_t j = 0; j < vals.size(); j += size_t(n - 1)) {
        blocks.push_back(amaxes[ai]);
        for (size_t e = 0; e < size_t(n - 1); ++e) blocks.push_back(j + e < vals.size() ? vals[j + e] : zero);
      }
      if (blocks.size() >= (size_t(1) << 22) || ai + 1 == amaxes.size()) {
        add_block_calls(ctx, dr, sc, blocks, specs);
        blocks.clear();
        inputs.reset();
        go = run_batches(ctx, t, specs, "element step", &dist);
        specs.clear();
      }
    }
    stage2 = "element step: " + std::to_string(amaxes.size()) + " block amaxes (" +
             (want_a >= 0x8000 ? std::string("every finite positive pattern")
                               : "the positive finite ones of " + amax_words) +
             "), each with every value of magnitude at most it (blocks of the amax then " + std::to_string(n - 1) +
             " values): " + std::to_string(stage2_values) + " (value, amax) pairs";
  }
  r.scope = scope + "; " + stage2 + "; inputs: " + dr.words + "; every code and scale compared (cases: codes and "
            "scale cells)";
  for (auto& x : dist) {
    t.finish_distance(x, r.scope);
    r.contract_distances.push_back(std::move(x));
  }
  if (!ctx.model.others_missing.empty()) {
    std::string m;
    for (const auto& s : ctx.model.others_missing) m += (m.empty() ? "" : "; ") + s;
    r.note += (r.note.empty() ? "" : "; ") + ("contracts without a distance: " + m);
  }
}

/// One block of `n` values: `members` first, then zeros.
std::vector<uint16_t> block_of(const std::vector<uint16_t>& members, int n) {
  std::vector<uint16_t> b(size_t(n), 0);
  for (size_t i = 0; i < members.size() && i < size_t(n); ++i) b[i] = members[i];
  return b;
}

void quant_blocks(const QuantContext& ctx, CheckResult& r) {
  const QuantPlan& plan = *ctx.model.plan;
  const ref::Dtype d = plan.dtype();
  const int n = plan.block_size();
  const bool bf = d == ref::Dtype::kBf16;
  QuantTally t(ctx, r);
  const Driver dr = make_driver(plan);
  CounterRng rng{quant_class_seed(ctx, CheckClass::kBlocks)};
  auto reach = [&](uint16_t v) { return dr.reach[v]; };
  // A random reachable value of magnitude below |a| (|v| in [a/64, a)), either sign.
  auto below = [&](uint16_t a) {
    const uint16_t m = abs_bits(a);
    for (int tries = 0; tries < 64; ++tries) {
      const uint16_t lo = uint16_t(m > 0x0300 ? m - 0x0300 : 0);
      const uint16_t p = uint16_t(lo + rng() % std::max<uint16_t>(1, uint16_t(m - lo)));
      const uint16_t v = uint16_t(p | (rng() & 1 ? 0x8000 : 0));
      if (reach(v) && abs_bits(v) < m) return v;
    }
    return uint16_t(0);
  };
  // The scalar sets: global scale 1 and those of a few tensor amaxes; none for a contract without scalars.
  std::vector<std::vector<float>> scalar_sets;
  std::vector<std::string> scalar_words;
  if (plan.scalars() > 0) {
    scalar_sets.push_back(std::vector<float>(size_t(plan.scalars()), 1.0f));
    scalar_words.push_back("1");
    for (float ta : {2688.0f, 3.0f, 0.01f, 60000.0f}) {
      const uint16_t a = t_of(d, ta);
      if (ref::is_nan_bits(d, a) || abs_bits(a) >= inf_bits(d)) continue;
      std::vector<float> s(size_t(plan.scalars()));
      plan.scalars_from_tensor_amax(a, s.data());
      scalar_sets.push_back(s);
      char b[48];
      std::snprintf(b, sizeof b, "that of tensor amax %g", double(ta));
      scalar_words.push_back(b);
    }
  } else {
    scalar_sets.push_back({});
    scalar_words.push_back("none");
  }
  std::map<std::string, uint64_t> kinds;  // what, blocks
  uint16_t nan_any = nan_bits(d);  // a NaN the activation gives exactly
  for (uint32_t p = 0x7FFF; p > 0x7C00 && !reach(nan_any); --p)
    if (ref::is_nan_bits(d, uint16_t(p)) && reach(uint16_t(p))) nan_any = uint16_t(p);
  for (size_t si = 0; si < scalar_sets.size() && !t.stop(); ++si) {
    const std::vector<float>& sc = scalar_sets[si];
    std::vector<uint16_t> blocks;
    // A block whose values are not all reachable through the activation is left out (the scope counts what ran);
    // a NaN member the activation cannot give exactly is replaced by a NaN it gives (its canonical NaN).
    auto add = [&](const char* what, std::vector<uint16_t> b) {
      for (uint16_t& v : b) {
        if (ref::is_nan_bits(d, v) && !reach(v)) v = (v & 0x8000) && reach(uint16_t(nan_any | 0x8000)) ? uint16_t(nan_any | 0x8000) : nan_any;
        if (!reach(v)) return;
      }
      blocks.insert(blocks.end(), b.begin(), b.end());
      ++kinds[what];
    };
    // Midpoints: for a set of amaxes, every value where the contract's element code changes between neighbouring
    // patterns (the E2M1 or E4M3 midpoints after scaling by the block's own scale), with its neighbours.
    std::vector<uint16_t> amaxes = {t_of(d, 1.0f), t_of(d, 6.0f), t_of(d, 448.0f), t_of(d, 2688.0f), t_of(d, 0.3f),
                                    t_of(d, 17.0f)};
    for (int k = 0; k < 6; ++k) amaxes.push_back(uint16_t(0x0400 + rng() % (bf ? 0x7000 : 0x7400)));
    for (uint16_t a : amaxes) {
      if (!reach(a)) continue;
      const ref::QuantBlockState st = plan.scale_step(a, sc.data());
      std::vector<uint16_t> edge;
      uint8_t prev = plan.element_step(0, st);
      for (uint16_t p = 1; p <= abs_bits(a); ++p) {
        const uint8_t c = plan.element_step(p, st);
        if (c != prev)
          for (int dlt = -2; dlt <= 1; ++dlt) {
            const int q = int(p) + dlt;
            if (q >= 0 && q <= abs_bits(a))
              for (uint16_t sign : {uint16_t(0), uint16_t(0x8000)})
                if (reach(uint16_t(q | sign))) edge.push_back(uint16_t(q | sign));
          }
        prev = c;
      }
      for (size_t j = 0; j < edge.size(); j += size_t(n - 1)) {
        std::vector<uint16_t> m = {a};
        for (size_t e = j; e < j + size_t(n - 1) && e < edge.size(); ++e) m.push_back(edge[e]);
        add("midpoint blocks (every value where the contract's code changes between neighbouring patterns under the "
            "block's own scale, i.e. x * output scale at an E2M1 or E4M3 midpoint, with the patterns 2 below and 1 "
            "above, both signs)", block_of(m, n));
      }
    }
    // Zero, signed-zero and subnormal-only blocks.
    add("all +0", block_of({}, n));
    {
      std::vector<uint16_t> m(static_cast<size_t>(n), 0x8000);
      add("all -0", m);
      for (int k = 0; k < 4; ++k) {
        for (auto& v : m) v = rng() & 1 ? 0x8000 : 0x0000;
        add("+0 and -0 mixed", m);
      }
      const uint16_t sub_max = bf ? 0x007F : 0x03FF;
      for (int k = 0; k < 6; ++k) {
        for (auto& v : m) v = uint16_t((1 + rng() % sub_max) | (rng() & 1 ? 0x8000 : 0));
        if (k == 0) m[0] = sub_max;
        if (k == 1) m[0] = 0x0001;
        add("subnormal only", m);
      }
    }
    // NaN and Inf members at varying positions.
    const uint16_t one = t_of(d, 1.0f);
    const std::vector<std::pair<const char*, std::vector<uint16_t>>> specials = {
        {"a NaN member", {nan_bits(d)}},
        {"a NaN member", {uint16_t(nan_bits(d) | 0x8000)}},
        {"a NaN member", {uint16_t(inf_bits(d) | 1)}},
        {"an Inf member", {inf_bits(d)}},
        {"an Inf member", {uint16_t(inf_bits(d) | 0x8000)}},
        {"NaN and Inf members", {nan_bits(d), inf_bits(d)}}};
    for (const auto& [what, members] : specials)
      for (int pos = 0; pos < n; pos += std::max(1, n / 4)) {
        std::vector<uint16_t> m(static_cast<size_t>(n));
        for (auto& v : m) v = below(one);
        for (size_t j = 0; j < members.size(); ++j) m[size_t(pos + int(j)) % size_t(n)] = members[j];
        add(what, m);
      }
    {
      std::vector<uint16_t> m(static_cast<size_t>(n), nan_bits(d));
      add("all NaN", m);
      std::fill(m.begin(), m.end(), inf_bits(d));
      add("all Inf", m);
    }
    // Amaxes at and around 448 * 6, 480 and 464 themselves, and where the scale g * amax / 6 is 448, 464, 480.
    std::vector<uint16_t> edges;
    for (float v : {2688.0f, 480.0f, 464.0f, 448.0f}) edges.push_back(t_of(d, v));
    const float g = sc.empty() ? 1.0f : sc[0];
    if (g > 0 && std::isfinite(g))
      for (float s : {448.0f, 464.0f, 480.0f}) edges.push_back(t_of(d, 6.0f * s / g));
    for (uint16_t e : edges)
      for (int dlt = -3; dlt <= 3; ++dlt) {
        const uint16_t a = uint16_t(e + dlt);
        if (ref::is_nan_bits(d, a) || abs_bits(a) >= inf_bits(d) || (a & 0x8000)) continue;
        std::vector<uint16_t> m(static_cast<size_t>(n));
        for (auto& v : m) v = below(a);
        m[size_t(dlt + 3) % size_t(n)] = a;
        add("amax at and around 2688, 480, 464 and the scales 448, 464, 480", m);
      }
    // The maximum at every position of a block, positive and negative.
    for (uint16_t a : {t_of(d, 1.5f), t_of(d, 2688.0f), t_of(d, 0.02f)})
      for (int pos = 0; pos < n; ++pos)
        for (uint16_t sign : {uint16_t(0), uint16_t(0x8000)}) {
          std::vector<uint16_t> m(static_cast<size_t>(n));
          for (auto& v : m) v = below(a);
          m[size_t(pos)] = uint16_t(a | sign);
          add(sign ? "the maximum negative at every position" : "the maximum at every position", m);
        }
    std::vector<QuantCallSpec> specs;
    add_block_calls(ctx, dr, sc, blocks, specs, 8, int64_t(1) << 16);
    if (!run_batches(ctx, t, specs, "blocks")) break;
  }
  std::string kinds_text;
  uint64_t total = 0;
  for (const auto& [what, count] : kinds) {
    kinds_text += (kinds_text.empty() ? "" : ", ") + std::to_string(count) + " " + what;
    total += count;
  }
  std::string scalars_text;
  for (const auto& w : scalar_words) scalars_text += (scalars_text.empty() ? "" : ", ") + w;
  r.scope = std::to_string(total) + " blocks over " + std::to_string(scalar_sets.size()) + " scalar sets (global scale " +
            scalars_text + "): " + kinds_text + "; inputs: " + dr.words;
}

void quant_layout(const QuantContext& ctx, CheckResult& r) {
  const QuantPlan& plan = *ctx.model.plan;
  const ref::QuantOpSpec& op = plan.op();
  const bool bf = plan.dtype() == ref::Dtype::kBf16;
  const int64_t n = op.block_size;
  QuantTally t(ctx, r);
  const uint64_t seed = quant_class_seed(ctx, CheckClass::kLayout);
  const std::vector<int64_t> rows_list = {1, 31, 32, 127, 128, 129, 300};
  const std::vector<int64_t> blocks_list = {1, 3, 4, 5, 7};
  std::vector<QuantCallSpec> specs;
  uint64_t k = 0, padding = 0;
  for (ref::ScaleLayout l : op.scale_layouts)
    for (int64_t rows : rows_list)
      for (int64_t blocks : blocks_list) {
        QuantCallSpec s = make_quant_call(op, ctx.model.contract, rows, blocks * n, ctx.abi_dtype, l);
        const uint64_t cs = counter_hash(seed, k++);
        uint64_t i = 0;
        for (auto& b : s.buffers)
          for (auto& e : b) e = counter_pattern(bf, cs, i++);
        scalars_from_call(plan, s);
        padding += uint64_t(ref::scale_tensor_size(l, rows, blocks) - rows * blocks);
        specs.push_back(std::move(s));
      }
  run_batches(ctx, t, specs, "layout");
  std::string layouts;
  for (ref::ScaleLayout l : op.scale_layouts) layouts += (layouts.empty() ? "" : ", ") + std::string(ref::scale_layout_name(l));
  r.scope = std::to_string(specs.size()) + " calls: scale layouts " + layouts + " x rows 1, 31, 32, 127, 128, 129, 300 x " +
            "blocks per row 1, 3, 4, 5, 7; every scale cell at its offset (ref::scale_offset), " + std::to_string(padding) +
            " padding cells that must be 0x00, every code byte (" +
            (op.element_format == ref::ElementFormat::kE2m1 ? "two E2M1 nibbles a byte, element 2j low" : "one E4M3 byte an element") +
            "); weighted random patterns, the scalars from each call's tensor amax";
}

}  // namespace

void run_quant_class(CheckClass c, const QuantContext& ctx, CheckResult& r) {
  r.cls = c;
  r.dtype = ctx.model.dtype;
  switch (c) {
    case CheckClass::kRejection: quant_rejection(ctx, r); break;
    case CheckClass::kWidths: quant_widths(ctx, r); break;
    case CheckClass::kStages: quant_stages(ctx, r); break;
    case CheckClass::kBlocks: quant_blocks(ctx, r); break;
    case CheckClass::kLayout: quant_layout(ctx, r); break;
    case CheckClass::kShapes: quant_shapes(ctx, r); break;
    case CheckClass::kBatch: quant_batch(ctx, r); break;
    case CheckClass::kRepeat: quant_repeat(ctx, r); break;
    case CheckClass::kStreams: quant_streams(ctx, r); break;
    case CheckClass::kGraph: quant_graph(ctx, r); break;
    case CheckClass::kHistory: quant_history(ctx, r); break;
    default: throw std::logic_error(std::string("audit: ") + check_class_name(c) + " is not a quantization class");
  }
}

// The helpers above, for audit/quant_call_classes.cpp (audit/quant_class_support.h).

std::vector<QuantExpected> expected_quant_images(const QuantContext& ctx, const std::vector<QuantCallSpec>& specs,
                                                 ref::QuantCodeMemos* memos) {
  return expected_images(*ctx.model.plan, specs, batch_values(*ctx.model.plan, specs), memos);
}

struct QuantCallTally::Impl {
  Impl(const QuantContext& ctx, CheckResult& r) : ctx(ctx), r(r), t(ctx, r) {}
  const QuantContext& ctx;
  CheckResult& r;
  QuantTally t;
};

QuantCallTally::QuantCallTally(const QuantContext& ctx, CheckResult& r) : impl_(std::make_unique<Impl>(ctx, r)) {}
QuantCallTally::~QuantCallTally() = default;
bool QuantCallTally::compare(const QuantCallSpec& s, const QuantOutcome& o, const QuantExpected& want,
                             const std::string& label) {
  CheckResult& r = impl_->r;
  const size_t at = r.records.size();
  const uint64_t before = r.mismatches;
  const bool go = impl_->t.compare(s, o, want, label);
  // The element lines do not say which of the class's calls they come from: a line naming the call goes first.
  const size_t cap = impl_->ctx.options.records;
  if (r.mismatches > before && at < cap && (at == r.records.size() || r.records[at].find(label) == std::string::npos)) {
    r.records.insert(r.records.begin() + long(at),
                     s.op->name + " " + ref::dtype_name(impl_->ctx.model.dtype) + " " + label + " [" +
                         describe_quant_call(s) + "]: " + std::to_string(r.mismatches - before) +
                         " mismatches against the contract (codes, scale cells, guards or inputs), the first below");
    if (r.records.size() > cap) r.records.pop_back();
  }
  return go;
}
void QuantCallTally::failure(const std::string& line, uint64_t count) { impl_->t.failure(line, count); }
bool QuantCallTally::stop() { return impl_->t.stop(); }

uint64_t quant_seed(const QuantContext& ctx, CheckClass c) { return quant_class_seed(ctx, c); }

void quant_scalars_from_call(const ref::QuantPlan& plan, QuantCallSpec& s) { scalars_from_call(plan, s); }

}  // namespace fuseproof::audit
