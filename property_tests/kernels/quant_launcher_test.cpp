// quant_launcher_test.cpp: the quantization plugins refuse every invalid call of kernels/fuseproof_kernel_abi.h in one
// line naming argument, rule and value, and touch no memory; the same calls made valid are accepted.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "kernels/quant_launcher.h"
#include "property_tests/kernels/quant_testbed.h"

namespace fuseproof::test {
namespace {

/// Makes the call `mutate` leaves invalid on `plugin`'s op and expects a refusal containing `needle` with codes and
/// scales untouched (every byte still the poison).
void expect_refused(const char* plugin_name, const char* op_name, ref::QuantContract c, ref::ScaleLayout l,
                    const std::function<void(fuseproof_call_t&, QuantCase&)>& mutate, const std::string& needle) {
  SCOPED_TRACE(std::string(plugin_name) + ": " + needle);
  const auto* plugin = load_quant_plugin(FUSEPROOF_PLUGIN_DIR, plugin_name);
  const ref::QuantOpSpec& op = *ref::find_quant_op(op_name);
  QuantCase q = make_quant_case(op, c, ref::Dtype::kBf16, l, 3, 2, 1.0f, 7);
  fuseproof_call_t call = q.call();
  char err[256] = {};
  call.error = err;
  call.error_size = sizeof err;
  mutate(call, q);
  EXPECT_NE(plugin->call(&call), 0);
  const std::string m = err;
  EXPECT_NE(m.find(needle), std::string::npos) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  ASSERT_FALSE(m.empty());
  EXPECT_NE(m.back(), '.') << m;
  for (uint8_t b : q.codes) ASSERT_EQ(b, kPoison) << "codes written by a refused call: " << m;
  for (uint8_t b : q.scales) ASSERT_EQ(b, kPoison) << "scales written by a refused call: " << m;
}

using ref::QuantContract;
using ref::ScaleLayout;
constexpr auto kNv = QuantContract::kVllmRef;
constexpr auto kFp8 = QuantContract::kFp8Group;
constexpr auto kLin = ScaleLayout::kLinear;
constexpr auto kSw = ScaleLayout::kSwizzled128x4;

TEST(Launcher_Quant, AcceptsTheValidCall) {
  for (const char* name : {"nvfp4_quant_emulated", "silu_and_mul_nvfp4_quant_te_emulated",
                           "bias_gelu_tanh_nvfp4_quant_flashinfer-exact_emulated", "fp8_group_quant_emulated",
                           "silu_and_mul_fp8_group_quant_fp8-group-ue8m0_emulated"}) {
    const auto* plugin = load_quant_plugin(FUSEPROOF_PLUGIN_DIR, name);
    const ref::QuantOpSpec& op = *ref::find_quant_op(plugin->op);
    QuantCase q = make_quant_case(op, *ref::parse_quant_contract(plugin->contract), ref::Dtype::kFp16,
                                  op.scale_layouts.back(), 3, 2, 1.0f, 7);
    fuseproof_call_t call = q.call();
    char err[256] = {};
    call.error = err;
    call.error_size = sizeof err;
    EXPECT_EQ(plugin->call(&call), 0) << name << ": " << err;
    std::vector<std::string> lines;
    EXPECT_EQ(quant_compare(q, quant_expected(q, ref::QuantPlan(op, q.contract, q.dtype, {}, {ref::MathModel::kLibm,
                                                                                              ref::Contraction::kFma,
                                                                                              ref::NanPolicy::kCudaCvtRn,
                                                                                              nullptr})),
                            lines),
              0u)
        << name;
  }
}

TEST(Launcher_Quant, RefusesInvalidCalls) {
  const char* nv = "nvfp4_quant_emulated";
  const char* fp8 = "fp8_group_quant_emulated";
  expect_refused(nv, "nvfp4_quant", kNv, kLin, [](auto& c, auto&) { c.struct_size = FUSEPROOF_CALL_V3_SIZE; },
                 "call struct size must be at least " + std::to_string(sizeof(fuseproof_call_t)) +
                     " (the version-4 call), got " + std::to_string(FUSEPROOF_CALL_V3_SIZE));
  expect_refused(nv, "nvfp4_quant", kNv, kLin, [](auto& c, auto&) { c.dtype = FUSEPROOF_DTYPE_FLOAT32; },
                 "nvfp4_quant: dtype code must be 0 (bf16) or 1 (fp16), got 2");
  expect_refused(nv, "nvfp4_quant", kNv, kLin, [](auto& c, auto&) { c.n_inputs = 2; }, "takes 1 input, got 2");
  expect_refused(nv, "nvfp4_quant", kNv, kLin, [](auto& c, auto&) { c.shape[0] = 0; }, "rows must be >= 1, got 0");
  expect_refused(nv, "nvfp4_quant", kNv, kLin, [](auto& c, auto&) { c.shape[1] = 24; },
                 "nvfp4_quant: width must be a multiple of 16, got 24");
  expect_refused(fp8, "fp8_group_quant", kFp8, kLin, [](auto& c, auto&) { c.shape[1] = 136; },
                 "fp8_group_quant: width must be a multiple of 128, got 136");
  expect_refused(nv, "nvfp4_quant", kNv, kLin, [](auto& c, auto&) { c.shape[0] = int64_t(1) << 60; },
                 "overflows int64 bytes");
  expect_refused(fp8, "fp8_group_quant", kFp8, kLin, [](auto& c, auto&) { c.scale_layout = FUSEPROOF_SCALE_SWIZZLED_128X4; },
                 "scale_layout must be 0 (linear), got 1");
  expect_refused(nv, "nvfp4_quant", kNv, kSw, [](auto& c, auto&) { c.scale_layout = 7; },
                 "scale_layout must be 0 (linear) or 1 (swizzled 128x4), got 7");
  expect_refused(nv, "nvfp4_quant", kNv, kLin, [](auto& c, auto&) { c.n_scalars = 0; },
                 "n_scalars must be 1 for contract vllm-ref, got 0");
  expect_refused(fp8, "fp8_group_quant", kFp8, kLin, [](auto& c, auto&) { c.n_scalars = 1; },
                 "n_scalars must be 0 for contract fp8-group, got 1");
  expect_refused(nv, "nvfp4_quant", kNv, kLin, [](auto& c, auto&) { c.scales = nullptr; }, "scales must not be null");
  expect_refused(nv, "nvfp4_quant", kNv, kLin, [](auto& c, auto&) { c.out = nullptr; }, "must not be null");
  expect_refused(nv, "nvfp4_quant", kNv, kLin, [](auto& c, auto&) { c.inputs[0].data = nullptr; }, "x must not be null");
  expect_refused(nv, "nvfp4_quant", kNv, kLin,
                 [](auto& c, auto& q) { c.scales = q.scales_data() + 2; }, "scales must be aligned to 4 bytes");
  expect_refused(nv, "nvfp4_quant", kNv, kLin,
                 [](auto& c, auto& q) { c.out = q.codes_data() + 8; }, "must be aligned to 16 bytes");
  expect_refused(nv, "nvfp4_quant", kNv, kLin,
                 [](auto& c, auto&) { c.inputs[0].data = static_cast<const uint16_t*>(c.inputs[0].data) + 4; },
                 "x must be aligned to 16 bytes");
  expect_refused(nv, "nvfp4_quant", kNv, kLin, [](auto& c, auto&) { c.inputs[0].stride[0] += 16; },
                 "x must be contiguous [rows, width]");
  expect_refused("silu_and_mul_nvfp4_quant_emulated", "silu_and_mul_nvfp4_quant", kNv, kLin,
                 [](auto& c, auto&) { c.inputs[1].data = static_cast<const uint16_t*>(c.inputs[1].data) + 8; },
                 "up must start width elements after gate");
  expect_refused("silu_and_mul_nvfp4_quant_emulated", "silu_and_mul_nvfp4_quant", kNv, kLin,
                 [](auto& c, auto&) { c.inputs[1].stride[0] = c.shape[1]; }, "gate and up must be the halves");
  expect_refused("bias_gelu_tanh_nvfp4_quant_emulated", "bias_gelu_tanh_nvfp4_quant", kNv, kLin,
                 [](auto& c, auto&) { c.inputs[1].stride[0] = c.shape[1]; },
                 "bias must be one [width] row shared by every row (stride {0, 1}), got {32, 1}");
}

TEST(Launcher_Quant, EmulationRefusesRcpApprox) {
  QuantCase q = make_quant_case(*ref::find_quant_op("nvfp4_quant"), QuantContract::kRcpApprox, ref::Dtype::kBf16, kLin,
                                3, 2, 1.0f, 7);
  const fuseproof_call_t c = q.call();
  const QuantLaunch host{kernel::QuantOp::kNvfp4Quant, kernel::QuantContract::kRcpApprox, false};
  EXPECT_EQ(quant_can_implement(host, c),
            "nvfp4_quant: contract rcp-approx needs the device's rcp.approx.ftz.f32; the CPU emulation does not compute "
            "it");
  const QuantLaunch cuda{kernel::QuantOp::kNvfp4Quant, kernel::QuantContract::kRcpApprox, true};
  EXPECT_EQ(quant_can_implement(cuda, c), "");
  const QuantLaunch wrong{kernel::QuantOp::kFp8GroupQuant, kernel::QuantContract::kTe, false};
  QuantCase f = make_quant_case(*ref::find_quant_op("fp8_group_quant"), QuantContract::kFp8Group, ref::Dtype::kBf16,
                                kLin, 3, 2, 1.0f, 7);
  fuseproof_call_t fc = f.call();
  fc.n_scalars = 1;
  EXPECT_EQ(quant_can_implement(wrong, fc), "fp8_group_quant: has no te contract");
}

}  // namespace
}  // namespace fuseproof::test
