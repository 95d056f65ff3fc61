// op_model.cpp: the reference plan of an op, checked against golden tables of the targeted architecture.
#include "audit/op_model.h"

#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>

#include "reference/activation_table.h"

namespace fuseproof::audit {

namespace {

/// The activations of a contract, and whether each is kept in binary32.
std::vector<std::pair<ref::Activation, bool>> activations_of(const ref::ContractSpec& c) {
  std::vector<std::pair<ref::Activation, bool>> v;
  for (const ref::Node& n : c.nodes)
    if (n.op == ref::NodeOp::kActivation) v.emplace_back(n.act, n.precision == ref::Precision::kFloat32);
  return v;
}

bool f32_nan(uint32_t u) { return (u & 0x7FFFFFFFu) > 0x7F800000u; }

}  // namespace

std::vector<TableComparison> compare_activation_tables(const ref::OpSpec& op, ref::Contract contract, ref::Dtype d,
                                                       const ref::MathConfig& cfg, const GoldenArch& golden) {
  std::vector<TableComparison> out;
  const ref::ContractSpec* cs = op.contract(contract);
  for (const auto& [act, f32] : activations_of(*cs)) {
    TableComparison t;
    t.file = golden_table_file(act, d, f32);
    char b[96];
    if (f32) {
      const auto want = golden.u32_table(t.file);
      const auto got = ref::activation_table_f32(act, d, cfg);
      for (size_t i = 0; i < want.size(); ++i) {
        if (got[i] == want[i] || (f32_nan(got[i]) && f32_nan(want[i]))) continue;
        if (t.differ++ < 2) {
          std::snprintf(b, sizeof b, "%sx=0x%04zX => 0x%08X expected 0x%08X", t.first.empty() ? "" : "; ", i, got[i],
                        want[i]);
          t.first += b;
        }
      }
    } else {
      const auto want = golden.u16_table(t.file);
      const auto got = ref::activation_table(act, d, cfg);
      for (size_t i = 0; i < want.size(); ++i) {
        if (got[i] == want[i]) continue;
        if (t.differ++ < 2) {
          std::snprintf(b, sizeof b, "%sx=0x%04zX => 0x%04X expected 0x%04X", t.first.empty() ? "" : "; ", i, got[i],
                        want[i]);
          t.first += b;
        }
      }
    }
    out.push_back(t);
  }
  return out;
}

OpModel make_op_model(const ref::OpSpec& op, ref::Contract contract, ref::Dtype d, ref::MathModel math,
                      const GoldenArch& golden) {
  if (!op.contract(contract))
    throw UsageError("audit: op " + op.name + " has no contract " + ref::contract_name(contract));
  OpModel m;
  m.op = &op;
  m.contract = contract;
  m.dtype = d;
  m.math = math;
  m.golden_label = golden.label();
  ref::MathConfig cfg;
  cfg.math = math;
  if (math == ref::MathModel::kCuda) {
    m.mufu = golden.mufu_shared();  // the GoldenArch may go; the plan evaluates through cfg.mufu long after
    cfg.mufu = m.mufu.get();
  }
  try {
    m.plan = std::make_shared<const ref::OpPlan>(op, contract, d, cfg);
    if (contract != ref::Contract::kEager && op.contract(ref::Contract::kEager))
      m.eager_plan = std::make_shared<const ref::OpPlan>(op, ref::Contract::kEager, d, cfg);
  } catch (const std::domain_error& e) {  // the cuda model reached an ex2 argument the golden points lack
    throw MissingDataError(std::string(e.what()) + " (" + golden.label() +
                           "/ex2_points.tar.xz: capture_golden.py --add-ops --refresh-ex2-points)");
  }
  const auto tables = compare_activation_tables(op, contract, d, cfg, golden);
  std::string table_words;
  for (const TableComparison& t : tables) {
    if (math == ref::MathModel::kCuda && t.differ)
      throw std::runtime_error("audit: the cuda math model differs from " + golden.label() + "/" + t.file + " at " +
                               std::to_string(t.differ) + " inputs (" + t.first + "); the oracle cannot be trusted");
    table_words += (table_words.empty() ? "" : ", ") + t.file + (t.differ ? " differs at " + std::to_string(t.differ) +
                                                                                " inputs"
                                                                          : " equal at all 65536 inputs");
  }
  m.digest_key = golden_digest_key(op.name, contract);
  // The 2^32 digests are of a 2-input op's whole domain; an op of more inputs has none (its golden data are per
  // rounding stage, the stages class's).
  if (m.plan->tabulated()) {
    m.golden_flat = golden.digest(m.digest_key, d);
    m.golden_tree = golden.digest(m.digest_key + "_tree", d);
    if (!m.golden_flat && !m.golden_tree)
      throw MissingDataError(golden.path("digests.json") + " has no " + m.digest_key + "." + ref::dtype_name(d) +
                             " digest");
  }
  m.description = op.formula + ", contract " + ref::contract_name(contract) + " (reference/op_registry.cpp), math " +
                  ref::math_model_name(math) + ", NaN 0x7FFF; " + golden.label() + ": " + table_words;
  return m;
}

}  // namespace fuseproof::audit
