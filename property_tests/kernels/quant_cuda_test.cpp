// quant_cuda_test.cpp: the quantization kernels' CUDA plugins against ref::QuantPlan, bit for bit, for every op x
// contract x dtype x scale layout (rcp-approx with the device's own rcp.approx.ftz.f32 as its model), over the
// emulation test's seeded blocks; the CUDA mutants differ. Every case skips, reported as skipped, without a device.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "property_tests/kernels/cuda_test_kernels.h"
#include "property_tests/kernels/quant_rcp_capture.h"
#include "property_tests/kernels/quant_testbed.h"
#include "property_tests/support/golden_paths.h"
#include "reference/math_model.h"
#include "reference/e2m1.h"
#include "reference/f32_to_e4m3.h"
#include "reference/rcp_approx_model.h"

namespace fuseproof::test {
namespace {

/// The device's activation stage: CUDA's expf / tanhf (the arch's MUFU tables), nvcc's contraction.
ref::MathConfig device_math() {
  return {ref::MathModel::kCuda, ref::Contraction::kFma, ref::NanPolicy::kCudaCvtRn, &arch_mufu()};
}

/// rcp.approx.ftz.f32 from this device's capture (captured once per process).
const ref::QuantModels& device_models() {
  static const ref::QuantModels m = [] {
    auto table = std::make_shared<ref::RcpApproxTable>(*ref::RcpApproxTable::from_results(capture_rcp_approx_mantissas()));
    return ref::QuantModels{[table](float x) { return ref::rcp_approx_ftz(x, *table); }};
  }();
  return m;
}

const std::vector<float>& global_scales() {
  static const std::vector<float> g = {1.0f, 2688.0f / 3.5f, 0.0371f, 2688.0f / 60000.0f, std::ldexp(1.0f, 100),
                                       std::ldexp(1.0f, -140), 0.0f, -1.5f, std::numeric_limits<float>::infinity(),
                                       std::numeric_limits<float>::quiet_NaN()};
  return g;
}

/// Runs `q` on a CUDA plugin: inputs uploaded, codes and scales poisoned with guards, the call on a stream of its
/// own, the outputs (guards included) downloaded into q. "" or the refusal.
std::string run_cuda(const fuseproof_kernel_descriptor_t* plugin, QuantCase& q) {
  DeviceBuffer in0(q.in0.size() * 2), in1(std::max<size_t>(q.in1.size(), 8) * 2);
  DeviceBuffer codes(q.codes.size()), scales(q.scales.size());
  in0.upload(q.in0.data(), q.in0.size() * 2);
  if (!q.in1.empty()) in1.upload(q.in1.data(), q.in1.size() * 2);
  codes.poison(kPoison);
  scales.poison(kPoison);
  fuseproof_call_t c = q.call();
  const bool packed = c.n_inputs == 2 && c.inputs[0].stride[0] == 2 * q.width;
  c.inputs[0].data = in0.u16();
  if (c.n_inputs == 2) c.inputs[1].data = packed ? in0.u16() + q.width : in1.u16();
  c.out = static_cast<uint8_t*>(codes.get()) + kGuard;
  c.scales = static_cast<uint8_t*>(scales.get()) + kGuard;
  cudaStream_t s;
  cuda_check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  c.stream = s;
  char err[256] = {};
  c.error = err;
  c.error_size = sizeof err;
  const int rc = plugin->call(&c);
  cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
  cudaStreamDestroy(s);
  codes.download(q.codes.data(), q.codes.size());
  scales.download(q.scales.data(), q.scales.size());
  return rc == 0 ? "" : std::string(err);
}

template <typename F>
void for_each_case(const ref::QuantOpSpec& op, ref::QuantContract c, ref::Dtype d, ref::ScaleLayout l, F&& f) {
  const bool nvfp4 = op.element_format == ref::ElementFormat::kE2m1;
  const std::vector<float> one = {0.0f};
  uint64_t seed = 1 + uint64_t(c) * 1000 + uint64_t(d) * 100 + uint64_t(l) * 10;
  for (float g : nvfp4 ? global_scales() : one) {
    QuantCase q = make_quant_case(op, c, d, l, nvfp4 ? 130 : 40, nvfp4 ? 9 : 3, g, seed++);
    f(q);
  }
}

TEST(Cuda_Quant, BitExactVsQuantPlan_AllOpsContractsDtypesLayouts) {
  FUSEPROOF_REQUIRE_CUDA();
  uint64_t total_blocks = 0, combos = 0;
  for (const ref::QuantOpSpec& op : ref::quant_op_registry())
    for (const ref::QuantContractSpec& cs : op.contracts) {
      const auto* plugin = load_quant_plugin(FUSEPROOF_PLUGIN_DIR, quant_plugin_name(op, cs.contract, "cuda"));
      ASSERT_EQ(plugin->memory, FUSEPROOF_MEMORY_CUDA);
      for (ref::Dtype d : ref::kAllDtypes) {
        const ref::MathConfig cfg = device_math();
        const ref::QuantPlan plan(op, cs.contract, d, ref::needs_rcp_approx(cs) ? device_models() : ref::QuantModels{},
                                  cfg);
        for (ref::ScaleLayout l : op.scale_layouts) {
          const std::string what = op.name + " " + ref::quant_contract_name(cs.contract) + " " + ref::dtype_name(d) +
                                   " " + ref::scale_layout_name(l);
          std::vector<std::string> lines;
          uint64_t bad = 0, blocks = 0;
          for_each_case(op, cs.contract, d, l, [&](QuantCase& q) {
            const std::string why = run_cuda(plugin, q);
            if (!why.empty()) {
              ++bad;
              lines.push_back("refused: " + why);
              return;
            }
            bad += quant_compare(q, quant_expected(q, plan), lines);
            blocks += uint64_t(q.rows * q.blocks());
          });
          total_blocks += blocks;
          ++combos;
          std::string report;
          for (const std::string& s : lines) report += what + " " + s + "\n";
          EXPECT_EQ(bad, 0u) << report << "In " << blocks << " blocks, " << bad << " errors found in " << what << ".";
        }
      }
    }
  std::printf("In %llu blocks over %llu op/contract/dtype/layout combinations, no errors found in the CUDA "
              "quantization kernels.\n",
              (unsigned long long)total_blocks, (unsigned long long)combos);
}

TEST(Cuda_Quant, NegativeControl_MutantsDiffer) {
  FUSEPROOF_REQUIRE_CUDA();
  const std::vector<SeededMutant> mutants = seeded_block_mutants("cuda");
  ASSERT_EQ(mutants.size(), 8u) << "the catalogue's blocks and layout bugs on the quantizers alone";
  for (const SeededMutant& m : mutants) {
    const ref::QuantOpSpec& op = *m.op;
    const auto* plugin = load_quant_plugin(std::string(FUSEPROOF_MUTANT_DIR) + "/../cuda", m.name);
    uint64_t bad = 0;
    for (ref::Dtype d : ref::kAllDtypes) {
      const ref::QuantPlan plan(op, m.contract, d, {}, device_math());
      for_each_case(op, m.contract, d, m.layout, [&](QuantCase& q) {
        std::vector<std::string> lines;
        bad += run_cuda(plugin, q).empty() ? quant_compare(q, quant_expected(q, plan), lines) : 1;
      });
    }
    std::printf("%s: %llu mismatching bytes\n", m.name.c_str(), (unsigned long long)bad);
    EXPECT_GT(bad, 0u) << m.name << " matches the reference on every block: the comparison cannot fail";
  }
}

/// A block that separates vllm-ref's exact reciprocals from `rcp` (an inexact one): under global scale g, an amax of
/// dtype d giving a scale code whose p = scale * (1 / g) or 1 / p `rcp` rounds the other way, and an element x <= amax
/// whose scaled value then falls on the other side of an E2M1 rounding end.
struct SeparatingBlock {
  float g = 0.0f;
  uint16_t amax = 0, x = 0;
  bool found = false;
};

SeparatingBlock find_separating_block(ref::Dtype d, const ref::QuantPlan& plan, const std::function<float(float)>& rcp) {
  SeparatingBlock b;
  for (float g : {1.0f, 3.0f, 7.0f, 11.0f, 13.0f, 2688.0f / 1000.0f, 2688.0f / 7.0f, 0.37f}) {
    const float rg_exact = 1.0f / g, rg_approx = rcp(g);
    for (int c = 0x08; c < 0x7E; ++c) {
      const float q = ref::e4m3_to_f32(uint8_t(c));
      const float p_exact = q * rg_exact, p_approx = q * rg_approx;
      const float exact = 1.0f / p_exact, approx = rcp(p_approx);
      if (ref::f32_bits(exact) == ref::f32_bits(approx)) continue;
      // The amaxes of this scale code: scale_step is monotonic in the amax.
      uint32_t lo = 0x10000, hi = 0;
      for (uint32_t ab = 0; ab < 0x7C00; ++ab)
        if (plan.scale_step(uint16_t(ab), &g).scale.byte == c) lo = std::min(lo, ab), hi = ab;
      if (lo > hi) continue;
      for (uint32_t xb = 1; xb <= hi; ++xb) {
        const float xv = ref::half_to_f32(d, uint16_t(xb));
        auto code = [&](float os) { return ref::f32_to_e2m1(std::fmin(std::fmax(xv * os, -6.0f), 6.0f)); };
        if (code(exact) != code(approx)) return {g, uint16_t(std::max(lo, xb)), uint16_t(xb), true};
      }
    }
  }
  return b;
}

/// The inexact-reciprocal mutant (rcp.approx.ftz in a kernel claiming vllm-ref) on a block built for it from this
/// device's reciprocal (find_separating_block); the built-in kernel is exact on the same block.
TEST(Cuda_Quant, NegativeControl_InexactRcpOnABuiltBlock) {
  FUSEPROOF_REQUIRE_CUDA();
  const ref::QuantOpSpec& op = *ref::find_quant_op("nvfp4_quant");
  for (ref::Dtype d : ref::kAllDtypes) {
    const ref::QuantPlan plan(op, ref::QuantContract::kVllmRef, d, {}, device_math());
    const SeparatingBlock sb = find_separating_block(d, plan, device_models().rcp_approx);
    ASSERT_TRUE(sb.found) << ref::dtype_name(d) << ": no block separates rcp.approx from exact reciprocals";
    QuantCase q = make_quant_case(op, ref::QuantContract::kVllmRef, d, ref::ScaleLayout::kLinear, 1, 1, sb.g, 1);
    q.in0[0] = sb.amax;
    for (int e = 1; e < 16; ++e) q.in0[size_t(e)] = uint16_t(sb.x | (e % 2 ? 0 : 0x8000));
    const auto* plugin = load_quant_plugin(std::string(FUSEPROOF_MUTANT_DIR) + "/../cuda", "cuda_nvfp4_quant_inexact_rcp");
    const auto* builtin = load_quant_plugin(FUSEPROOF_PLUGIN_DIR, "nvfp4_quant_cuda");
    std::vector<std::string> lines;
    QuantCase b = q;
    ASSERT_EQ(run_cuda(builtin, b), "");
    EXPECT_EQ(quant_compare(b, quant_expected(b, plan), lines), 0u) << "the built-in kernel on the built block";
    ASSERT_EQ(run_cuda(plugin, q), "");
    const uint64_t bad = quant_compare(q, quant_expected(q, plan), lines);
    std::printf("%s: g %a, amax 0x%04X, x 0x%04X: %llu mismatching bytes\n", ref::dtype_name(d), double(sb.g), sb.amax,
                sb.x, (unsigned long long)bad);
    EXPECT_GT(bad, 0u) << "cuda_nvfp4_quant_inexact_rcp matches vllm-ref on the block built for it";
  }
}

}  // namespace
}  // namespace fuseproof::test
