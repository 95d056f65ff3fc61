// op_spec_json.cpp: the op spec written out as JSON.
#include "audit/op_spec_json.h"

#include "common/golden_library.h"

namespace fuseproof::audit {

namespace {

const char* node_op_name(ref::NodeOp op) {
  switch (op) {
    case ref::NodeOp::kInput: return "input";
    case ref::NodeOp::kActivation: return "activation";
    case ref::NodeOp::kAdd: return "add";
    case ref::NodeOp::kMul: return "mul";
    case ref::NodeOp::kConst: return "const";
    case ref::NodeOp::kFma: return "fma";
  }
  return "?";
}

nlohmann::json node_json(const ref::Node& n) {
  nlohmann::json j = {{"op", node_op_name(n.op)}};
  if (n.op == ref::NodeOp::kInput) {
    j["input"] = n.input;
    return j;
  }
  if (n.op == ref::NodeOp::kConst) {
    j["value"] = n.value;
    return j;
  }
  if (n.op == ref::NodeOp::kActivation) j["act"] = ref::activation_name(n.act);
  j["a"] = n.a;
  if (n.b >= 0) j["b"] = n.b;
  if (n.c >= 0) j["c"] = n.c;
  j["precision"] = n.precision == ref::Precision::kHalf ? "half" : "float32";
  return j;
}

}  // namespace

std::string python_signature(const ref::OpSpec& op) {
  std::string args;
  for (const std::string& b : op.buffers()) args += (args.empty() ? "" : ", ") + b;
  std::string sig = "fn(" + args + ") -> out or fn(" + args + ", out)";
  if (!op.has_groups()) return sig;
  // Group-broadcast ops take DiT's 3-D tensors (python/python_runner.h).
  std::string full, grouped;
  for (int k = 0; k < int(op.buffers().size()); ++k)
    (op.buffer_grouped(k) ? grouped : full) += (op.buffer_grouped(k) ? (grouped.empty() ? "" : ", ")
                                                                     : (full.empty() ? "" : ", ")) + op.buffers()[size_t(k)];
  return sig + "; " + full + ", out [rows / group_rows, group_rows, d]; " + grouped + " [rows / group_rows, 1, d]";
}

nlohmann::json op_json(const ref::OpSpec& op) {
  nlohmann::json inputs = nlohmann::json::array(), contracts = nlohmann::json::array();
  for (const ref::InputSpec& in : op.inputs) inputs.push_back({{"name", in.name}, {"layout", ref::layout_name(in.layout)}});
  for (const ref::ContractSpec& c : op.contracts) {
    nlohmann::json nodes = nlohmann::json::array();
    for (const ref::Node& n : c.nodes) nodes.push_back(node_json(n));
    contracts.push_back({{"name", ref::contract_name(c.contract)}, {"meaning", c.meaning}, {"nodes", nodes},
                         {"digest_key", golden_digest_key(op.name, c.contract)}});
  }
  return {{"name", op.name},         {"formula", op.formula}, {"users", op.users},
          {"inputs", inputs},        {"buffers", op.buffers()}, {"python_signature", python_signature(op)},
          {"contracts", contracts}};
}

nlohmann::json op_spec_json() {
  nlohmann::json acts = nlohmann::json::array(), ops = nlohmann::json::array();
  for (ref::Activation a : ref::kAllActivations)
    acts.push_back({{"name", ref::activation_name(a)}, {"torch", ref::activation_torch(a)},
                    {"ex2_points", ref::activation_needs_ex2_points(a)}});
  for (const ref::OpSpec& op : ref::op_registry()) ops.push_back(op_json(op));
  return {{"schema", "fuseproof.ops/1"}, {"activations", acts}, {"ops", ops}};
}

}  // namespace fuseproof::audit
