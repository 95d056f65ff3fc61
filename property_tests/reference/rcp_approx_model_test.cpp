// rcp_approx_model_test.cpp: tests reference/rcp_approx_model.h against synthetic tables (the device's table is a
// capture, proved by the 2^32 digest): the correctly rounded table against IEEE division over whole binades, one
// changed code found exactly where it is, special values, ftz, the file codec and its refusals, the 4-byte row and
// its tree digest.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/sha256.h"
#include "common/tree_digest.h"
#include "reference/dtype.h"
#include "reference/rcp_approx_model.h"

namespace fuseproof::ref {
namespace {

constexpr uint32_t kMant = 0x007FFFFFu;

/// The tables are 32 MiB each: built once.
const RcpApproxTable& correctly_rounded() {
  static const RcpApproxTable t = RcpApproxTable::correctly_rounded();
  return t;
}

std::vector<uint8_t> zero_codes() { return std::vector<uint8_t>(kRcpApproxMantissas, 0); }

RcpApproxTable table_of(const std::vector<uint8_t>& codes) {
  std::string why;
  std::optional<RcpApproxTable> t = RcpApproxTable::from_codes(codes, &why);
  EXPECT_TRUE(t) << why;
  return std::move(*t);
}

/// 1/x by IEEE division with the ftz of rcp.approx.ftz: a subnormal result is a signed zero.
uint32_t division_ftz(uint32_t x) {
  const uint32_t q = f32_bits(1.0f / f32_from_bits(x));
  return (q & 0x7F800000u) == 0 ? q & 0x80000000u : q;
}

/// The inputs of binade `e` (exponent field) of sign `sign` where the model differs from division_ftz, at most 8.
std::vector<uint32_t> differences_in_binade(const RcpApproxTable& t, uint32_t sign, uint32_t e, uint64_t* count) {
  std::vector<uint32_t> out;
  *count = 0;
  for (uint32_t k = 0; k <= kMant; ++k) {
    const uint32_t x = sign | e << 23 | k;
    if (rcp_approx_ftz_bits(x, t) != division_ftz(x)) {
      if (out.size() < 8) out.push_back(x);
      ++*count;
    }
  }
  return out;
}

TEST(Reference_RcpApproxFtz_f32, ConstantsOnTheirOwn) {
  EXPECT_TRUE(std::isnan(f32_from_bits(kRcpApproxNanBits)));
  EXPECT_EQ(kRcpApproxNanBits, 0x7FFFFFFFu) << "PTX's canonical NaN";
  EXPECT_EQ(kRcpApproxMantissas, 8388608u);
  EXPECT_EQ(kRcpApproxTableMagic.size(), 32u);
  EXPECT_EQ(kRcpApproxTableBytes, 32u + 2097152u);
  EXPECT_EQ(rcp_correctly_rounded_mantissa_bits(0), 0x3F800000u) << "1/1";
  EXPECT_EQ(rcp_correctly_rounded_mantissa_bits(1), 0x3F7FFFFEu) << "1/(1 + 2^-23) = 1 - 2^-23 + 2^-46 - ...";
  EXPECT_EQ(rcp_correctly_rounded_mantissa_bits(0x400000), 0x3F2AAAABu) << "1/1.5";
  EXPECT_EQ(rcp_correctly_rounded_mantissa_bits(kMant), 0x3F000001u) << "1/(2 - 2^-23) = 0.5 + 2^-25 + ...";
}

// The model with every code 0 is IEEE 1/x with ftz: every pattern of five binades of each sign (the smallest normals,
// [1, 2), a middle one, and the two largest, where results turn subnormal and flush).
TEST(Reference_RcpApproxFtz_f32, CorrectlyRoundedTableIsDivisionOverWholeBinades) {
  for (uint32_t sign : {0u, 0x80000000u})
    for (uint32_t e : {1u, 127u, 200u, 253u, 254u}) {
      uint64_t n = 0;
      const std::vector<uint32_t> bad = differences_in_binade(correctly_rounded(), sign, e, &n);
      const uint32_t x = bad.empty() ? 0 : bad[0];
      EXPECT_EQ(n, 0u) << "binade " << e << " sign " << (sign >> 31) << ": first x=0x" << std::hex << x << " => 0x"
                       << rcp_approx_ftz_bits(x, correctly_rounded()) << " expected 0x" << division_ftz(x);
    }
}

// Negative control: a +1 at one mantissa shows up at that mantissa alone, in every binade whose result is normal, with
// either sign, as the next pattern up.
TEST(Reference_RcpApproxFtz_f32, OneChangedCodeShowsUpExactlyThere) {
  constexpr uint32_t k0 = 0x123456;
  std::vector<uint8_t> codes = zero_codes();
  codes[k0] = uint8_t(RcpUlpCode::kPlusOne);
  const RcpApproxTable t = table_of(codes);
  for (uint32_t sign : {0u, 0x80000000u})
    for (uint32_t e : {1u, 127u, 200u}) {
      uint64_t n = 0;
      const std::vector<uint32_t> bad = differences_in_binade(t, sign, e, &n);
      const uint32_t x = sign | e << 23 | k0;
      ASSERT_EQ(n, 1u) << "binade " << e;
      EXPECT_EQ(bad[0], x);
      EXPECT_EQ(rcp_approx_ftz_bits(x, t), division_ftz(x) + 1) << std::hex << x;
    }
  // A -1 at the last mantissa crosses down to 0.5 exactly; at 2^126 * (2 - 2^-23) the result is then 2^-126.
  codes = zero_codes();
  codes[kMant] = uint8_t(RcpUlpCode::kMinusOne);
  const RcpApproxTable down = table_of(codes);
  EXPECT_EQ(down.result_bits(kMant), 0x3F000000u);
  EXPECT_EQ(down.code(kMant), uint8_t(RcpUlpCode::kMinusOne));
  EXPECT_EQ(rcp_approx_ftz_bits(0x3FFFFFFFu, down), 0x3F000000u);
  EXPECT_EQ(rcp_approx_ftz_bits(0x7E7FFFFFu, down), 0x00800000u);
  EXPECT_EQ(rcp_approx_ftz_bits(0x7E7FFFFFu, correctly_rounded()), 0x00800001u);
}

TEST(Reference_RcpApproxFtz_f32, SpecialValues) {
  const RcpApproxTable& t = correctly_rounded();
  struct Case {
    uint32_t x, want;
  };
  const Case cases[] = {
      {0x00000000, 0x7F800000}, {0x80000000, 0xFF800000},  // +-0 -> +-Inf
      {0x00000001, 0x7F800000}, {0x80000001, 0xFF800000},  // subnormal inputs flushed to +-0 first
      {0x00400000, 0x7F800000}, {0x007FFFFF, 0x7F800000}, {0x807FFFFF, 0xFF800000},
      {0x7F800000, 0x00000000}, {0xFF800000, 0x80000000},  // +-Inf -> +-0
      {0x7FC00000, kRcpApproxNanBits}, {0xFFC00000, kRcpApproxNanBits}, {0x7F800001, kRcpApproxNanBits},
      {0xFF800001, kRcpApproxNanBits}, {0x7FFFFFFF, kRcpApproxNanBits}, {0xFFFFFFFF, kRcpApproxNanBits},
      {0x00800000, 0x7E800000}, {0x80800000, 0xFE800000},  // 2^-126 -> 2^126
      {0x7E800000, 0x00800000}, {0xFE800000, 0x80800000},  // 2^126 -> 2^-126, the last normal result
      {0x7E800001, 0x00000000}, {0xFE800001, 0x80000000},  // just above: the result is subnormal, flushed
      {0x7F000000, 0x00000000}, {0x7F7FFFFF, 0x00000000}, {0xFF7FFFFF, 0x80000000},
      {0x3F800000, 0x3F800000}, {0xBF800000, 0xBF800000}, {0x40000000, 0x3F000000},
      {0x40C00000, f32_bits(1.0f / 6.0f)}, {0xC0C00000, f32_bits(-1.0f / 6.0f)}, {0x43E00000, f32_bits(1.0f / 448.0f)},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(rcp_approx_ftz_bits(c.x, t), c.want) << std::hex << "x=0x" << c.x;
    EXPECT_EQ(f32_bits(rcp_approx_ftz(f32_from_bits(c.x), t)), c.want) << std::hex << "x=0x" << c.x;
  }
  EXPECT_EQ(f32_bits(1.0f / 448.0f), 0x3B124925u);
}

// Every input whose 1/x is subnormal gives a signed zero and every other finite nonzero input a normal result, for a
// table with codes everywhere (so the neighbours of 0.5 and 1.0 are among them).
TEST(Reference_RcpApproxFtz_f32, FlushesExactlyTheSubnormalResults) {
  std::vector<uint8_t> codes(kRcpApproxMantissas);
  for (uint32_t k = 0; k < kRcpApproxMantissas; ++k) codes[k] = uint8_t(k % 3);
  const RcpApproxTable t = table_of(codes);
  uint64_t zeros = 0;
  for (uint32_t e : {252u, 253u, 254u})
    for (uint32_t k = 0; k <= kMant; ++k) {
      const uint32_t x = e << 23 | k;
      const uint32_t y = rcp_approx_ftz_bits(x, t);
      const uint32_t m = t.result_bits(k);
      // 1/x = y(m) * 2^(127 - e): normal when y(m)'s exponent field + 127 - e >= 1.
      const bool normal = int(m >> 23) + 127 - int(e) >= 1;
      ASSERT_EQ(y == 0, !normal) << std::hex << x;
      if (normal) ASSERT_EQ(y & kMant, m & kMant) << std::hex << x;
      zeros += y == 0;
    }
  EXPECT_EQ(zeros, uint64_t(kMant) + 1 + kMant) << "binade 254 all, binade 253 all but 2^126 (code 0 there)";
}

TEST(Reference_RcpApproxFtz_f32, FileRoundTripAndTheSharedSyntheticDigest) {
  // The synthetic table the capture script's test writes too (period 7, not a multiple of 4: every code in every
  // position of a byte): both writers must give these bytes.
  std::vector<uint8_t> codes(kRcpApproxMantissas);
  const uint8_t period[7] = {0, 1, 2, 0, 2, 1, 1};
  for (uint32_t k = 0; k < kRcpApproxMantissas; ++k) codes[k] = period[k % 7];
  const RcpApproxTable t = table_of(codes);
  const std::vector<uint8_t> bytes = serialize_rcp_approx_table(t);
  ASSERT_EQ(bytes.size(), kRcpApproxTableBytes);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 32), std::string(kRcpApproxTableMagic));
  EXPECT_EQ(bytes[32], uint8_t(0 | 1 << 2 | 2 << 4 | 0 << 6)) << "mantissa 0 in the low bits";
  EXPECT_EQ(Sha256::of(bytes.data(), bytes.size()),
            "637ba2212c193620eab039b2965f2f4e8510030a25eab89779cb7ffd8e163fbc");
  std::string why;
  const std::optional<RcpApproxTable> back = parse_rcp_approx_table(bytes, &why);
  ASSERT_TRUE(back) << why;
  for (uint32_t k = 0; k < kRcpApproxMantissas; ++k) {
    ASSERT_EQ(back->code(k), codes[k]) << k;
    ASSERT_EQ(back->result_bits(k), t.result_bits(k)) << k;
  }
  EXPECT_EQ(serialize_rcp_approx_table(RcpApproxTable::correctly_rounded())[40], 0) << "all codes 0";
}

