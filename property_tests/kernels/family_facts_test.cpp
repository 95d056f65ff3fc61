// family_facts_test.cpp: the built-in kernels' compile-time op facts (kernels/family_ops.h kFamilyFacts) against the
// op spec (reference/op_registry.cpp), the one place op facts are written: name, inputs, packing, group-broadcast
// inputs, contracts and activation; every op of the registry but the seed has exactly one row.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kernels/family_ops.h"
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
  unsigned mask = 0;
  for (size_t i = 0; i < op->inputs.size(); ++i)
    if (op->inputs[i].layout == ref::Layout::kGroupBroadcast) mask |= 1u << i;
  differ("group mask", f.group_mask, mask);
  std::set<int> contracts;
  for (const ref::ContractSpec& c : op->contracts) contracts.insert(int(c.contract));
  std::set<int> claimed = {int(kernel::Contract::kEager), int(f.other)};
  differ("contracts (as a bit set)", [&] { long long b = 0; for (int c : claimed) b |= 1ll << c; return b; }(),
         [&] { long long b = 0; for (int c : contracts) b |= 1ll << c; return b; }());
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
    g = f, g.name = "softmax";
    EXPECT_NE(differences(g), "") << f.name;
  }
}

}  // namespace
}  // namespace fuseproof::test
