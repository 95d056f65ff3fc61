// quant_block.cpp: the quantization contracts' interpreter: the step list of quant_spec.h evaluated in binary32, one
// rounding per step, NaN results the GPU's canonical 0x7FFFFFFF.
#include "quant_block.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "e2m1.h"
#include "f32_to_e4m3.h"
#include "half_codec.h"
#include "op_plan.h"

namespace fuseproof::ref {

namespace {

/// An invalid operation on the device gives the positive canonical NaN (x86 would give a negative one): every
/// arithmetic step's NaN is replaced by it, so the model does not inherit the host's NaN.
inline float canon(float f) { return f != f ? f32_from_bits(0x7FFFFFFFu) : f; }

inline uint16_t abs_bits(uint16_t h) { return uint16_t(h & 0x7FFFu); }

/// torch.exp2(torch.ceil(torch.log2(a))) on binary32: log2 rounded to binary32 (modelled correctly rounded: the
/// binary64 log2 rounded once), so for a just above 2^k the log2 can round to k and the result is 2^k < a (for |k| >=
/// 2 the gap log2(1 + 2^-23) is under half an ulp of k). NaN and a < 0 give the canonical NaN, 0 gives 0 (exp2(-Inf)),
/// +Inf stays +Inf, ceil 128 overflows to +Inf; 2^c below 2^-149 is 0.
float exp2_ceil_log2_f32(float a) {
  if (a != a || a < 0.0f) return f32_from_bits(0x7FFFFFFFu);
  if (a == 0.0f || a == INFINITY) return a;
  const float l = float(std::log2(double(a)));
  const int c = int(std::ceil(l));
  return c > 127 ? INFINITY : std::ldexp(1.0f, c);
}

}  // namespace

bool needs_rcp_approx(const QuantContractSpec& c) {
  for (const auto* list : {&c.scale_steps, &c.element_steps})
    for (const QuantStep& s : *list)
      if (s.op == QuantOp::kRcpApprox) return true;
  return false;
}

QuantPlan::QuantPlan(const QuantOpSpec& op, QuantContract contract, Dtype d, const QuantModels& models,
                     const MathConfig& cfg)
    : op_(&op), c_(op.contract(contract)), d_(d), models_(models) {
  if (!c_)
    throw std::invalid_argument(op.name + " has no contract " + quant_contract_name(contract));
  if (int(c_->scale_steps.size() + c_->element_steps.size()) > kMaxQuantSteps)
    throw std::invalid_argument(op.name + " " + quant_contract_name(contract) + ": more than " +
                                std::to_string(kMaxQuantSteps) + " steps");
  if (needs_rcp_approx(*c_) && !models_.rcp_approx)
    throw QuantModelMissing(std::string("contract ") + quant_contract_name(contract) +
                            " needs the rcp.approx.ftz.f32 model (a table captured on the GPU), and none is loaded");
  if (!op.activation.family_op.empty()) {
    const OpSpec* fam = find_op(op.activation.family_op);
    if (!fam) throw std::invalid_argument(op.name + ": unknown family op " + op.activation.family_op);
    act_ = std::make_unique<OpPlan>(*fam, op.activation.contract, d, cfg);
  }
}

QuantPlan::~QuantPlan() = default;

uint16_t QuantPlan::activation(const uint16_t* const* in, int e) const {
  if (!act_) return in[0][e];
  uint16_t v[kMaxOpInputs];
  for (int i = 0; i < inputs(); ++i) v[i] = in[i][e];
  return act_->eval(v);
}

uint16_t QuantPlan::block_amax(const uint16_t* values, int n) const {
  AmaxRule rule = AmaxRule::kTorchMax;
  for (const QuantStep& s : c_->scale_steps)
    if (s.op == QuantOp::kAmax) rule = s.amax;
  // |x| patterns of one dtype order like their magnitudes, so the maximum is an integer maximum.
  uint16_t best = 0;
  bool any = false;
  for (int i = 0; i < n; ++i) {
    const uint16_t a = abs_bits(values[i]);
    if (is_nan_bits(d_, a)) {
      if (rule == AmaxRule::kTorchMax) return a;  // torch.max propagates the first NaN (abs cleared its sign)
      continue;                                   // max.{f16,bf16}x2 returns the other operand
    }
    if (!any || a > best) best = a;
    any = true;
  }
  return any ? best : uint16_t(0x7FFF);  // every member NaN: __hmax2 gives the canonical NaN
}

QuantBlockState QuantPlan::run_block_steps(const std::vector<QuantStep>& steps, int stored, uint16_t amax,
                                           const float* scalars, const int* forced_code) const {
  QuantBlockState st;
  float* r = st.reg;
  for (size_t i = 0; i < steps.size(); ++i) {
    const QuantStep& s = steps[i];
    const float a = s.a >= 0 ? r[s.a] : 0.0f, b = s.b >= 0 ? r[s.b] : 0.0f;
    float v = 0.0f;
    switch (s.op) {
      case QuantOp::kAmax: v = half_to_f32(d_, amax); break;
      case QuantOp::kScalar: v = scalars[s.index]; break;
      case QuantOp::kConst: v = s.value; break;
      case QuantOp::kClampMinHalf: {
        const float eps = half_to_f32(d_, f32_to_half(d_, s.value, NanPolicy::kCudaCvtRn));
        v = a != a ? a : (a < eps ? eps : a);
        break;
      }
      case QuantOp::kMul: v = canon(a * b); break;
      case QuantOp::kDiv: v = canon(a / b); break;
      case QuantOp::kRcpExact: v = canon(1.0f / a); break;
      case QuantOp::kRcpApprox: v = models_.rcp_approx(a); break;
      case QuantOp::kMin: v = a != a ? a : (a < s.value ? a : s.value); break;
      case QuantOp::kClamp: v = a != a ? a : (a < s.value ? s.value : a > s.value2 ? s.value2 : a); break;
      case QuantOp::kIfZero: v = a == 0.0f ? b : r[s.c]; break;
      case QuantOp::kE4m3RoundTrip: {
        const uint8_t code = forced_code ? uint8_t(*forced_code) : f32_to_e4m3(a, s.overflow);
        v = e4m3_to_f32(code);
        if (int(i) == stored) st.scale.byte = code;
        break;
      }
      case QuantOp::kPow2Ceil: v = exp2_ceil_log2_f32(a); break;
      case QuantOp::kMax: v = a != a ? a : (a > s.value ? a : s.value); break;
      default: throw std::logic_error("quant plan: an element step among the block steps");
    }
    r[i] = v;
    if (int(i) == stored) st.scale.value = v;
  }
  return st;
}

void QuantPlan::scalars_from_tensor_amax(uint16_t tensor_amax, float* scalars) const {
  const QuantBlockState st = run_block_steps(c_->global_steps, -1, tensor_amax, nullptr, nullptr);
  for (size_t j = 0; j < c_->global_out.size(); ++j) scalars[j] = st.reg[c_->global_out[j]];
}

QuantBlockState QuantPlan::scale_step(uint16_t amax, const float* scalars) const {
  return run_block_steps(c_->scale_steps, c_->scale_out, amax, scalars, nullptr);
}

QuantBlockState QuantPlan::scale_from_code(uint8_t code, const float* scalars) const {
  if (c_->scale_format != ScaleFormat::kE4m3)
    throw std::invalid_argument(std::string(quant_contract_name(c_->contract)) + " stores a binary32 scale: no scale code");
  const int forced = code;
  // The steps before the round trip still run (on amax 0); only registers after it reach the elements.
  return run_block_steps(c_->scale_steps, c_->scale_out, 0, scalars, &forced);
}

uint8_t QuantPlan::element_step(uint16_t value, const QuantBlockState& st) const {
  // Registers below n are the block's (read in place), from n on this element's.
  const int n = int(c_->scale_steps.size());
  float e[kMaxQuantSteps];
  auto reg = [&](int i) { return i < n ? st.reg[i] : e[i - n]; };
  for (size_t k = 0; k < c_->element_steps.size(); ++k) {
    const QuantStep& s = c_->element_steps[k];
    const float a = s.a >= 0 ? reg(s.a) : 0.0f, b = s.b >= 0 ? reg(s.b) : 0.0f;
    float v = 0.0f;
    switch (s.op) {
      case QuantOp::kElement: v = half_to_f32(d_, value); break;
      case QuantOp::kConst: v = s.value; break;
      case QuantOp::kMul: v = canon(a * b); break;
      case QuantOp::kDiv: v = canon(a / b); break;
      case QuantOp::kRcpExact: v = canon(1.0f / a); break;
      case QuantOp::kRcpApprox: v = models_.rcp_approx(a); break;
      case QuantOp::kMin: v = a != a ? a : (a < s.value ? a : s.value); break;
      case QuantOp::kMax: v = a != a ? a : (a > s.value ? a : s.value); break;
      case QuantOp::kClamp: v = a != a ? a : (a < s.value ? s.value : a > s.value2 ? s.value2 : a); break;
      case QuantOp::kIfZero: v = a == 0.0f ? b : reg(s.c); break;
      case QuantOp::kCodeE2m1Cvt: return f32_to_e2m1(a);
      case QuantOp::kCodeE2m1VllmTable:
        // The table's value coded: grid values are exact, so f32_to_e2m1 is the code, the sign of a -0 result kept.
        return a != a ? kQuantNoCode : f32_to_e2m1(e2m1_vllm_table(a));
      case QuantOp::kCodeE2m1TeTable:
        // cast_to_fp4x2: zeros_like, then masks: NaN matches none (0); -0.0 falls in (x >= 0) & (x <= 0.25) (0);
        // every other value gets the round-to-nearest-even code, sign included ([-0.25, 0) is 0x8).
        return a != a || a == 0.0f ? uint8_t(0) : f32_to_e2m1(a);
      case QuantOp::kCodeE4m3: return f32_to_e4m3(a, s.overflow);
      default: throw std::logic_error("quant plan: a scale-only step among the element steps");
    }
    e[k] = v;
  }
  throw std::logic_error("quant plan: the element steps end without a code");
}

QuantScale QuantPlan::quantize(const uint16_t* values, const float* scalars, uint8_t* codes) const {
  const QuantBlockState st = scale_step(block_amax(values, block_size()), scalars);
  for (int e = 0; e < block_size(); ++e) codes[e] = element_step(values[e], st);
  return st.scale;
}

void QuantPlan::eval_record(const uint8_t* record, uint8_t* out) const {
  const int n = block_size();
  std::vector<uint16_t> in(size_t(inputs()) * size_t(n));
  std::vector<uint16_t> values(static_cast<size_t>(n));
  for (size_t k = 0; k < in.size(); ++k) in[k] = uint16_t(record[2 * k] | (record[2 * k + 1] << 8));
  const uint16_t* rows[kMaxOpInputs];
  for (int i = 0; i < inputs(); ++i) rows[i] = in.data() + size_t(i * n);
  for (int e = 0; e < n; ++e) values[size_t(e)] = activation(rows, e);
  if (scalars() > 4) throw std::logic_error("quant plan: more than 4 scalars");
  float sc[4] = {};
  const uint8_t* sp = record + in.size() * 2;
  for (int j = 0; j < scalars(); ++j) {
    const uint32_t u = uint32_t(sp[4 * j]) | uint32_t(sp[4 * j + 1]) << 8 | uint32_t(sp[4 * j + 2]) << 16 |
                       uint32_t(sp[4 * j + 3]) << 24;
    sc[j] = f32_from_bits(u);
  }
  const QuantScale s = quantize(values.data(), sc, out);
  if (c_->scale_format != ScaleFormat::kE4m3) {
    const uint32_t u = f32_bits(s.value);
    for (int k = 0; k < 4; ++k) out[n + k] = uint8_t(u >> (8 * k));
  } else {
    out[n] = s.byte;
  }
}

QuantCodeMemo::QuantCodeMemo(const QuantPlan& plan, const float* scalars, int max_rows)
    : plan_(plan), max_rows_(size_t(std::clamp(max_rows, 0, 256))), slot_(65536, int16_t(-1)) {
  if (plan.scalars() > 4) throw std::logic_error("quant plan: more than 4 scalars");
  for (int j = 0; j < plan.scalars(); ++j) scalars_[j] = scalars[j];
  const QuantContractSpec& c = plan.contract();
  const int n = int(c.scale_steps.size());
  for (const QuantStep& s : c.element_steps)
    for (int r : {s.a, s.b, s.c})
      if (r >= 0 && r < n && std::find(reads_.begin(), reads_.end(), r) == reads_.end()) reads_.push_back(r);
}

bool QuantCodeMemo::serves(const QuantPlan& plan, const float* scalars) const {
  if (&plan != &plan_) return false;
  for (int j = 0; j < plan.scalars(); ++j)
    if (f32_bits(scalars[j]) != f32_bits(scalars_[j])) return false;
  return true;
}

const QuantBlockState& QuantCodeMemo::block(uint16_t amax) {
  // The state is this amax's own (its scale, its amax register); the codes are the row of its tuple, which any amax
  // of that tuple fills alike (element_step reads nothing else of the state).
  if (has_state_ && amax == state_amax_) return state_;  // runs of blocks of one amax (the element-step sweeps)
  state_ = plan_.scale_step(amax, scalars_);
  state_amax_ = amax;
  has_state_ = true;
  const int16_t s = slot_[amax];
  if (s != -1) {
    row_ = s >= 0 ? rows_[size_t(s)].get() : nullptr;
    return state_;
  }
  std::vector<uint32_t> key;
  key.reserve(reads_.size());
  for (int r : reads_) key.push_back(f32_bits(state_.reg[r]));
  auto it = std::lower_bound(keys_.begin(), keys_.end(), key,
                             [](const auto& e, const std::vector<uint32_t>& k) { return e.first < k; });
  if (it != keys_.end() && it->first == key) {
    slot_[amax] = int16_t(it->second);
  } else if (rows_.size() < max_rows_) {
    rows_.push_back(std::make_unique<Row>());
    rows_.back()->state = state_;
    slot_[amax] = int16_t(rows_.size() - 1);
    keys_.insert(it, {std::move(key), slot_[amax]});
  } else {
    slot_[amax] = -2;
  }
  row_ = slot_[amax] >= 0 ? rows_[size_t(slot_[amax])].get() : nullptr;
  return state_;
}

}  // namespace fuseproof::ref
