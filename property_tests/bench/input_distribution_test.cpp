// input_distribution_test.cpp: tests bench/input_distribution.h: each distribution generates what its name claims
// (statistical checks, hence the `property` label), deterministically from its seed; files of the wrong size refused.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <gtest/gtest.h>

#include "bench/input_distribution.h"
#include "kernels/half_convert.h"

namespace fuseproof::bench {
namespace {

using kernel::Half;

Distribution builtin(const std::string& name) {
  BenchOptions o;
  o.dists = {name};
  return resolve_distributions(o, nullptr).at(0);
}

std::vector<uint16_t> sample(const Distribution& d, bool bf16, int64_t n, uint64_t seed = 1234, uint64_t stream = 16) {
  std::vector<uint16_t> v(static_cast<size_t>(n));
  fill_host(v.data(), n, d, bf16, seed, stream);
  return v;
}

TEST(Bench_InputDistribution_both, Uniform16CoversNanInfSubnormalsAndZeros) {
  const std::vector<uint16_t> v = sample(builtin("uniform16"), true, int64_t(1) << 20);
  // bf16 | S |EEEEEEEE|MMMMMMM|, fp16 | S |EEEEE|MMMMMMMMMM|: the same patterns read both ways.
  int bf_nan = 0, bf_inf = 0, bf_sub = 0, fp_nan = 0, fp_inf = 0, fp_sub = 0, zero = 0, negative = 0;
  std::vector<int> high_byte(256, 0);
  for (uint16_t p : v) {
    const uint16_t a = p & 0x7FFF;
    bf_nan += a > 0x7F80;
    bf_inf += a == 0x7F80;
    bf_sub += a != 0 && a < 0x0080;
    fp_nan += a > 0x7C00;
    fp_inf += a == 0x7C00;
    fp_sub += a != 0 && a < 0x0400;
    zero += a == 0;
    negative += p >> 15;
    ++high_byte[p >> 8];
  }
  std::printf("uniform16, 2^20 patterns: bf16 NaN %d, Inf %d, subnormal %d; fp16 NaN %d, Inf %d, subnormal %d; "
              "+-0 %d; negative %d\n", bf_nan, bf_inf, bf_sub, fp_nan, fp_inf, fp_sub, zero, negative);
  EXPECT_GT(bf_nan, 0);
  EXPECT_GT(bf_inf, 0);
  EXPECT_GT(bf_sub, 0);
  EXPECT_GT(fp_nan, 0);
  EXPECT_GT(fp_inf, 0);
  EXPECT_GT(fp_sub, 0);
  EXPECT_GT(zero, 0);
  // Uniform: 4,096 expected per high byte; 6 standard deviations (6 x 64) either side.
  for (int b = 0; b < 256; ++b) EXPECT_NEAR(high_byte[size_t(b)], 4096, 384) << "high byte 0x" << std::hex << b;
  EXPECT_NEAR(negative, 1 << 19, 6 * 512);
}

/// Mean and standard deviation of the widened values.
void moments(const std::vector<uint16_t>& v, bool bf16, double* mean, double* sd) {
  double s = 0, s2 = 0;
  for (uint16_t p : v) {
    const double x = bf16 ? kernel::half_to_float<Half::kBf16>(p) : kernel::half_to_float<Half::kFp16>(p);
    s += x;
    s2 += x * x;
  }
  *mean = s / double(v.size());
  *sd = std::sqrt(s2 / double(v.size()) - *mean * *mean);
}

TEST(Bench_InputDistribution_both, NormalHasItsSigma) {
  for (const char* name : {"normal0.25", "normal1", "normal4", "normal16"}) {
    const Distribution d = builtin(name);
    for (bool bf16 : {true, false}) {
      double mean = 0, sd = 0;
      const std::vector<uint16_t> v = sample(d, bf16, int64_t(1) << 18);
      moments(v, bf16, &mean, &sd);
      int within1 = 0;
      for (uint16_t p : v) {
        const double x = bf16 ? kernel::half_to_float<Half::kBf16>(p) : kernel::half_to_float<Half::kFp16>(p);
        within1 += std::fabs(x) <= d.sigma;
      }
      const double frac1 = double(within1) / double(v.size());
      std::printf("%s %s: mean %.4f, sd %.4f (sigma %.2f), |x| <= sigma %.4f (0.6827 expected)\n", name,
                  bf16 ? "bf16" : "fp16", mean, sd, d.sigma, frac1);
      // 2^18 samples: the sample sd is within 1% of sigma and the mean within 0.01 sigma far beyond 6 standard
      // errors; the rounding to the dtype moves each value by at most 2^-9 relative.
      EXPECT_NEAR(sd, d.sigma, 0.01 * d.sigma) << name;
      EXPECT_NEAR(mean, 0.0, 0.01 * d.sigma) << name;
      EXPECT_NEAR(frac1, 0.6827, 0.01) << name;
    }
  }
}

TEST(Bench_InputDistribution_both, SameSeedSameInputsOtherSeedOrStreamOthers) {
  for (const char* name : {"normal1", "uniform16"}) {
    const Distribution d = builtin(name);
    const std::vector<uint16_t> a = sample(d, true, 4096), b = sample(d, true, 4096);
    const std::vector<uint16_t> other_seed = sample(d, true, 4096, 99), other_stream = sample(d, true, 4096, 1234, 17);
    EXPECT_EQ(a, b) << name;
    EXPECT_NE(a, other_seed) << name;
    EXPECT_NE(a, other_stream) << name;
  }
}

TEST(Bench_InputDistribution_both, SampleCyclesThroughItsPatterns) {
  Distribution d;
  d.name = "file";
  d.kind = DistKind::kSample;
  d.x_sample = {0x3F80, 0x4000, 0xC040, 0x7FC0, 0x0001};  // 1, 2, -3, NaN, smallest subnormal (bf16)
  const std::vector<uint16_t> v = sample(d, true, 12, 1234, 16);
  const int64_t off = sample_offset(16, 5);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], d.x_sample[size_t((int64_t(i) + off) % 5)]) << i;
  // A bf16 capture in an fp16 run: each value rounded to fp16 (1 -> 0x3C00, 2 -> 0x4000, -3 -> 0xC200; NaN -> the
  // canonical 0x7FFF; 2^-133 -> +0).
  d.sample_dtype = "bf16";
  const std::vector<uint16_t> f = sample_patterns(d, false, false);
  EXPECT_EQ(f, (std::vector<uint16_t>{0x3C00, 0x4000, 0xC200, 0x7FFF, 0x0000}));
  EXPECT_EQ(sample_patterns(d, true, false), d.x_sample);
  // An fp16 capture in a bf16 run: 1 (0x3C00) -> 0x3F80, 65504 (0x7BFF) -> 65536 (0x4780), 2^-24 (0x0001) -> 0x3380.
  Distribution h = d;
  h.sample_dtype = "fp16";
  h.x_sample = {0x3C00, 0x7BFF, 0x0001};
  EXPECT_EQ(sample_patterns(h, true, false), (std::vector<uint16_t>{0x3F80, 0x4780, 0x3380}));
  // Patterns used as given when the sample is raw.
  d.sample_dtype = "";
  EXPECT_EQ(sample_patterns(d, false, false), d.x_sample);
}

TEST(Bench_InputDistribution_both, FileOfTheWrongSizeIsRefused) {
  const std::string path = ::testing::TempDir() + "/ten_bytes.bin";
  std::ofstream(path, std::ios::binary) << "0123456789";
  EXPECT_EQ(read_raw16(path, 5, "--input").size(), 5u);
  EXPECT_EQ(read_raw16(path, 5, "--input")[0], uint16_t('0' | ('1' << 8)));  // little-endian
  try {
    read_raw16(path, 8, "--input");
    FAIL() << "a 10-byte file read as 8 elements";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), ("bench: --input " + path + " must hold 16 bytes (8 16-bit elements), got 10").c_str());
  }
}

}  // namespace
}  // namespace fuseproof::bench
