// quant_model.h: what a correct kernel of a quantization op returns under a contract (reference/quant_block.h), and
// every other contract of the op beside it, so that a report can say how far apart they are.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/golden_library.h"
#include "reference/quant_block.h"

namespace fuseproof::audit {

struct QuantModel {
  const ref::QuantOpSpec* op = nullptr;
  ref::QuantContract contract = ref::QuantContract::kVllmRef;
  ref::Dtype dtype = ref::Dtype::kBf16;
  std::shared_ptr<const ref::QuantPlan> plan;  ///< the claimed contract
  /// Every other contract of the op, in the op's order, whose models are at hand.
  std::vector<std::shared_ptr<const ref::QuantPlan>> others;
  /// "rcp-approx: no golden MUFU data (golden/sm_90 lacks rcp_approx table)": contracts left out of `others`, and why.
  std::vector<std::string> others_missing;
  std::shared_ptr<const void> keep;            ///< the golden models the plans point into (the rcp.approx table)
  std::string description;                     ///< one line for the report
  std::string golden_label;                    ///< "golden/sm_90", or "" when no golden data was needed
};

/// Builds the model of (op, contract, dtype). The activation stage of a fused op runs under `math`, as the
/// elementwise ops' models do (--math-model: cuda on a device, libm on the host, whose emulation computes with the
/// host's libm); its activation tables are compared with golden's. Under the cuda model (golden's MUFU data) with
/// `tables_must_equal` (a device run) a table that differs is std::runtime_error (the oracle cannot be trusted), else
/// the difference is stated in the description (the reference self-audit FAILs on it). rcp.approx.ftz comes from
/// golden's MUFU capture. MissingDataError (one line) when the claimed contract needs golden data that is absent;
/// UsageError when the op has no such contract.
QuantModel make_quant_model(const ref::QuantOpSpec& op, ref::QuantContract contract, ref::Dtype d,
                            const GoldenArch& golden, ref::MathModel math = ref::MathModel::kCuda,
                            bool tables_must_equal = true);

}  // namespace fuseproof::audit
