// domain_sweep_test.cpp: tests reference/domain_sweep.h: the whole 2^32 domain's digests equal the device's.
#include <cstdio>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "common/golden_digests.h"
#include "common/sha256.h"
#include "property_tests/support/bit_patterns.h"
#include "property_tests/support/golden_paths.h"
#include "reference/add_round.h"
#include "reference/domain_sweep.h"
#include "reference/gelu_table.h"

namespace fuseproof::ref {
namespace {

std::string golden_digest(const std::string& op, Dtype d) {
  return require_golden_digest(test::golden_dir() + "/sm_90/digests.json", op, d);
}

std::vector<uint16_t> cuda_table(Dtype d) {
  return gelu_tanh_table(d, GeluConfig{TanhModel::kCuda, Contraction::kFma, NanPolicy::kCudaCvtRn, &test::sm90_mufu()});
}

std::string sweep_digest(Dtype d, const std::vector<uint16_t>& table, SweepOptions opt = {}) {
  Sha256 h;
  sweep_bias_gelu(d, table, NanPolicy::kCudaCvtRn,
                  [&](uint32_t, uint32_t n, const uint16_t* out) { h.update(out, size_t(n) * 65536 * 2); }, opt);
  return h.hex();
}

/// Sweeps all 2^32 pairs of `op` and compares the stream's digest with golden/sm_90; the "no errors found" line is
/// printed only when the digests are equal.
void expect_whole_domain_digest_equals_golden(const std::string& op, Dtype d) {
  const std::string got = sweep_digest(d, op == "bias_gelu_tanh" ? cuda_table(d) : std::vector<uint16_t>{});
  const std::string want = golden_digest(op, d);
  EXPECT_EQ(got, want) << op << " " << dtype_name(d) << ": the 2^32-pair stream's SHA-256 differs from golden/sm_90";
  if (got == want)
    std::printf("In 4294967296 cases, no errors found in %s %s (digest equals golden/sm_90).\n", op.c_str(),
                dtype_name(d));
}

TEST(Reference_BiasGeluTanh_bf16, WholeDomainDigestEqualsGoldenSm90) {
  expect_whole_domain_digest_equals_golden("bias_gelu_tanh", Dtype::kBf16);
}

TEST(Reference_BiasGeluTanh_fp16, WholeDomainDigestEqualsGoldenSm90) {
  expect_whole_domain_digest_equals_golden("bias_gelu_tanh", Dtype::kFp16);
}

TEST(Reference_AddRound_bf16, WholeDomainDigestEqualsGoldenSm90) {
  expect_whole_domain_digest_equals_golden("add_round", Dtype::kBf16);
}

TEST(Reference_AddRound_fp16, WholeDomainDigestEqualsGoldenSm90) {
  expect_whole_domain_digest_equals_golden("add_round", Dtype::kFp16);
}

TEST(Reference_DomainSweep_both, NegativeControlOneWrongEntryChangesTheDigest) {
  SweepOptions part;
  part.bias_first = 0x3F00;
  part.bias_count = 64;
  auto table = cuda_table(Dtype::kBf16);
  const std::string clean = sweep_digest(Dtype::kBf16, table, part);
  table[0x3F80] ^= 1;
  EXPECT_NE(sweep_digest(Dtype::kBf16, table, part), clean);
}

TEST(Reference_DomainSweep_both, BlockingAndThreadsDoNotChangeTheStream) {
  SweepOptions a, b;
  a.bias_first = b.bias_first = 1000;
  a.bias_count = b.bias_count = 300;
  a.threads = 1;
  a.biases_per_block = 7;
  b.threads = 3;
  b.biases_per_block = 64;
  const auto table = cuda_table(Dtype::kFp16);
  EXPECT_EQ(sweep_digest(Dtype::kFp16, table, a), sweep_digest(Dtype::kFp16, table, b));
}

RC_GTEST_PROP(Reference_DomainSweep_both, RowEqualsAddRoundThenTable, ()) {
  static const auto tables = [] { return std::pair(cuda_table(Dtype::kBf16), cuda_table(Dtype::kFp16)); }();
  const Dtype d = *rc::gen::element(Dtype::kBf16, Dtype::kFp16);
  const auto& table = d == Dtype::kBf16 ? tables.first : tables.second;
  const auto [x0, b] = *test::gen_half_pair(d);  // x0 + b may be an exact tie
  std::vector<uint16_t> row(65536);
  sweep_row(d, table.data(), NanPolicy::kCudaCvtRn, b, row.data());
  RC_ASSERT(row[x0] == table[add_round(d, x0, b, NanPolicy::kCudaCvtRn)]);
  for (int k = 0; k < 63; ++k) {
    const uint16_t x = *test::gen_half_bits(d);
    RC_ASSERT(row[x] == table[add_round(d, x, b, NanPolicy::kCudaCvtRn)]);
  }
}

}  // namespace
}  // namespace fuseproof::ref
