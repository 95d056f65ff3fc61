// correct_rounding_test.cpp: tests audit/correct_rounding.h: the binary64 path with its bounds gives MPFR's value
// everywhere it is tried (random pairs, and rows where ties of the dtype's grid are common); known values.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <memory>

#include "audit/correct_rounding.h"
#include "property_tests/support/bit_patterns.h"
#include "reference/half_codec.h"

namespace fuseproof::audit {
namespace {

const CorrectRounding& cr(const std::string& op, ref::Dtype d) {
  static std::map<std::pair<std::string, ref::Dtype>, std::unique_ptr<CorrectRounding>> made;
  auto& p = made[{op, d}];
  if (!p) p = std::make_unique<CorrectRounding>(*ref::find_op(op), d);
  return *p;
}

std::vector<std::string> op_names() {
  std::vector<std::string> v;
  // CorrectRounding is of 2-input ops (the domain class's histograms); ops of more inputs skip that class.
  for (const auto& op : ref::op_registry())
    if (op.inputs.size() == 2) v.push_back(op.name);
  return v;
}

RC_GTEST_PROP(Audit_CorrectRounding_both, FastPathEqualsMpfr, ()) {
  static const std::vector<std::string> ops = op_names();
  const std::string op = *rc::gen::elementOf(ops);
  const ref::Dtype d = *rc::gen::element(ref::Dtype::kBf16, ref::Dtype::kFp16);
  const CorrectRounding& c = cr(op, d);
  for (int k = 0; k < 32; ++k) {
    const auto [a, b] = *test::gen_half_pair(d);
    RC_ASSERT(c.value(a, b) == c.value_mpfr(a, b));
  }
}

// Rows at second inputs where the exact value often sits on or next to a tie of the dtype's grid: small integers,
// powers of two, tiny values (act(s) = s/2 + ...), and large ones (act(s) = s - tiny); every 7th (13th) first input,
// as MPFR costs about 0.1 ms a value.
TEST(Audit_CorrectRounding_both, FastPathEqualsMpfrOnTieProneRows) {
  for (const std::string& op : op_names())
    for (ref::Dtype d : ref::kAllDtypes) {
      const CorrectRounding& c = cr(op, d);
      uint64_t checked = 0;
      for (float v : {1.0f, -10.0f, 0.125f, 1.5f, 30.25f, 5.40234375f}) {
        const uint16_t b = ref::f32_to_half(d, v, ref::NanPolicy::kCudaCvtRn);
        for (uint32_t a = 0; a < 65536; a += 7, ++checked)
          ASSERT_EQ(c.value(uint16_t(a), b), c.value_mpfr(uint16_t(a), b))
              << op << " " << ref::dtype_name(d) << " in0=0x" << std::hex << a << " in1=0x" << b;
      }
      for (uint16_t b : {uint16_t(0x0001), uint16_t(0x8001), uint16_t(0x0000), uint16_t(0x8000)})
        for (uint32_t a = 0; a < 65536; a += 13, ++checked) ASSERT_EQ(c.value(uint16_t(a), b), c.value_mpfr(uint16_t(a), b));
      EXPECT_GT(checked, 70000u);
    }
}

// Known values: act(+-0) = +-0, the limits at infinities, NaN in gives 0x7FFF, 0 * inf is NaN; x + bias exactly at a
// tie of the grid with gelu(s) just below s rounds down, not to even.
TEST(Audit_CorrectRounding_both, KnownValues) {
  for (ref::Dtype d : ref::kAllDtypes) {
    const uint16_t inf = d == ref::Dtype::kBf16 ? 0x7F80 : 0x7C00, nan = uint16_t(inf | 1);
    const uint16_t one = ref::f32_to_half(d, 1.0f, ref::NanPolicy::kCudaCvtRn);
    const CorrectRounding& silu = cr("silu_and_mul", d);
    EXPECT_EQ(silu.value(0x0000, 0x8000), 0x8000);
    EXPECT_EQ(silu.value(nan, one), 0x7FFF);
    EXPECT_EQ(silu.value(0x0000, inf), 0x7FFF) << "silu(0) * inf";
    EXPECT_EQ(silu.value(uint16_t(0x8000 | inf), one), 0x8000) << "silu(-inf) = -0, the limit";
    EXPECT_EQ(silu.value(inf, one), inf);
    const CorrectRounding& gelu = cr("bias_gelu_erf", d);
    EXPECT_EQ(gelu.value(inf, uint16_t(0x8000 | inf)), 0x7FFF) << "inf - inf";
    EXPECT_EQ(gelu.value(0x8000, 0x8000), 0x8000);
    EXPECT_EQ(gelu.value(0x8000, 0x0000), 0x0000);
  }
  // bf16: 2904 = -792 + 3696 is the tie between 2896 and 2912, and gelu(2904) < 2904: 2896 (0x4535), not 2912.
  EXPECT_EQ(cr("bias_gelu_tanh", ref::Dtype::kBf16).value(0xC446, 0x4567), 0x4535);
  EXPECT_EQ(cr("bias_gelu_erf", ref::Dtype::kBf16).value(0xC446, 0x4567), 0x4535);
}

// An activation times an infinity: infinite wherever the activation is not exactly zero, even where it lies below
// binary64's range (gelu_tanh(-32) ~ 2^-3445) or MPFR's (gelu_erf(-38656) ~ 2^-1.08e9); NaN at +-0 and -inf (0 * inf).
// Both paths once gave NaN or the wrong one here (rapidcheck seed 394212548905969034).
TEST(Audit_CorrectRounding_both, ActivationTimesInfinity) {
  struct Case {
    const char* op;
    uint16_t gate, up, want;
  } cases[] = {
      {"silu_and_mul", 0x0080, 0x7F80, 0x7F80},       // silu(2^-126) * +inf = +inf
      {"gelu_tanh_and_mul", 0xC200, 0x7F80, 0xFF80},  // gelu_tanh(-32) * +inf = -inf
      {"gelu_and_mul", 0xC717, 0x7F80, 0xFF80},       // gelu_erf(-38656) * +inf = -inf
      {"gelu_and_mul", 0xC717, 0xFF80, 0x7F80},       // ... * -inf = +inf
      {"silu_and_mul", 0x8000, 0x7F80, 0x7FFF},       // silu(-0) * inf: NaN
      {"silu_and_mul", 0xFF80, 0x7F80, 0x7FFF},       // silu(-inf) = -0, * inf: NaN
      {"gelu_and_mul", 0x7F80, 0xFF80, 0xFF80},       // +inf * -inf = -inf
  };
  for (const Case& c : cases) {
    const CorrectRounding& r = cr(c.op, ref::Dtype::kBf16);
    EXPECT_EQ(r.value(c.gate, c.up), c.want) << c.op << " gate=" << c.gate << " up=" << c.up;
    EXPECT_EQ(r.value_mpfr(c.gate, c.up), c.want) << c.op << " gate=" << c.gate << " up=" << c.up << " (MPFR)";
  }
}

// Negative control: two different ops' correctly rounded values differ (the comparisons above could fail).
TEST(Audit_CorrectRounding_both, DifferentOpsDiffer) {
  // Where both activations are neither ~x/2 (tiny |x|) nor ~x or -0 (large |x|): gate in +-[0.5, 8), up = 1.
  uint64_t differ = 0, tried = 0;
  for (uint32_t sign : {0x0000u, 0x8000u})
    for (uint32_t a = 0x3F00; a < 0x4100; ++a, ++tried)
      differ += cr("silu_and_mul", ref::Dtype::kBf16).value(uint16_t(sign | a), 0x3F80) !=
                cr("gelu_and_mul", ref::Dtype::kBf16).value(uint16_t(sign | a), 0x3F80);
  EXPECT_GT(differ, tried * 9 / 10) << differ << " of " << tried;
}

}  // namespace
}  // namespace fuseproof::audit
