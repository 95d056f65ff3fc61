// ops_command.cpp: the op spec, listed for people (a block per op) or as JSON for programs (the golden capture).
#include "cli/ops_command.h"

#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>

#include "audit/op_spec_json.h"
#include "common/golden_library.h"
#include "reference/op_spec.h"

namespace fuseproof::cli {

namespace {

std::string steps(const ref::ContractSpec& c, const ref::OpSpec& op) {
  std::vector<std::string> v;
  std::string s;
  for (const ref::Node& n : c.nodes) {
    std::string e;
    switch (n.op) {
      case ref::NodeOp::kInput: e = op.inputs[size_t(n.input)].name; break;
      case ref::NodeOp::kActivation: e = std::string(ref::activation_name(n.act)) + "(" + v[size_t(n.a)] + ")"; break;
      case ref::NodeOp::kAdd: e = v[size_t(n.a)] + " + " + v[size_t(n.b)]; break;
      case ref::NodeOp::kMul: e = v[size_t(n.a)] + " * " + v[size_t(n.b)]; break;
    }
    if (n.op != ref::NodeOp::kInput && n.precision == ref::Precision::kHalf) e = "round_T(" + e + ")";
    v.push_back(e);
  }
  const std::string last = v.back();
  return c.nodes.back().precision == ref::Precision::kFloat32 ? "round_T(" + last + "), every step inside in binary32"
                                                              : last;
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
                  op.buffer_broadcast(int(k)) ? "[width]" : per == 2 ? "[rows, 2 * width]" : "[rows, width]");
    }
    std::printf("; out [rows, width]\n  python: %s\n", audit::python_signature(op).c_str());
    for (const ref::ContractSpec& c : op.contracts)
      std::printf("  contract %-5s %s\n        %s; digests.json %s\n", ref::contract_name(c.contract),
                  steps(c, op).c_str(), c.meaning.c_str(), golden_digest_key(op.name, c.contract).c_str());
    std::printf("  shipped by: %s\n\n", op.users.c_str());
  }
}

}  // namespace

void add_ops_command(CLI::App& app) {
  auto json = std::make_shared<bool>(false);
  CLI::App* cmd = app.add_subcommand("ops", "List every op with its inputs, layout and contracts (the op spec)");
  cmd->add_flag("--json", *json, "the op spec as JSON (scripts/capture_golden.py --spec reads it)");
  cmd->final_callback([json] {
    if (*json) std::printf("%s\n", audit::op_spec_json().dump(2).c_str());
    else print_text();
    throw CLI::RuntimeError(0);
  });
}

}  // namespace fuseproof::cli