TEST(Reference_RcpApproxFtz_f32, ParseRefusesForeignAndCorruptFiles) {
  const std::vector<uint8_t> good = serialize_rcp_approx_table(correctly_rounded());
  std::string why;
  ASSERT_TRUE(parse_rcp_approx_table(good, &why)) << why;
  auto refused = [](std::vector<uint8_t> bytes, const std::string& want) {
    std::string why;
    EXPECT_FALSE(parse_rcp_approx_table(bytes, &why)) << want;
    EXPECT_NE(why.find(want), std::string::npos) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << "one line";
  };
  std::vector<uint8_t> b = good;
  b.pop_back();
  refused(b, "must hold 2097184 bytes, got 2097183");
  b = good;
  b.push_back(0);
  refused(b, "must hold 2097184 bytes, got 2097185");
  refused({}, "got 0");
  b = good;
  b[3] ^= 0x20;
  refused(b, "must start with the magic");
  b = good;
  b[32 + 1000] |= 3 << 4;  // mantissa 4002 gets code 3
  refused(b, "codes must be 0, 1 or 2, got 3 at mantissa 4002");
  std::vector<uint8_t> codes = zero_codes();
  codes[77] = 3;
  EXPECT_FALSE(RcpApproxTable::from_codes(codes, &why));
  EXPECT_NE(why.find("got 3 at mantissa 77"), std::string::npos) << why;
  codes.pop_back();
  EXPECT_FALSE(RcpApproxTable::from_codes(codes, &why));
  EXPECT_NE(why.find("8388608 codes needed, got 8388607"), std::string::npos) << why;
}

