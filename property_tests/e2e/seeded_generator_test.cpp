// seeded_generator_test.cpp: the generator's bits are fixed (the same weights on every machine) and its streams independent.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "seeded_generator.h"

namespace fuseproof::e2e {
namespace {

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

TEST(E2E_SeededGenerator, SplitMix64KnownValues) {
  // SplitMix64 from state 0 (Steele et al.; the values every reference implementation prints).
  SeededGenerator g(fnv1a64("x"), "x");  // seed ^ fnv(name) == 0
  EXPECT_EQ(g.next_u64(), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(g.next_u64(), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(g.next_u64(), 0x06c45d188009454fULL);
}

TEST(E2E_SeededGenerator, Fnv1aKnownValues) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
}

TEST(E2E_SeededGenerator, NormalIsExactIntegerMathThenOneMultiply) {
  SeededGenerator a(7, "w");
  SeededGenerator b(7, "w");
  for (int i = 0; i < 1000; ++i) {
    const uint64_t r = b.next_u64();
    const int64_t sum = static_cast<int64_t>(r & 0xFFFF) + static_cast<int64_t>((r >> 16) & 0xFFFF) +
                        static_cast<int64_t>((r >> 32) & 0xFFFF) + static_cast<int64_t>(r >> 48);
    const float expected = static_cast<float>(sum - 131070) * 2.6428997921303014e-05f;
    ASSERT_EQ(bits(a.next_normal()), bits(expected)) << "draw " << i;
  }
}

TEST(E2E_SeededGenerator, StreamsByNameAreIndependentOfOrder) {
  const std::vector<float> w1 = seeded_normal(42, "blocks.0.ffn.fc_in.weight", 64, 0.125f);
  (void)seeded_normal(42, "something else", 1000, 1.0f);
  const std::vector<float> w2 = seeded_normal(42, "blocks.0.ffn.fc_in.weight", 64, 0.125f);
  EXPECT_EQ(std::memcmp(w1.data(), w2.data(), w1.size() * sizeof(float)), 0);
  const std::vector<float> w3 = seeded_normal(42, "blocks.1.ffn.fc_in.weight", 64, 0.125f);
  EXPECT_NE(std::memcmp(w1.data(), w3.data(), w1.size() * sizeof(float)), 0);
}

TEST(E2E_SeededGenerator, NormalMomentsAreSane) {
  // Not an exactness test: a guard that the scaling constant is right (mean 0, variance 1 within sampling noise).
  SeededGenerator g(1, "moments");
  double s = 0, s2 = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    const double v = g.next_normal();
    s += v;
    s2 += v * v;
  }
  EXPECT_NEAR(s / n, 0.0, 0.01);
  EXPECT_NEAR(s2 / n, 1.0, 0.02);
}

}  // namespace
}  // namespace fuseproof::e2e
