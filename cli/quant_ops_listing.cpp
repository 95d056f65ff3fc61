// quant_ops_listing.cpp: the quantization ops, listed from the spec; nothing here names an op or a contract.
#include "cli/quant_ops_listing.h"

#include <cstdio>
#include <string>

#include "reference/quant_block.h"
#include "reference/quant_spec.h"

namespace fuseproof::cli {

namespace {

std::string activation_text(const ref::QuantOpSpec& op) {
  if (op.activation.family_op.empty()) return "none";
  return op.activation.family_op + " (" + ref::contract_name(op.activation.contract) + "), rounded to T";
}

std::string layouts_text(const ref::QuantOpSpec& op) {
  std::string s;
  for (ref::ScaleLayout l : op.scale_layouts) s += (s.empty() ? "" : ", ") + std::string(ref::scale_layout_name(l));
  return s;
}

std::string inputs_text(const ref::QuantOpSpec& op) {
  std::string s;
  for (const ref::InputSpec& in : op.inputs) s += (s.empty() ? "" : ", ") + in.name;
  return s;
}

std::string scalars_text(const ref::QuantContractSpec& c) {
  std::string s;
  for (const std::string& n : c.scalars) s += ", then float32 " + n;
  return s;
}

/// "16 uint16 per input (x), then float32 global_scale -> 16 code bytes, then the scale (e4m3 byte)".
std::string record_text(const ref::QuantOpSpec& op, const ref::QuantContractSpec& c) {
  const std::string scale = c.scale_format == ref::ScaleFormat::kE4m3 ? "e4m3 byte" : "little-endian float32";
  return std::to_string(op.block_size) + " uint16 per input (" + inputs_text(op) + ")" + scalars_text(c) + " -> " +
         std::to_string(op.block_size) + " code bytes, then the scale (" + scale + ")";
}

int step_count(const ref::QuantContractSpec& c) { return int(c.scale_steps.size() + c.element_steps.size()); }

/// A step of the scalars' derivation from the tensor amax, printed by the same rules as the contract's steps.
std::string global_step_text(const ref::QuantContractSpec& c, int i) {
  ref::QuantContractSpec g;
  g.scale_steps = c.global_steps;
  return ref::quant_step_text(g, i);
}

}  // namespace

void print_quant_ops_text() {
  for (const ref::QuantOpSpec& op : ref::quant_op_registry()) {
    std::printf("%s\n  %s\n", op.name.c_str(), op.formula.c_str());
    std::printf("  inputs:");
    for (const ref::InputSpec& in : op.inputs) std::printf(" %s (%s)", in.name.c_str(), ref::layout_name(in.layout));
    std::printf("\n  activation: %s\n", activation_text(op).c_str());
    std::printf("  block %d; codes %s; scale layouts: %s\n", op.block_size, ref::element_format_name(op.element_format),
                layouts_text(op).c_str());
    for (size_t k = 0; k < op.contracts.size(); ++k) {
      const ref::QuantContractSpec& c = op.contracts[k];
      std::printf("  contract %s%s: scale %s%s\n", ref::quant_contract_name(c.contract), k == 0 ? " (default)" : "",
                  ref::scale_format_name(c.scale_format),
                  ref::needs_rcp_approx(c) ? "; needs the rcp.approx.ftz model" : "");
      std::printf("        %s\n        eval record: %s\n", c.meaning.c_str(), record_text(op, c).c_str());
      const int n = int(c.scale_steps.size());
      for (int i = 0; i < step_count(c); ++i)
        std::printf("        %s %s%s\n", i < n ? "block  " : "element", ref::quant_step_text(c, i).c_str(),
                    i == c.scale_out ? "  (stored)" : "");
      for (size_t i = 0; i < c.global_steps.size(); ++i)
        std::printf("        global  %s\n", global_step_text(c, int(i)).c_str());
      if (!c.global_steps.empty()) std::printf("        global from: %s\n", c.global_source.c_str());
      std::printf("        specials: %s\n        source: %s\n", c.specials.c_str(), c.source.c_str());
    }
    std::printf("  shipped by: %s\n\n", op.users.c_str());
  }
}

nlohmann::json quant_ops_json() {
  nlohmann::json ops = nlohmann::json::array();
  for (const ref::QuantOpSpec& op : ref::quant_op_registry()) {
    nlohmann::json inputs = nlohmann::json::array();
    for (const ref::InputSpec& in : op.inputs) inputs.push_back({{"name", in.name}, {"layout", ref::layout_name(in.layout)}});
    nlohmann::json layouts = nlohmann::json::array();
    for (ref::ScaleLayout l : op.scale_layouts) layouts.push_back(ref::scale_layout_name(l));
    nlohmann::json contracts = nlohmann::json::array();
    for (const ref::QuantContractSpec& c : op.contracts) {
      nlohmann::json block = nlohmann::json::array(), element = nlohmann::json::array();
      const int n = int(c.scale_steps.size());
      for (int i = 0; i < step_count(c); ++i) (i < n ? block : element).push_back(ref::quant_step_text(c, i));
      nlohmann::json global = nlohmann::json::array();
      for (size_t i = 0; i < c.global_steps.size(); ++i) global.push_back(global_step_text(c, int(i)));
      contracts.push_back({{"name", ref::quant_contract_name(c.contract)},
                           {"scalars", c.scalars},
                           {"scale_format", ref::scale_format_name(c.scale_format)},
                           {"stored_scale", ref::quant_step_text(c, c.scale_out)},
                           {"needs_rcp_approx", ref::needs_rcp_approx(c)},
                           {"block_steps", block},
                           {"element_steps", element},
                           {"global_steps", global},
                           {"global_source", c.global_source},
                           {"meaning", c.meaning},
                           {"specials", c.specials},
                           {"source", c.source}});
    }
    ops.push_back({{"name", op.name},
                   {"formula", op.formula},
                   {"inputs", inputs},
                   {"activation", op.activation.family_op.empty()
                                      ? nlohmann::json(nullptr)
                                      : nlohmann::json{{"op", op.activation.family_op},
                                                       {"contract", ref::contract_name(op.activation.contract)}}},
                   {"block_size", op.block_size},
                   {"element_format", ref::element_format_name(op.element_format)},
                   {"scale_layouts", layouts},
                   {"contracts", contracts},
                   {"users", op.users}});
  }
  return ops;
}

}  // namespace fuseproof::cli