TEST(Reference_RcpApproxFtz_f32, RowIsLittleEndianBits) {
  const RcpApproxTable& t = correctly_rounded();
  std::vector<uint8_t> row(4 * 65536);
  for (uint32_t r : {0x0000u, 0x3F80u, 0x7F80u, 0xBFC0u, 0xFFFFu}) {
    rcp_approx_ftz_row(t, uint16_t(r), row.data());
    for (uint32_t lo = 0; lo < 65536; ++lo) {
      const uint32_t got = uint32_t(row[4 * lo]) | uint32_t(row[4 * lo + 1]) << 8 | uint32_t(row[4 * lo + 2]) << 16 |
                           uint32_t(row[4 * lo + 3]) << 24;
      ASSERT_EQ(got, rcp_approx_ftz_bits(r << 16 | lo, t)) << std::hex << (r << 16 | lo);
    }
  }
}

// The 4-byte tree digest is the digest of the rows' digests for any thread count; a changed code changes it.
TEST(Reference_RcpApproxFtz_f32, FourByteRowTreeDigestIsTheRowDigestsDigest) {
  const RcpApproxTable& t = correctly_rounded();
  const ByteRowFn row = [&t](uint16_t r, uint8_t* out) { rcp_approx_ftz_row(t, r, out); };
  SweepOptions part;
  part.bias_first = 0x3FF0;
  part.bias_count = 20;
  Sha256 tree;
  std::vector<uint8_t> bytes(4 * 65536);
  for (uint32_t r = part.bias_first; r < part.bias_first + part.bias_count; ++r) {
    row(uint16_t(r), bytes.data());
    const std::string digest = Sha256::of(bytes.data(), bytes.size());
    tree.update(digest.data(), digest.size());
  }
  const std::string want = tree.hex();
  for (unsigned threads : {1u, 2u, 3u}) {
    part.threads = threads;
    EXPECT_EQ(sweep_tree_digest_bytes(row, part, 4), want) << threads << " threads";
  }
  std::vector<uint8_t> codes = zero_codes();
  codes[0x7F0000 + 5] = uint8_t(RcpUlpCode::kMinusOne);  // row 0x3FFF
  const RcpApproxTable changed = table_of(codes);
  EXPECT_NE(sweep_tree_digest_bytes([&changed](uint16_t r, uint8_t* out) { rcp_approx_ftz_row(changed, r, out); },
                                    part, 4),
            want);
}

}  // namespace
}  // namespace fuseproof::ref
