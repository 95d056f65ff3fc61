// domain_sweep_test.cpp: tests reference/domain_sweep.h: the whole 2^32 domain's digests equal the device's.
#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "common/golden_digests.h"
#include "common/sha256.h"
#include "common/tree_digest.h"
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

/// The tree digest (common/tree_digest.h) of all 2^32 pairs, timed (printed, never asserted), against the tree digest
/// captured from eager on the GPU when golden/sm_90 has one.
void expect_whole_domain_tree_digest_equals_golden(const std::string& op, Dtype d) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string got =
      sweep_tree_digest(d, op == "bias_gelu_tanh" ? cuda_table(d) : std::vector<uint16_t>{}, NanPolicy::kCudaCvtRn);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s %s tree digest %s (4294967296 cases, %.2f s on %u hardware threads)\n", op.c_str(), dtype_name(d),
              got.c_str(), s, std::thread::hardware_concurrency());
  const std::optional<std::string> want =
      read_golden_digest(test::golden_dir() + "/sm_90/digests.json", op + "_tree", d);
  if (!want) GTEST_SKIP() << "golden/sm_90/digests.json has no " << op << "_tree " << dtype_name(d)
                          << " digest: add it on a GPU with scripts/capture_golden.py --out golden --digests-only";
  EXPECT_EQ(got, *want) << op << " " << dtype_name(d) << ": the tree digest differs from golden/sm_90";
  if (got == *want)
    std::printf("In 4294967296 cases, no errors found in %s %s (tree digest equals golden/sm_90).\n", op.c_str(),
                dtype_name(d));
}

TEST(Reference_BiasGeluTanh_bf16, WholeDomainTreeDigestEqualsGoldenSm90) {
  expect_whole_domain_tree_digest_equals_golden("bias_gelu_tanh", Dtype::kBf16);
}

TEST(Reference_BiasGeluTanh_fp16, WholeDomainTreeDigestEqualsGoldenSm90) {
  expect_whole_domain_tree_digest_equals_golden("bias_gelu_tanh", Dtype::kFp16);
}

// The tree digest is the definition in tree_digest.h, whatever the thread count: here rebuilt from the ordered
// stream's rows over 512 biases (NaN/Inf ones included).
TEST(Reference_DomainSweep_both, TreeDigestIsTheRowDigestsDigestForAnyThreadCount) {
  const std::vector<uint16_t> table = cuda_table(Dtype::kBf16);
  SweepOptions part;
  part.bias_first = 0x7F00;
  part.bias_count = 512;
  Sha256 tree;
  sweep_bias_gelu(Dtype::kBf16, table, NanPolicy::kCudaCvtRn, [&](uint32_t, uint32_t n, const uint16_t* out) {
    for (uint32_t r = 0; r < n; ++r) {
      const std::string row = Sha256::of(out + size_t(r) * 65536, 65536 * 2);
      tree.update(row.data(), row.size());
    }
  }, part);
  const std::string want = tree.hex();
  for (unsigned threads : {1u, 2u, 3u}) {
    part.threads = threads;
    EXPECT_EQ(sweep_tree_digest(Dtype::kBf16, table, NanPolicy::kCudaCvtRn, part), want) << threads << " threads";
  }
  // Negative control: one wrong table entry changes it.
  std::vector<uint16_t> bad = table;
  bad[0x3F80] ^= 1;
  EXPECT_NE(sweep_tree_digest(Dtype::kBf16, bad, NanPolicy::kCudaCvtRn, part), want);
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
