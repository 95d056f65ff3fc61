// domain_sweep_row_test.cpp: tests reference/sweep_row.h's row shortcuts: sweep_row equals sweep_row_plain.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "property_tests/support/bit_patterns.h"
#include "property_tests/support/golden_paths.h"
#include "property_tests/support/mismatch_log.h"
#include "reference/sweep_row.h"
#include "reference/activation_table.h"

namespace fuseproof::ref {
namespace {

constexpr uint32_t kStride = 17;  // every 17th bias pattern: 3,856 of them, every exponent field of either dtype

uint16_t inf_bits(Dtype d) { return d == Dtype::kBf16 ? 0x7F80 : 0x7C00; }

/// Special biases first: bit_patterns' specials; per sign +-0, the smallest and largest subnormal, the smallest
/// normal, the largest finite, Inf, quiet / signalling / all-ones NaNs; every power of two with the patterns on either
/// side (the boundary where the spacing below is half the spacing above).
std::vector<uint16_t> special_biases(Dtype d) {
  std::vector<uint16_t> v = test::special_half_patterns(d);
  const uint32_t mant_bits = d == Dtype::kBf16 ? 7 : 10;
  const uint32_t inf = inf_bits(d);
  const uint32_t max_sub = (1u << mant_bits) - 1, min_normal = 1u << mant_bits;
  for (uint32_t sign : {0x0000u, 0x8000u}) {
    for (uint32_t m : {0u, 1u, max_sub, min_normal, inf - 1, inf, inf + 1, inf | (1u << (mant_bits - 1)), 0x7FFFu})
      v.push_back(uint16_t(sign | m));
    for (uint32_t e = 1; e < (inf >> mant_bits); ++e)
      for (uint32_t m : {(e << mant_bits) - 1, e << mant_bits, (e << mant_bits) + 1}) v.push_back(uint16_t(sign | m));
  }
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

/// The specials, then every kStride-th pattern.
std::vector<uint16_t> biases_under_test(Dtype d) {
  std::vector<uint16_t> v = special_biases(d);
  for (uint32_t b = 0; b < 65536; b += kStride) v.push_back(uint16_t(b));
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

const std::vector<uint16_t>& cuda_table(Dtype d) {
  static const std::vector<uint16_t> bf16 = activation_table(Activation::kGeluTanh, 
      Dtype::kBf16, MathConfig{MathModel::kCuda, Contraction::kFma, NanPolicy::kCudaCvtRn, &test::arch_mufu()});
  static const std::vector<uint16_t> fp16 = activation_table(Activation::kGeluTanh, 
      Dtype::kFp16, MathConfig{MathModel::kCuda, Contraction::kFma, NanPolicy::kCudaCvtRn, &test::arch_mufu()});
  return d == Dtype::kBf16 ? bf16 : fp16;
}

/// What one comparison covered.
struct Coverage {
  uint64_t cases = 0;     ///< (x, bias, NaN policy) triples compared
  uint64_t shortcut = 0;  ///< of them, x the fast row filled without computing
};

/// sweep_row_widened(widen) against sweep_row_plain for every x of every bias and policy; mismatches go to `log`.
Coverage compare_rows(Dtype d, const uint16_t* table, const std::vector<uint16_t>& biases,
                      const std::vector<NanPolicy>& policies, int widen, test::MismatchLog& log) {
  Coverage c;
  std::vector<uint16_t> fast(65536), plain(65536);
  const uint32_t inf = inf_bits(d);
  for (NanPolicy nan : policies) {
    const std::string where = std::string("nan=") + nan_policy_name(nan) + ",widen=" + std::to_string(widen);
    for (uint16_t b : biases) {
      sweep_row_widened(d, table, nan, b, fast.data(), widen);
      sweep_row_plain(d, table, nan, b, plain.data());
      const RowShortcuts s = row_shortcuts(d, b, widen);
      c.cases += 65536;
      c.shortcut += 2 * (uint64_t(s.small_end) + (inf - s.large_begin));
      if (fast == plain) continue;
      for (uint32_t x = 0; x < 65536; ++x) log.check(where, uint16_t(x), b, fast[x], plain[x]);
    }
  }
  return c;
}

/// TestAll driver: both dtypes, with the GELU table (bias_gelu_tanh) and without (add_round), every NaN policy.
void test_all_fast_rows_equal_plain(Dtype d) {
  const std::vector<uint16_t> biases = biases_under_test(d);
  const std::vector<NanPolicy> policies(std::begin(kAllNanPolicies), std::end(kAllNanPolicies));
  for (const bool with_table : {true, false}) {
    const char* op = with_table ? "bias_gelu_tanh" : "add_round";
    test::MismatchLog log(op, d);
    const Coverage c = compare_rows(d, with_table ? cuda_table(d).data() : nullptr, biases, policies, 0, log);
    // Guard: the comparison means something only when the shortcuts took a real share of the row.
    const double share = double(c.shortcut) / double(c.cases);
    EXPECT_GT(share, d == Dtype::kBf16 ? 0.80 : 0.10) << op << " " << dtype_name(d) << ": shortcuts took too little";
    std::printf("%s %s: sweep_row vs sweep_row_plain over %zu biases (every %u-th pattern and %zu specials) x 65536 x, "
                "%zu NaN policies; %.1f%% of the cases by shortcut\n",
                op, dtype_name(d), biases.size(), kStride, special_biases(d).size(), policies.size(), 100 * share);
    FUSEPROOF_EXPECT_CLEAN(log, c.cases);
  }
}

TEST(Reference_DomainSweepRow_bf16, ShortcutRowEqualsPlainRow) { test_all_fast_rows_equal_plain(Dtype::kBf16); }

TEST(Reference_DomainSweepRow_fp16, ShortcutRowEqualsPlainRow) { test_all_fast_rows_equal_plain(Dtype::kFp16); }

// The margin of the thresholds (sweep_row.cpp) is one binade: widened by one they are still exact (the one tie
// they then meet, below a power of two, goes to the bias's even mantissa); widened by two they are wrong, and the
// comparison must say so. Over the special biases (the powers of two and their neighbours among them), add_round.
TEST(Reference_DomainSweepRow_both, NegativeControlThresholdsTwoBinadesTooGenerousMismatch) {
  const std::vector<NanPolicy> policy{NanPolicy::kCudaCvtRn};
  for (Dtype d : kAllDtypes) {
    const std::vector<uint16_t> biases = special_biases(d);
    test::MismatchLog at_limit("add_round", d);
    const Coverage c = compare_rows(d, nullptr, biases, policy, 1, at_limit);
    std::printf("widen 1 (the exact limit): ");
    FUSEPROOF_EXPECT_CLEAN(at_limit, c.cases);

    test::MismatchLog too_wide("add_round", d, 4);
    const Coverage w = compare_rows(d, nullptr, biases, policy, 2, too_wide);
    EXPECT_GT(too_wide.count(), 0u) << dtype_name(d) << ": thresholds two binades too generous went unnoticed";
    std::printf("widen 2 (negative control, mismatches expected):\n%s\n", too_wide.report(w.cases).c_str());
  }
}

// Every constant on its own: the shortcuts of a few biases worked out by hand.
TEST(Reference_DomainSweepRow_both, ShortcutsOfHandPickedBiases) {
  struct Expect {
    Dtype d;
    uint16_t bias;
    uint16_t small_end, large_begin;
    const char* why;
  };
  const Expect cases[] = {
      // bf16 1.0: e = 0, u = 2^-7; small |x| < 2^-10 (| 0 |01110101|0000000| = 0x3A80), large |x| >= 2^11 (0x4500).
      {Dtype::kBf16, 0x3F80, 0x3A80, 0x4500, "bf16 1.0"},
      {Dtype::kBf16, 0xBF80, 0x3A80, 0x4500, "bf16 -1.0: the sign of the bias does not matter"},
      // bf16 largest finite (E = 254, e = 127): small |x| < 2^117 (0x7A00); large would be >= 2^138: none.
      {Dtype::kBf16, 0x7F7F, 0x7A00, 0x7F80, "bf16 largest finite"},
      // bf16 smallest subnormal (e = emin = -126): small |x| < 2^-136, below 2^-133: only +-0; large >= 2^-115 (0x0600).
      {Dtype::kBf16, 0x0001, 0x0001, 0x0600, "bf16 smallest subnormal"},
      // fp16 1.0: e = 0, u = 2^-10; small |x| < 2^-13 (| 0 |00010|0000000000| = 0x0800), large >= 2^14 (0x7400).
      {Dtype::kFp16, 0x3C00, 0x0800, 0x7400, "fp16 1.0"},
      // fp16 4.0 (e = 2): small < 2^-11 (0x1000); large >= 2^16: beyond 65504, none.
      {Dtype::kFp16, 0x4400, 0x1000, 0x7C00, "fp16 4.0"},
      // fp16 2^-14, smallest normal: small < 2^-27, below 2^-24: only +-0; large >= 2^0 (0x3C00).
      {Dtype::kFp16, 0x0400, 0x0001, 0x3C00, "fp16 smallest normal"},
      // fp16 2^-4 (e = -4): small < 2^-17, a subnormal: | 0 |00000|0010000000| = 0x0080; large >= 2^10 (0x6400).
      {Dtype::kFp16, 0x2C00, 0x0080, 0x6400, "fp16 2^-4"},
      {Dtype::kFp16, 0x0000, 0x0000, 0x0001, "+0: every finite nonzero x gives x"},
      {Dtype::kFp16, 0x8000, 0x0000, 0x0001, "-0"},
      {Dtype::kBf16, 0xFF80, 0x7F80, 0x7F80, "bf16 -Inf: every finite x gives -Inf"},
      {Dtype::kFp16, 0x7C00, 0x7C00, 0x7C00, "fp16 +Inf"},
      {Dtype::kBf16, 0x7FC0, 0x0000, 0x7F80, "bf16 NaN: no shortcut"},
      {Dtype::kFp16, 0xFC01, 0x0000, 0x7C00, "fp16 negative signalling NaN: no shortcut"},
  };
  for (const Expect& e : cases) {
    const RowShortcuts s = row_shortcuts(e.d, e.bias);
    EXPECT_EQ(s.small_end, e.small_end) << e.why;
    EXPECT_EQ(s.large_begin, e.large_begin) << e.why;
  }
}

}  // namespace
}  // namespace fuseproof::ref
