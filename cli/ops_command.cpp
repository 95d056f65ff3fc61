// ops_command.cpp: the op spec, listed for people (a block per op) or as JSON for programs (the golden capture), with
// each contract's stages (the rounding boundaries the stage-exhaustive class enumerates) and their pair counts.
#include "cli/ops_command.h"

#include <cstdio>
#include <map>
#include <memory>
#include <tuple>

#include <CLI/CLI.hpp>

#include "audit/op_spec_json.h"
#include "cli/quant_ops_listing.h"
#include "common/golden_library.h"
#include "common/number_text.h"
#include "reference/op_plan.h"
#include "reference/op_spec.h"

namespace fuseproof::cli {

namespace {

std::string steps(const ref::ContractSpec& c, const ref::OpSpec& op) {
  const std::string last = ref::node_text(op, c.nodes, int(c.nodes.size()) - 1);
  return c.nodes.back().precision == ref::Precision::kFloat32 ? "round_T(" + last + "), every step inside in binary32"
                                                              : last;
}

/// The plans whose stages `ops` shows: the device's NaN policy (0x7FFF, one NaN value per operand); no composition
/// with stages has an activation, so the math model does not change them.
const ref::OpPlan& stages_plan(const ref::OpSpec& op, ref::Contract c, ref::Dtype d) {
  static std::map<std::tuple<std::string, ref::Contract, ref::Dtype>, std::unique_ptr<ref::OpPlan>> plans;
  auto& p = plans[{op.name, c, d}];
  if (!p) {
    ref::MathConfig cfg;
    cfg.math = ref::MathModel::kLibm;
    p = std::make_unique<ref::OpPlan>(op, c, d, cfg);
  }
  return *p;
}

/// The stages of a contract, one block each: the step, its operands and how they are reached, pairs per dtype.
void print_stages(const ref::OpSpec& op, ref::Contract c) {
  const ref::OpPlan& bf = stages_plan(op, c, ref::Dtype::kBf16);
  const ref::OpPlan& fp = stages_plan(op, c, ref::Dtype::kFp16);
  if (bf.stages().empty()) {
    std::printf("        stages: none (%s)\n", bf.no_stages_reason().c_str());
    return;
  }
  for (size_t k = 0; k < bf.stages().size(); ++k) {
    const ref::Stage &s = bf.stages()[k], &f = fp.stages()[k];
    std::printf("        stage %zu %s: %s pairs bf16, %s fp16\n", k, s.text.c_str(), grouped(s.pairs()).c_str(),
                grouped(f.pairs()).c_str());
    for (const auto* o : {&s.a, &s.b}) {
      const auto& of = o == &s.a ? f.a : f.b;
      const std::string how = o->how == of.how ? o->how : "bf16 " + o->how + "; fp16 " + of.how;
      std::printf("          %s: %s values bf16, %s fp16 (%s)\n", o->text.c_str(), grouped(o->values.size()).c_str(),
                  grouped(of.values.size()).c_str(), how.c_str());
    }
    std::printf("          neutral: bf16 %s; fp16 %s\n", s.neutral_text.c_str(), f.neutral_text.c_str());
  }
  for (const std::string& l : bf.stages_left_out()) std::printf("        left out: %s\n", l.c_str());
}

/// A contract's stages as JSON, per dtype, without the witness tables.
nlohmann::json stages_json(const ref::OpSpec& op, ref::Contract c) {
  nlohmann::json j = nlohmann::json::object();
  for (ref::Dtype d : ref::kAllDtypes) {
    const ref::OpPlan& p = stages_plan(op, c, d);
    nlohmann::json list = nlohmann::json::array();
    for (const ref::Stage& s : p.stages()) {
      auto operand = [](const ref::Stage::Operand& o) {  // the witness tables are `fuseproof stages`' files
        return nlohmann::json{{"text", o.text}, {"node", o.node},  {"depends", o.depends},
                              {"varies", o.varies}, {"values", o.values.size()}, {"how", o.how}};
      };
      nlohmann::json neutral = nlohmann::json::object();  // the inputs outside both operands, as `stages` writes them
      for (int i = 0; i < p.inputs(); ++i)
        if (!((s.a.depends | s.b.depends) >> i & 1u)) {
          char b[8];
          std::snprintf(b, sizeof b, "0x%04X", s.neutral[size_t(i)]);
          neutral[op.inputs[size_t(i)].name] = b;
        }
      list.push_back({{"node", s.node},
                      {"text", s.text},
                      {"combine", s.combine == ref::Combine::kAdd ? "add" : "mul"},
                      {"a", operand(s.a)},
                      {"b", operand(s.b)},
                      {"pairs", s.pairs()},
                      {"neutral", neutral},
                      {"neutral_text", s.neutral_text}});
    }
    j[ref::dtype_name(d)] = list;
  }
  return j;
}

/// `fuseproof ops --json`: the op spec, each contract with its stages and why there are none.
nlohmann::json ops_json() {
  nlohmann::json j = audit::op_spec_json();
  for (nlohmann::json& o : j["ops"]) {
    const ref::OpSpec& op = *ref::find_op(o["name"].get<std::string>());
    for (nlohmann::json& c : o["contracts"]) {
      const ref::Contract contract = *ref::parse_contract(c["name"].get<std::string>());
      c["stages"] = stages_json(op, contract);
      c["no_stages_reason"] = stages_plan(op, contract, ref::Dtype::kBf16).no_stages_reason();
    }
  }
  j["quant_ops"] = quant_ops_json();
  return j;
}

void print_text() {
  for (const ref::OpSpec& op : ref::op_registry()) {
    std::printf("%s\n  %s\n", op.name.c_str(), op.formula.c_str());
    std::printf("  inputs:");
    for (const ref::InputSpec& in : op.inputs) std::printf(" %s (%s)", in.name.c_str(), ref::layout_name(in.layout));
    std::printf("\n  buffers: ");
    for (size_t k = 0; k < op.buffers().size(); ++k) {
      const int64_t per = op.buffer_row_elems(int(k), 1);
      std::printf("%s%s %s", k ? ", " : "", op.buffers()[k].c_str(),
                  op.buffer_broadcast(int(k))  ? "[width]"
                  : op.buffer_grouped(int(k))  ? "[rows / group_rows, width]"
                  : per == 2                   ? "[rows, 2 * width]"
                                               : "[rows, width]");
    }
    std::printf("; out [rows, width]\n  python: %s\n", audit::python_signature(op).c_str());
    for (const ref::ContractSpec& c : op.contracts) {
      std::printf("  contract %-5s %s\n        %s; digests.json %s\n", ref::contract_name(c.contract),
                  steps(c, op).c_str(), c.meaning.c_str(), golden_digest_key(op.name, c.contract).c_str());
      print_stages(op, c.contract);
    }
    std::printf("  shipped by: %s\n\n", op.users.c_str());
  }
  std::printf("Quantization ops (a block of T values -> a code per element and the block's scale)\n\n");
  print_quant_ops_text();
}

}  // namespace

void add_ops_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("ops", "List every op with its inputs, layout and contracts (the op spec), the quantization ops after the elementwise ones");
  cmd->add_flag("--json", *json, "the op spec as JSON, with each contract's stages per dtype (scripts/capture_golden.py "
                                 "--spec reads it)");
  cmd->final_callback([json] {
    if (*json) std::printf("%s\n", ops_json().dump(2).c_str());
    else print_text();
    throw CLI::RuntimeError(0);
  });
}

}  // namespace fuseproof::cli
