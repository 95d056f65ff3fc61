// quant_model.cpp: the claimed contract's plan of a quantization op, and every other contract's beside it, with
// rcp.approx.ftz from the golden MUFU capture and the activation stage under the golden architecture's cuda model.
#include "audit/quant_model.h"

#include <stdexcept>

#include "audit/op_model.h"
#include "common/exit_status.h"
#include "reference/math_model.h"
#include "reference/rcp_approx_model.h"

namespace fuseproof::audit {

namespace {

/// What the plans point into: the MUFU tables and the math configuration of the activation stage.
struct QuantModelData {
  std::shared_ptr<const ref::MufuModel> mufu;
  ref::MathConfig cfg;
};

}  // namespace

QuantModel make_quant_model(const ref::QuantOpSpec& op, ref::QuantContract contract, ref::Dtype d,
                            const GoldenArch& golden, ref::MathModel math, bool tables_must_equal) {
  if (!op.contract(contract))
    throw UsageError("audit: op " + op.name + " has no contract " + ref::quant_contract_name(contract));
  auto data = std::make_shared<QuantModelData>();
  const bool fused = !op.activation.family_op.empty();
  // The MUFU capture (two 32 MB tables, read and checked in every class's child) serves only a fused op's activation
  // and the rcp.approx steps of a contract the op declares: an op without either never loads it.
  bool rcp_steps = false;
  for (const ref::QuantContractSpec& c : op.contracts)
    for (const auto* steps : {&c.scale_steps, &c.element_steps, &c.global_steps})
      for (const ref::QuantStep& s : *steps) rcp_steps |= s.op == ref::QuantOp::kRcpApprox;
  const bool cuda_stage = fused && math == ref::MathModel::kCuda;
  if ((cuda_stage || rcp_steps) && golden.has_mufu()) data->mufu = golden.mufu_shared();
  data->cfg.math = fused ? math : ref::MathModel::kLibm;  // read only by a fused op's activation stage
  if (cuda_stage) {
    if (!data->mufu)
      throw MissingDataError("audit: " + op.name + "'s activation stage runs under the cuda math model, and " +
                             golden.label() + " has no MUFU tables (mufu_tables.tar.xz)");
    data->cfg.mufu = data->mufu.get();
  }
  ref::QuantModels models;
  if (data->mufu) {
    const ref::RcpApproxTable* table = &data->mufu->rcp_table();
    models.rcp_approx = [table](float x) { return ref::rcp_approx_ftz(x, *table); };
  }
  const std::string missing_rcp = golden.label() + " has no MUFU capture (mufu_tables.tar.xz: the rcp.approx table)";
  auto plan_of = [&](ref::QuantContract c) {
    try {
      return std::make_shared<const ref::QuantPlan>(op, c, d, models, data->cfg);
    } catch (const std::domain_error& e) {  // QuantModelMissing, or the cuda model past the golden ex2 points
      if (dynamic_cast<const ref::QuantModelMissing*>(&e)) throw;
      throw MissingDataError(std::string("audit: ") + e.what() + " (" + golden.label() +
                             "/ex2_points.tar.xz: capture_golden.py --add-ops --refresh-ex2-points)");
    }
  };
  QuantModel m;
  m.op = &op;
  m.contract = contract;
  m.dtype = d;
  try {
    m.plan = plan_of(contract);
  } catch (const ref::QuantModelMissing&) {
    throw MissingDataError("audit: contract " + std::string(ref::quant_contract_name(contract)) + " of " + op.name +
                           " needs rcp.approx.ftz.f32 captured on the GPU, and " + missing_rcp);
  }
  for (const ref::QuantContractSpec& c : op.contracts) {
    if (c.contract == contract) continue;
    try {
      m.others.push_back(plan_of(c.contract));
    } catch (const ref::QuantModelMissing&) {
      m.others_missing.push_back(std::string(ref::quant_contract_name(c.contract)) + ": no golden MUFU data (" +
                                 missing_rcp + ")");
    }
  }
  const bool used_golden = cuda_stage || ref::needs_rcp_approx(*op.contract(contract));
  m.golden_label = used_golden ? golden.label() : "";
  const ref::QuantContractSpec& cs = *op.contract(contract);
  m.description = op.formula + ", contract " + ref::quant_contract_name(contract) + " (" + cs.source + "; " +
                  cs.meaning + ")";
  if (fused) {
    // The activation stage's tables against the golden capture, as the family's model checks them: a cuda model that
    // differs from the device is no oracle.
    std::string words;
    const ref::OpSpec& fam = *ref::find_op(op.activation.family_op);
    for (const TableComparison& t : compare_activation_tables(fam, op.activation.contract, d, data->cfg, golden)) {
      if (t.differ && tables_must_equal && cuda_stage)
        throw std::runtime_error("audit: the cuda math model differs from " + golden.label() + "/" + t.file + " at " +
                                 std::to_string(t.differ) + " inputs (" + t.first + "); the oracle cannot be trusted");
      words += (words.empty() ? "" : ", ") + t.file +
               (t.differ ? " DIFFERS at " + std::to_string(t.differ) + " inputs (" + t.first + ")"
                         : std::string(" equal at all 65536 inputs"));
    }
    m.description += "; activation " + op.activation.family_op + " eager under the " + ref::math_model_name(math) +
                     " math model" + (cuda_stage ? " of " + golden.label() : std::string()) +
                     (words.empty() ? std::string() : " (" + golden.label() + ": " + words + ")");
  }
  if (ref::needs_rcp_approx(cs)) m.description += "; rcp.approx.ftz from " + golden.label() + "'s MUFU capture";
  m.keep = data;
  return m;
}

}  // namespace fuseproof::audit
