// quant_block.h: the one interpreter of quantization contracts: a block of T values (after the op's activation
// stage) and the record's scalars to one code byte per element and the block's scale, stage by stage.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <vector>

#include "dtype.h"
#include "math_model.h"
#include "quant_spec.h"

namespace fuseproof::ref {

class OpPlan;

/// Models a contract may need that the reference does not own. rcp_approx is PTX rcp.approx.ftz.f32, bit for bit as
/// the device gives it (a model built from a table captured on the GPU; it may hold that table); empty when none is
/// loaded. Never replaced by exact division: a plan whose contract has a kRcpApprox step refuses to be built without
/// it. It must be thread-safe to call: plans are shared by workers.
struct QuantModels {
  std::function<float(float)> rcp_approx;
};

/// Thrown when a contract needs a model that QuantModels lacks (the CLI reports it as missing data).
struct QuantModelMissing : std::domain_error {
  using std::domain_error::domain_error;
};

/// Whether contract c has a kRcpApprox step.
bool needs_rcp_approx(const QuantContractSpec& c);

/// The block's stored scale: `byte` for E4M3 (and `value` its decoded value), `value` for fp32 and UE8M0.
struct QuantScale {
  uint8_t byte = 0;
  float value = 0.0f;
};

/// Most steps of one contract (scale and element steps together).
inline constexpr int kMaxQuantSteps = 32;

/// The scale stage's result: every scale register, and the stored scale.
struct QuantBlockState {
  float reg[kMaxQuantSteps] = {};
  QuantScale scale;
};

class QuantPlan {
 public:
  /// Compiles `contract` of `op` for dtype d. The activation stage (a family op) runs under cfg, which must outlive the
  /// plan. Throws std::invalid_argument (one line) when the op has no such contract, QuantModelMissing when the
  /// contract needs rcp_approx and `models` has none.
  QuantPlan(const QuantOpSpec& op, QuantContract contract, Dtype d, const QuantModels& models, const MathConfig& cfg);
  ~QuantPlan();
  QuantPlan(const QuantPlan&) = delete;
  QuantPlan& operator=(const QuantPlan&) = delete;

  const QuantOpSpec& op() const { return *op_; }
  const QuantContractSpec& contract() const { return *c_; }
  Dtype dtype() const { return d_; }
  int block_size() const { return op_->block_size; }
  int inputs() const { return int(op_->inputs.size()); }
  int scalars() const { return int(c_->scalars.size()); }
  /// Bytes of one eval record: each input's block as uint16, then each scalar as binary32.
  int record_bytes() const { return inputs() * block_size() * 2 + scalars() * 4; }
  /// Bytes of one output record: a code per element, then the scale (1 byte, or 4 for fp32).
  int output_bytes() const { return block_size() + (c_->scale_format == ScaleFormat::kE4m3 ? 1 : 4); }

  /// The activation stage: element e's T value from the op's inputs in[i][e] (the identity for a quantizer alone).
  uint16_t activation(const uint16_t* const* in, int e) const;
  /// The block's amax as a T pattern, by the contract's rule, over n values.
  uint16_t block_amax(const uint16_t* values, int n) const;
  /// The record's scalars as the reference derives them from the tensor's amax (a T pattern): global_steps.
  void scalars_from_tensor_amax(uint16_t tensor_amax, float* scalars) const;
  /// Stage 1, the scale step: every scale register from the block's amax and the scalars.
  QuantBlockState scale_step(uint16_t amax, const float* scalars) const;
  /// The scale step with the stored scale forced to `code` (its round-trip step yields that code's value): the
  /// element step's input for every (value, scale code) pair.
  QuantBlockState scale_from_code(uint8_t code, const float* scalars) const;
  /// Stage 2, the element step: the code byte of one T value under the block's registers.
  uint8_t element_step(uint16_t value, const QuantBlockState& st) const;
  /// Both stages on one block of T values (after the activation stage).
  QuantScale quantize(const uint16_t* values, const float* scalars, uint8_t* codes) const;
  /// One eval record (the op's inputs and scalars, little-endian) to one output record.
  void eval_record(const uint8_t* record, uint8_t* out) const;

