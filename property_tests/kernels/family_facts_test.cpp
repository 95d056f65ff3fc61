// family_facts_test.cpp: the built-in kernels' compile-time op facts against the specs, the one place op facts are
// written: kernels/family_ops.h kFamilyFacts against the op spec (reference/op_registry.cpp: name, inputs and their
// names, packing, group-broadcast inputs, contracts, activation; a row for every op but the seed), kernels/quant_ops.h kQuantFacts
// against the quantization registry (reference/quant_registry.cpp: name, block, element format, inputs, contracts;
// a row for every quantization op).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kernels/family_ops.h"
#include "kernels/quant_ops.h"
#include "reference/quant_spec.h"
#include "reference/op_spec.h"

namespace fuseproof::test {
namespace {

using kernel::FamilyFacts;

/// The activation node of a contract's composition, or -1 when it has none.
int activation_of(const ref::ContractSpec& c) {
  for (const ref::Node& n : c.nodes)
    if (n.op == ref::NodeOp::kActivation) return int(n.act);
  return -1;
}

/// "" when `f` says what the spec says; else each difference, named.
std::string differences(const FamilyFacts& f) {
  const ref::OpSpec* op = ref::find_op(f.name);
  if (!op) return std::string(f.name) + ": not in the op registry";
  std::string d;
  const auto differ = [&](const std::string& what, long long facts, long long spec) {
    if (facts != spec)
      d += std::string(f.name) + ": " + what + " " + std::to_string(facts) + " in kFamilyFacts, " +
           std::to_string(spec) + " in the spec; ";
  };
  differ("inputs", f.inputs, (long long)op->inputs.size());
  differ("packed", f.packed, op->inputs[0].layout == ref::Layout::kPackedFirst);
  std::string names, spec_names;
  for (int i = 0; i < 3; ++i) names += std::string(f.input_names[i] ? f.input_names[i] : "-") + " ";
  for (size_t i = 0; i < 3; ++i) spec_names += (i < op->inputs.size() ? op->inputs[i].name : std::string("-")) + " ";
  if (names != spec_names)
    d += std::string(f.name) + ": input names " + names + "in kFamilyFacts, " + spec_names + "in the spec; ";
  unsigned mask = 0;
  for (size_t i = 0; i < op->inputs.size(); ++i)
    if (op->inputs[i].layout == ref::Layout::kGroupBroadcast) mask |= 1u << i;
  differ("group mask", f.group_mask, mask);
  long long spec_contracts = 0;
  for (const ref::ContractSpec& c : op->contracts) spec_contracts |= 1ll << int(c.contract);
  differ("contracts (as a bit set)", (1ll << int(kernel::Contract::kEager)) | (1ll << int(f.other)), spec_contracts);
  const int act = activation_of(op->contracts[0]);
  if (act >= 0) {
    // kernel::Act and ref::Activation share the names of the activations the family uses.
    const int mapped = f.act == kernel::Act::kGeluTanh ? int(ref::Activation::kGeluTanh)
                       : f.act == kernel::Act::kGeluErf ? int(ref::Activation::kGeluErf)
                                                        : int(ref::Activation::kSilu);
    differ("activation", mapped, act);
  }
  return d;
}

TEST(Kernels_FamilyFacts, EqualTheOpSpec) {
  std::set<std::string> rows;
  for (const FamilyFacts& f : kernel::kFamilyFacts) {
    EXPECT_EQ(differences(f), "");
    EXPECT_TRUE(rows.insert(f.name).second) << f.name << " has two rows";
  }
  for (const ref::OpSpec& op : ref::op_registry())
    if (op.name != ref::seed_op().name) EXPECT_EQ(rows.count(op.name), 1u) << op.name << " has no row in kFamilyFacts";
  EXPECT_EQ(rows.count(ref::seed_op().name), 0u);
}

// The control: each spoiled fact of each row is caught.
TEST(Kernels_FamilyFacts, ASpoiledRowDiffers) {
  for (const FamilyFacts& f : kernel::kFamilyFacts) {
    FamilyFacts g = f;
    g.group_mask ^= 0b100;
    EXPECT_NE(differences(g), "") << f.name;
    g = f, g.inputs += 1;
    EXPECT_NE(differences(g), "") << f.name;
    g = f, g.packed = !g.packed;
    EXPECT_NE(differences(g), "") << f.name;
    g = f, g.other = f.other == kernel::Contract::kFma ? kernel::Contract::kFp32 : kernel::Contract::kFma;
    EXPECT_NE(differences(g), "") << f.name;
    if (f.inputs == 2) {
      g = f, g.act = f.act == kernel::Act::kSilu ? kernel::Act::kGeluErf : kernel::Act::kSilu;
      EXPECT_NE(differences(g), "") << f.name;
    }
    g = f, g.input_names[1] = "w";
    EXPECT_NE(differences(g), "") << f.name;
    g = f, g.name = "softmax";
    EXPECT_NE(differences(g), "") << f.name;
  }
}

/// "" when `f` says what the quantization spec says; else each difference, named.
std::string quant_differences(const kernel::QuantFacts& f) {
  const ref::QuantOpSpec* op = ref::find_quant_op(f.name);
  if (!op) return std::string(f.name) + ": not in the quantization registry";
  std::string d;
  const auto differ = [&](const std::string& what, const std::string& facts, const std::string& spec) {
    if (facts != spec) d += std::string(f.name) + ": " + what + " " + facts + " in kQuantFacts, " + spec + " in the spec; ";
  };
  differ("block", std::to_string(f.block), std::to_string(op->block_size));
  differ("e2m1", std::to_string(f.e2m1), std::to_string(op->element_format == ref::ElementFormat::kE2m1));
  std::string layouts;
  for (const ref::InputSpec& in : op->inputs) layouts += std::string(ref::layout_name(in.layout)) + " ";
  differ("inputs", f.inputs == kernel::QuantInputs::kX ? "elementwise "
                   : f.inputs == kernel::QuantInputs::kPackedGateUp ? "packed-first packed-second "
                                                                     : "elementwise row-broadcast ",
         layouts);
  // The contracts the kernel ships for this op (quant_has_contract), by name, against the spec's.
  std::set<std::string> shipped, spec;
  for (int c = 0; c < kernel::kQuantContracts; ++c)
    if (kernel::quant_contract_is_nvfp4(kernel::QuantContract(c)) == f.e2m1)
      shipped.insert(kernel::quant_contract_name(kernel::QuantContract(c)));
  for (const ref::QuantContractSpec& c : op->contracts) spec.insert(ref::quant_contract_name(c.contract));
  const auto joined = [](const std::set<std::string>& v) {
    std::string j;
    for (const auto& x : v) j += x + " ";
    return j;
  };
  differ("contracts", joined(shipped), joined(spec));
  return d;
}

TEST(Kernels_FamilyFacts, QuantFactsEqualTheQuantSpec) {
  std::set<std::string> rows;
  for (const kernel::QuantFacts& f : kernel::kQuantFacts) {
    EXPECT_EQ(quant_differences(f), "");
    EXPECT_TRUE(rows.insert(f.name).second) << f.name << " has two rows";
  }
  for (const ref::QuantOpSpec& op : ref::quant_op_registry())
    EXPECT_EQ(rows.count(op.name), 1u) << op.name << " has no row in kQuantFacts";
}

// The control: each spoiled fact of each row is caught.
TEST(Kernels_FamilyFacts, ASpoiledQuantRowDiffers) {
  for (const kernel::QuantFacts& f : kernel::kQuantFacts) {
    kernel::QuantFacts g = f;
    g.block *= 2;
    EXPECT_NE(quant_differences(g), "") << f.name;
    g = f, g.e2m1 = !g.e2m1;
    EXPECT_NE(quant_differences(g), "") << f.name;
    g = f, g.inputs = f.inputs == kernel::QuantInputs::kX ? kernel::QuantInputs::kXBias : kernel::QuantInputs::kX;
    EXPECT_NE(quant_differences(g), "") << f.name;
    g = f, g.name = "int4_quant";
    EXPECT_NE(quant_differences(g), "") << f.name;
  }
}

}  // namespace
}  // namespace fuseproof::test
