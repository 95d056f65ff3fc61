// add_round_test.cpp: tests reference/add_round.h: signed zeros, single vs double rounding, NaN policies, properties.
#include <cmath>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "property_tests/support/bit_patterns.h"
#include "reference/add_round.h"
#include "reference/half_codec.h"

namespace fuseproof::ref {
namespace {

TEST(Reference_AddRound_both, SignedZeros) {
  for (Dtype d : kAllDtypes) {
    EXPECT_EQ(add_round(d, 0x8000, 0x0000, NanPolicy::kCudaCvtRn), 0x0000) << "-0 + +0 = +0";
    EXPECT_EQ(add_round(d, 0x0000, 0x8000, NanPolicy::kCudaCvtRn), 0x0000) << "+0 + -0 = +0";
    EXPECT_EQ(add_round(d, 0x8000, 0x8000, NanPolicy::kCudaCvtRn), 0x8000) << "-0 + -0 = -0";
    const uint16_t one = d == Dtype::kBf16 ? 0x3F80 : 0x3C00;
    EXPECT_EQ(add_round(d, one, uint16_t(one | 0x8000), NanPolicy::kCudaCvtRn), 0x0000) << "x + (-x) = +0";
  }
}

TEST(Reference_AddRound_both, InfinitiesAndOverflow) {
  EXPECT_EQ(add_round(Dtype::kFp16, 0x7BFF, 0x5000, NanPolicy::kCudaCvtRn), 0x7C00) << "65504 + 32 = 65536 -> Inf";
  EXPECT_EQ(add_round(Dtype::kFp16, 0x7BFF, 0x4C00, NanPolicy::kCudaCvtRn), 0x7C00) << "65504 + 16 = 65520 ties to even: Inf";
  EXPECT_EQ(add_round(Dtype::kFp16, 0x7BFF, 0x4800, NanPolicy::kCudaCvtRn), 0x7BFF) << "65504 + 8 rounds down";
  EXPECT_EQ(add_round(Dtype::kBf16, 0x7F80, 0xFF80, NanPolicy::kCudaCvtRn), 0x7FFF) << "Inf - Inf = NaN";
  EXPECT_EQ(add_round(Dtype::kBf16, 0x7F80, 0xFF80, NanPolicy::kC10Vectorized), 0xFFFF);
  EXPECT_EQ(add_round(Dtype::kFp16, 0x7C00, 0xFC00, NanPolicy::kC10Scalar), 0xFE00) << "x86 Inf - Inf is the negative default NaN";
}

// Double rounding is innocuous here: binary32 keeps at least 2p + 2 bits for p = 8 (bf16) and p = 11 (fp16), so
// rounding the float sum again gives the correctly rounded sum. This property checks it against the exact sum in
// double (which holds any two halves' sum exactly) and a nearest-even pick among neighbours.
RC_GTEST_PROP(Reference_AddRound_both, DoubleRoundingEqualsSingleRounding, ()) {
  const Dtype d = *rc::gen::element(Dtype::kBf16, Dtype::kFp16);
  const auto [x, b] = *test::gen_finite_half_pair(d);  // exact ties in every binade among them
  const double exact = double(half_to_f32(d, x)) + double(half_to_f32(d, b));
  const uint16_t r = add_round(d, x, b, NanPolicy::kCudaCvtRn);
  if (is_nan_bits(d, r)) RC_FAIL("finite + finite gave NaN");
  const uint16_t inf = d == Dtype::kBf16 ? 0x7F80 : 0x7C00;
  if ((r & 0x7FFF) == inf) {
    const double top = d == Dtype::kBf16 ? double(bf16_to_f32(0x7F7F)) + std::ldexp(1.0, 119) : 65520.0;
    RC_ASSERT(std::fabs(exact) >= top);
    return;
  }
  const double got = double(half_to_f32(d, r));
  const double err = std::fabs(exact - got);
  for (int delta : {-1, 1}) {
    const int mag = int(r & 0x7FFF) + delta;
    if (mag < 0 || mag >= inf) continue;
    const double other = double(half_to_f32(d, uint16_t((r & 0x8000) | mag)));
    const double e2 = std::fabs(exact - other);
    RC_ASSERT(e2 >= err);
    if (e2 == err) RC_ASSERT((r & 1) == 0);
  }
}

RC_GTEST_PROP(Reference_AddRound_both, Commutes, ()) {
  const Dtype d = *rc::gen::element(Dtype::kBf16, Dtype::kFp16);
  const auto [x, b] = *test::gen_half_pair(d);
  RC_ASSERT(add_round(d, x, b, NanPolicy::kCudaCvtRn) == add_round(d, b, x, NanPolicy::kCudaCvtRn));
}

RC_GTEST_PROP(Reference_AddRound_both, NanInNanOutUnderEveryPolicy, ()) {
  const Dtype d = *rc::gen::element(Dtype::kBf16, Dtype::kFp16);
  const uint16_t x = *rc::gen::oneOf(test::gen_half_bits_of(d, test::HalfClass::kQuietNan),
                                    test::gen_half_bits_of(d, test::HalfClass::kSignalingNan));
  const uint16_t b = *test::gen_half_bits(d);
  for (NanPolicy p : kAllNanPolicies) RC_ASSERT(is_nan_bits(d, add_round(d, x, b, p)));
  RC_ASSERT(add_round(d, x, b, NanPolicy::kCudaCvtRn) == 0x7FFF);
}

}  // namespace
}  // namespace fuseproof::ref
