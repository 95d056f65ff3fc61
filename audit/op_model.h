// op_model.h: what a correct kernel of an op returns under a contract: the reference's plan (reference/op_plan.h),
// cross-checked against the golden data of the architecture the run targets.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/golden_library.h"
#include "reference/op_plan.h"

namespace fuseproof::audit {

struct OpModel {
  const ref::OpSpec* op = nullptr;
  ref::Contract contract = ref::Contract::kEager;
  ref::Dtype dtype = ref::Dtype::kBf16;
  ref::MathModel math = ref::MathModel::kCuda;
  std::shared_ptr<const ref::OpPlan> plan;
  /// The eager contract's plan of the same op and dtype when `contract` is not eager (else null): how far the
  /// contract itself lies from eager is reported beside the subject's distance from the contract.
  std::shared_ptr<const ref::OpPlan> eager_plan;
  std::shared_ptr<const ref::MufuModel> mufu;  ///< the MUFU data the plan's cuda math points into (kept alive here)
  std::string description;              ///< one line for the report
  std::string digest_key;               ///< digests.json key of (op, contract)
  /// The 2^32 digests of eager on the device (cuda model only; 2-input ops: the domain class enumerates their pairs)
  std::optional<std::string> golden_flat, golden_tree;
  std::string golden_label;             ///< "golden/sm_90"

  /// The contract's output for the op's declared inputs in[0 .. inputs()-1] (any number of inputs).
  uint16_t expected(const uint16_t* in) const { return plan->eval(in); }
  /// Eager's output for the same inputs (the contract's own when it is eager).
  uint16_t eager(const uint16_t* in) const { return eager_plan ? eager_plan->eval(in) : plan->eval(in); }
  int inputs() const { return int(op->inputs.size()); }
  /// The golden digests are of this model: the cuda math model, whose tables equal the device's.
  bool digest_applies() const { return math == ref::MathModel::kCuda; }
};

/// Builds the model of (op, contract, dtype) under `math`. The cuda model loads the architecture's MUFU data and its
/// activation tables must equal the device's (golden/<arch>/<act>_<dtype>.bin, and the binary32 table where the
/// contract keeps the activation in binary32): std::runtime_error (one line) when they do not (the oracle itself would
/// be wrong). MissingDataError when golden data the model needs is absent; UsageError for a contract the op lacks.
OpModel make_op_model(const ref::OpSpec& op, ref::Contract contract, ref::Dtype d, ref::MathModel math,
                      const GoldenArch& golden);

/// The activation tables of one model compared with the device's: (file, entries that differ); binary32 tables
/// compare NaN with NaN whatever the payload (cvt.rn writes 0x7FFF for every NaN after the last rounding).
struct TableComparison {
  std::string file;
  uint64_t differ = 0;
  std::string first;  ///< "x=0x3F80 => 0x... expected 0x..." for the first two
};
std::vector<TableComparison> compare_activation_tables(const ref::OpSpec& op, ref::Contract contract, ref::Dtype d,
                                                       const ref::MathConfig& cfg, const GoldenArch& golden);

}  // namespace fuseproof::audit
