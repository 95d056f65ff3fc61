// quant_emulation_test.cpp: the quantization kernels' CPU emulation plugins against ref::QuantPlan, bit for bit, for
// every op x contract (rcp-approx aside: the emulation does not compute it) x dtype x scale layout, over seeded random
// and edge blocks and a set of global scales; and negative controls: the mutant plugins differ.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "property_tests/kernels/quant_testbed.h"
#include "reference/math_model.h"

namespace fuseproof::test {
namespace {

/// The emulation's activation stage runs the host's libm (expf, tanhf) with -ffp-contract=off, GELU(tanh)'s inner
/// fma spelled std::fma: the reference's libm model with contraction.
const ref::MathConfig& host_math() {
  static const ref::MathConfig cfg{ref::MathModel::kLibm, ref::Contraction::kFma, ref::NanPolicy::kCudaCvtRn, nullptr};
  return cfg;
}

/// Global scales: ordinary, vLLM's 2688 / amax for a few amax, large and tiny, and every special the ABI allows.
const std::vector<float>& global_scales() {
  static const std::vector<float> g = {1.0f, 2688.0f / 3.5f, 0.0371f, 2688.0f / 60000.0f, std::ldexp(1.0f, 100),
                                       std::ldexp(1.0f, -140), 0.0f, -1.5f, std::numeric_limits<float>::infinity(),
                                       std::numeric_limits<float>::quiet_NaN()};
  return g;
}

/// Runs one case on `plugin` and compares with the plan; returns mismatches, lines into `lines`.
uint64_t run_case(const fuseproof_kernel_descriptor_t* plugin, QuantCase& q, const ref::QuantPlan& plan,
                  std::vector<std::string>& lines) {
  fuseproof_call_t c = q.call();
  char err[256] = {};
  c.error = err;
  c.error_size = sizeof err;
  if (plugin->call(&c) != 0) {
    lines.push_back(std::string("call refused: ") + err);
    return 1;
  }
  return quant_compare(q, quant_expected(q, plan), lines);
}

struct Tally {
  uint64_t cases = 0, blocks = 0;
};

/// Every call shape for one op/contract/dtype/layout: 130 rows (two row tiles, the second padded), 9 or 3 blocks per
/// row (three k-tiles, the last padded), each global scale the contract takes.
template <typename F>
void for_each_case(const ref::QuantOpSpec& op, ref::QuantContract c, ref::Dtype d, ref::ScaleLayout l, F&& f) {
  const bool nvfp4 = op.element_format == ref::ElementFormat::kE2m1;
  const std::vector<float> one = {0.0f};
  const std::vector<float>& gs = nvfp4 ? global_scales() : one;
  uint64_t seed = 1 + uint64_t(c) * 1000 + uint64_t(d) * 100 + uint64_t(l) * 10;
  for (float g : gs) {
    QuantCase q = make_quant_case(op, c, d, l, nvfp4 ? 130 : 40, nvfp4 ? 9 : 3, g, seed++);
    f(q);
  }
}

// TestAll driver: every op x contract x dtype x layout, one line per failing combination, TestFloat counts.
TEST(Emulation_Quant, BitExactVsQuantPlan_AllOpsContractsDtypesLayouts) {
  uint64_t total_blocks = 0, combos = 0;
  for (const ref::QuantOpSpec& op : ref::quant_op_registry())
    for (const ref::QuantContractSpec& cs : op.contracts) {
      if (ref::needs_rcp_approx(cs)) continue;  // rcp-approx: CUDA only
      const auto* plugin =
          load_quant_plugin(FUSEPROOF_PLUGIN_DIR, quant_plugin_name(op, cs.contract, "emulated"));
      ASSERT_EQ(plugin->abi_version, FUSEPROOF_KERNEL_ABI_VERSION);
      ASSERT_EQ(std::string(plugin->op), op.name);
      ASSERT_EQ(std::string(plugin->contract), ref::quant_contract_name(cs.contract));
      for (ref::Dtype d : ref::kAllDtypes) {
        const ref::QuantPlan plan(op, cs.contract, d, {}, host_math());
        for (ref::ScaleLayout l : op.scale_layouts) {
          std::vector<std::string> lines;
          uint64_t bad = 0, blocks = 0;
          bool nontrivial = false;
          for_each_case(op, cs.contract, d, l, [&](QuantCase& q) {
            bad += run_case(plugin, q, plan, lines);
            blocks += uint64_t(q.rows * q.blocks());
            for (int64_t i = 0; i < q.code_bytes() && !nontrivial; ++i) nontrivial = q.codes_data()[i] != 0;
          });
          total_blocks += blocks;
          ++combos;
          std::string what = op.name + " " + ref::quant_contract_name(cs.contract) + " " + ref::dtype_name(d) + " " +
                             ref::scale_layout_name(l);
          EXPECT_TRUE(nontrivial) << what << ": every code 0, a test that cannot fail";
          std::string report;
          for (const std::string& s : lines) report += what + " " + s + "\n";
          EXPECT_EQ(bad, 0u) << report << "In " << blocks << " blocks, " << bad << " errors found in " << what << ".";
        }
      }
    }
  std::printf("In %llu blocks over %llu op/contract/dtype/layout combinations, no errors found in the quantization "
              "emulation (rcp-approx not emulated).\n",
              (unsigned long long)total_blocks, (unsigned long long)combos);
}

/// The negative controls: each host mutant differs from its contract's reference on the testbed's blocks (the
/// inexact reciprocal on a block built for it: a global scale whose reciprocal it rounds the other way, and elements
/// on the E2M1 table's ends).
TEST(Emulation_Quant, NegativeControl_MutantsDiffer) {
  const std::vector<SeededMutant> mutants = seeded_block_mutants("host");
  ASSERT_EQ(mutants.size(), 8u) << "the catalogue's blocks and layout bugs on the quantizers alone";
  for (const SeededMutant& m : mutants) {
    const ref::QuantOpSpec& op = *m.op;
    const auto* plugin = load_quant_plugin(FUSEPROOF_MUTANT_DIR, m.name);
    uint64_t bad = 0;
    for (ref::Dtype d : ref::kAllDtypes) {
      const ref::QuantPlan plan(op, m.contract, d, {}, host_math());
      for_each_case(op, m.contract, d, m.layout, [&](QuantCase& q) {
        std::vector<std::string> lines;
        bad += run_case(plugin, q, plan, lines);
      });
    }
    EXPECT_GT(bad, 0u) << m.name << " matches the reference on every block: the comparison cannot fail";
  }
  // The inexact reciprocal, on a block built for it: g = 1 and amax 1 give the scale 0.171875 (0x23, 11 * 2^-6), whose
  // reciprocal 64 / 11 it rounds one ulp low (vllm-ref rounds it up), so x = 33 / 256 scales to just under 0.75 (code
  // 0x1, 0.5) where vllm-ref's x * (1 / p) reaches 0.75 (code 0x2, 1.0).
  {
    const ref::QuantOpSpec& op = *ref::find_quant_op("nvfp4_quant");
    const auto* plugin = load_quant_plugin(FUSEPROOF_MUTANT_DIR, "host_nvfp4_quant_inexact_rcp");
    uint64_t bad = 0;
    for (ref::Dtype d : ref::kAllDtypes) {
      QuantCase q = make_quant_case(op, ref::QuantContract::kVllmRef, d, ref::ScaleLayout::kLinear, 1, 1, 1.0f, 1);
      q.in0[0] = half_of(d, 1.0f);
      for (int e = 1; e < 16; ++e) q.in0[size_t(e)] = half_of(d, e % 2 ? 33.0f / 256.0f : -33.0f / 256.0f);
      std::vector<std::string> lines;
      bad += run_case(plugin, q, ref::QuantPlan(op, ref::QuantContract::kVllmRef, d, {}, host_math()), lines);
    }
    EXPECT_GT(bad, 0u) << "host_nvfp4_quant_inexact_rcp matches vllm-ref on the block built for it";
  }
  // The control built from the same source with no fault passes.
  const ref::QuantOpSpec& op = *ref::find_quant_op("nvfp4_quant");
  const auto* control = load_quant_plugin(FUSEPROOF_PLUGIN_DIR, "control_host_nvfp4_quant");
  const ref::QuantPlan plan(op, ref::QuantContract::kVllmRef, ref::Dtype::kBf16, {}, host_math());
  uint64_t bad = 0;
  for_each_case(op, ref::QuantContract::kVllmRef, ref::Dtype::kBf16, ref::ScaleLayout::kSwizzled128x4,
                [&](QuantCase& q) {
                  std::vector<std::string> lines;
                  bad += run_case(control, q, plan, lines);
                });
  EXPECT_EQ(bad, 0u);
}

}  // namespace
}  // namespace fuseproof::test