 private:
  QuantBlockState run_block_steps(const std::vector<QuantStep>& steps, int stored, uint16_t amax, const float* scalars,
                                  const int* forced_code) const;

  const QuantOpSpec* op_;
  const QuantContractSpec* c_;
  Dtype d_;
  QuantModels models_;
  std::unique_ptr<OpPlan> act_;  ///< the family op's plan, or null
};

/// The element step memoised for one call. Under the call's fixed scalars an element's code is a function of its value
/// and of the few scale registers the element steps read (for an E4M3 scale, functions of its byte: at most 256
/// tuples, however many amaxes the blocks have). So each block's state is computed with QuantPlan::scale_step, and
/// each (value, tuple) code with QuantPlan::element_step once, then looked up. Rows are kept for the first `max_rows`
/// tuples; a block of any other tuple is computed directly by the same functions. The same bytes as
/// QuantPlan::quantize in every case (QuantCodeMemo.* check it). One a worker: not thread-safe.
class QuantCodeMemo {
 public:
  QuantCodeMemo(const QuantPlan& plan, const float* scalars, int max_rows = 256);  ///< max_rows: 0..256
  /// Selects the block of this amax: its state (the scale step's registers and stored scale).
  const QuantBlockState& block(uint16_t amax);
  /// The code of one value under the block selected last.
  uint8_t code(uint16_t value) {
    if (!row_) return plan_.element_step(value, state_);
    const uint64_t bit = uint64_t(1) << (value & 63);
    uint64_t& word = row_->known[value >> 6];
    if (!(word & bit)) {
      row_->code[value] = plan_.element_step(value, row_->state);
      word |= bit;
    }
    return row_->code[value];
  }
  /// Tuples with a row of their own (at most max_rows).
  size_t rows() const { return rows_.size(); }
  /// Whether this memo is plan's under these scalars (bit for bit).
  bool serves(const QuantPlan& plan, const float* scalars) const;

 private:
  struct Row {
    QuantBlockState state;
    uint64_t known[1024] = {};
    uint8_t code[65536];
  };
  const QuantPlan& plan_;
  float scalars_[4] = {};
  size_t max_rows_;
  std::vector<int> reads_;             ///< the scale registers the element steps read
  std::vector<int16_t> slot_;          ///< amax -> row index; -1 not seen yet, -2 its tuple has no row
  std::vector<std::unique_ptr<Row>> rows_;
  std::vector<std::pair<std::vector<uint32_t>, int32_t>> keys_;  ///< tuple -> row index, sorted
  Row* row_ = nullptr;      ///< the selected block's row, or null: computed directly
  QuantBlockState state_;   ///< the selected block's state
  uint16_t state_amax_ = 0;  ///< and its amax
  bool has_state_ = false;
};

/// One QuantCodeMemo a worker, kept across the calls of one plan and one set of scalars (the chunks of a large call):
/// prepare(k) before a parallel loop of k workers, then worker w takes memo(w, ...) alone. A memo of another plan or
/// other scalars is replaced.
class QuantCodeMemos {
 public:
  void prepare(unsigned workers) {
    if (memos_.size() < workers) memos_.resize(workers);
  }
  QuantCodeMemo& memo(unsigned w, const QuantPlan& plan, const float* scalars) {
    std::unique_ptr<QuantCodeMemo>& m = memos_.at(w);
    if (!m || !m->serves(plan, scalars)) m = std::make_unique<QuantCodeMemo>(plan, scalars);
    return *m;
  }

 private:
  std::vector<std::unique_ptr<QuantCodeMemo>> memos_;
};

}  // namespace fuseproof::ref
