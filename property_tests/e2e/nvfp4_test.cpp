// nvfp4_test.cpp: E2M1 and E4M3 codecs (every code, ties, saturation) and the two-level NVFP4 block quantisation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "nvfp4.h"
#include "seeded_generator.h"

namespace fuseproof::e2e {
namespace {

TEST(E2E_Nvfp4_e2m1, EveryCodeDecodesAndRoundTrips) {
  const float expected[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
  for (int c = 0; c < 16; ++c) {
    const float v = e2m1_to_f32(static_cast<uint8_t>(c));
    EXPECT_EQ(std::fabs(v), expected[c & 7]) << "code 0x" << std::hex << c;
    EXPECT_EQ(std::signbit(v), (c & 8) != 0) << "code 0x" << std::hex << c;
    EXPECT_EQ(f32_to_e2m1(v), c) << "code 0x" << std::hex << c;
  }
}

TEST(E2E_Nvfp4_e2m1, TiesGoToEvenAndLargeValuesSaturate) {
  const struct { float in; float out; } cases[] = {{0.25f, 0.0f}, {0.75f, 1.0f}, {1.25f, 1.0f}, {1.75f, 2.0f},
                                                   {2.5f, 2.0f},  {3.5f, 4.0f},  {5.0f, 4.0f},  {5.01f, 6.0f},
                                                   {7.0f, 6.0f},  {1e30f, 6.0f}, {-2.5f, -2.0f}, {0.26f, 0.5f}};
  for (const auto& c : cases) EXPECT_EQ(e2m1_to_f32(f32_to_e2m1(c.in)), c.out) << "in " << c.in;
}

TEST(E2E_Nvfp4_e4m3, EveryFiniteCodeRoundTrips) {
  int tried = 0;
  for (int c = 0; c < 256; ++c) {
    if ((c & 0x7F) == 0x7F) {
      EXPECT_TRUE(std::isnan(e4m3_to_f32(static_cast<uint8_t>(c))));
      continue;
    }
    EXPECT_EQ(f32_to_e4m3(e4m3_to_f32(static_cast<uint8_t>(c))), c) << "code 0x" << std::hex << c;
    ++tried;
  }
  EXPECT_EQ(tried, 254);
}

TEST(E2E_Nvfp4_e4m3, SpecialConstants) {
  EXPECT_EQ(e4m3_to_f32(0x7E), 448.0f);     // largest finite: | 0 | 1111 | 110 |
  EXPECT_EQ(e4m3_to_f32(0x38), 1.0f);       // | 0 | 0111 | 000 |
  EXPECT_EQ(e4m3_to_f32(0x01), 0x1p-9f);    // smallest subnormal
  EXPECT_EQ(e4m3_to_f32(0x08), 0x1p-6f);    // smallest normal
  EXPECT_EQ(f32_to_e4m3(1000.0f), 0x7E);    // satfinite
  EXPECT_EQ(f32_to_e4m3(1.0625f), 0x38);    // tie between 1 and 1.125 -> even mantissa (1)
  EXPECT_EQ(f32_to_e4m3(1.1875f), 0x3A);    // tie between 1.125 and 1.25 -> 1.25
  EXPECT_EQ(f32_to_e4m3(0x1p-10f), 0x00);   // half the smallest subnormal -> 0 (tie to even)
}

TEST(E2E_Nvfp4, QuantisationErrorIsWithinHalfAStepPerBlock) {
  const int64_t rows = 8, cols = 64;
  const std::vector<float> w = seeded_normal(3, "nvfp4", static_cast<size_t>(rows * cols), 0.05f);
  const Nvfp4Matrix q = quantize_nvfp4(w.data(), rows, cols);
  const std::vector<float> d = dequantize_nvfp4_unscaled(q);
  ASSERT_EQ(d.size(), w.size());
  bool any_error = false;
  for (size_t i = 0; i < w.size(); ++i) {
    const float scale = e4m3_to_f32(q.block_scales[i / kNvfp4BlockSize]) * q.tensor_scale;
    const float deq = d[i] * q.tensor_scale;
    // E2M1's widest gap is 2 (between 4 and 6): half a gap is one scale step.
    EXPECT_LE(std::fabs(deq - w[i]), scale * 1.0f + 1e-12f) << "element " << i;
    any_error |= deq != w[i];
  }
  EXPECT_TRUE(any_error) << "NVFP4 reproduced Gaussian weights exactly: the quantiser did nothing";
}

TEST(E2E_Nvfp4, ZeroBlocksAndBadShapes) {
  std::vector<float> zeros(32, 0.0f);
  const Nvfp4Matrix q = quantize_nvfp4(zeros.data(), 2, 16);
  for (float v : dequantize_nvfp4_unscaled(q)) EXPECT_EQ(v, 0.0f);
  try {
    quantize_nvfp4(zeros.data(), 1, 24);
    FAIL() << "cols = 24 was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "quantize_nvfp4: cols must be a multiple of 16, got 24");
  }
}

TEST(E2E_Nvfp4, DequantisedProductsAreExactInBf16) {
  // e2m1 * e4m3 has at most 6 significant bits, so the GEMM's bf16 operand carries it exactly.
  for (int a = 0; a < 16; ++a) {
    for (int s = 0; s < 0x7F; ++s) {
      const float v = e2m1_to_f32(static_cast<uint8_t>(a)) * e4m3_to_f32(static_cast<uint8_t>(s));
      uint32_t u;
      std::memcpy(&u, &v, sizeof u);
      ASSERT_EQ(u & 0xFFFF, 0u) << "e2m1 0x" << std::hex << a << " * e4m3 0x" << s;
    }
  }
}

}  // namespace
}  // namespace fuseproof::e2e
