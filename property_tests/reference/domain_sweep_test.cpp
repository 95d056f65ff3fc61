// domain_sweep_test.cpp: tests common/domain_sweep.h (the driver) and common/tree_digest.h over the oracle's rows
// (reference/sweep_row.h, OpPlan::row): every op, contract and dtype's whole 2^32 domain digest equals the one
// captured from eager PyTorch on the device (golden/<arch>/digests.json).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <thread>
#include <tuple>

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "common/golden_library.h"
#include "common/sha256.h"
#include "common/domain_sweep.h"
#include "common/tree_digest.h"
#include "property_tests/support/bit_patterns.h"
#include "property_tests/support/golden_paths.h"
#include "reference/activation_table.h"
#include "reference/add_round.h"
#include "reference/sweep_row.h"
#include "reference/format_cast.h"
#include "reference/op_plan.h"

namespace fuseproof::ref {
namespace {

MathConfig cuda_cfg() {
  return MathConfig{MathModel::kCuda, Contraction::kFma, NanPolicy::kCudaCvtRn, &test::arch_mufu()};
}

const OpPlan& plan(const std::string& op, Contract c, Dtype d) {
  static std::map<std::tuple<std::string, Contract, Dtype>, std::unique_ptr<OpPlan>> plans;
  static const MathConfig cfg = cuda_cfg();
  auto& p = plans[{op, c, d}];
  if (!p) p = std::make_unique<OpPlan>(*find_op(op), c, d, cfg);
  return *p;
}

/// eager `x + bias` alone: the add's row without a table after it.
RowFn add_round_row(Dtype d) {
  return [d](uint16_t b, uint16_t* out) { sweep_row(d, nullptr, NanPolicy::kCudaCvtRn, b, out); };
}

RowFn plan_row(const OpPlan& p) {
  return [&p](uint16_t b, uint16_t* out) { p.row(b, out); };
}

std::string flat_digest(const RowFn& row, SweepOptions opt = {}) {
  Sha256 h;
  sweep_domain(row, [&](uint32_t, uint32_t n, const uint16_t* out) { h.update(out, size_t(n) * 65536 * 2); }, opt);
  return h.hex();
}

/// The flat stream (one SHA-256 of all 2^32 outputs) against golden: the digests the first capture recorded.
void expect_flat_digest_equals_golden(const std::string& key, const RowFn& row, Dtype d) {
  const std::string got = flat_digest(row);
  const std::string want = test::golden().require_digest(key, d);
  EXPECT_EQ(got, want) << key << " " << dtype_name(d) << ": the 2^32-pair stream's SHA-256 differs from "
                       << test::golden().label();
  if (got == want)
    std::printf("In 4294967296 cases, no errors found in %s %s (digest equals %s).\n", key.c_str(), dtype_name(d),
                test::golden().label().c_str());
}

TEST(Reference_BiasGeluTanh_bf16, WholeDomainDigestEqualsGolden) {
  expect_flat_digest_equals_golden("bias_gelu_tanh", plan_row(plan("bias_gelu_tanh", Contract::kEager, Dtype::kBf16)),
                                   Dtype::kBf16);
}
TEST(Reference_BiasGeluTanh_fp16, WholeDomainDigestEqualsGolden) {
  expect_flat_digest_equals_golden("bias_gelu_tanh", plan_row(plan("bias_gelu_tanh", Contract::kEager, Dtype::kFp16)),
                                   Dtype::kFp16);
}
TEST(Reference_AddRound_bf16, WholeDomainDigestEqualsGolden) {
  expect_flat_digest_equals_golden("add_round", add_round_row(Dtype::kBf16), Dtype::kBf16);
}
TEST(Reference_AddRound_fp16, WholeDomainDigestEqualsGolden) {
  expect_flat_digest_equals_golden("add_round", add_round_row(Dtype::kFp16), Dtype::kFp16);
}

/// Every 2-input op x contract x dtype of the op spec: the tree digest (common/tree_digest.h) of all 2^32 pairs, timed
/// (printed, never asserted), equals the tree digest captured from eager on the GPU. (Ops of 3 inputs have no 2^32
/// domain: their stages are digested instead, property_tests/reference/op_stages_test.cpp and the stages class.)
struct Case {
  std::string op;
  Contract contract;
  Dtype dtype;
};

/// ctest's line names the case ("silu_and_mul fp32 bf16"), not its bytes.
void PrintTo(const Case& c, std::ostream* os) {
  *os << c.op << " " << contract_name(c.contract) << " " << dtype_name(c.dtype);
}

std::vector<Case> every_case() {
  std::vector<Case> v;
  for (const OpSpec& op : op_registry())
    for (const ContractSpec& c : op.contracts)
      for (Dtype d : kAllDtypes)
        if (op.inputs.size() == 2) v.push_back({op.name, c.contract, d});
  return v;
}

class Reference_OpFamily : public ::testing::TestWithParam<Case> {};

TEST_P(Reference_OpFamily, WholeDomainTreeDigestEqualsGolden) {
  const Case& c = GetParam();
  const std::string key = golden_digest_key(c.op, c.contract) + "_tree";
  const std::optional<std::string> want = test::golden().digest(key, c.dtype);
  ASSERT_TRUE(want) << test::golden().label() << "/digests.json has no " << key << " " << dtype_name(c.dtype)
                    << " digest: capture it on the GPU with scripts/capture_golden.py --out golden --add-ops";
  const auto t0 = std::chrono::steady_clock::now();
  const std::string got = sweep_tree_digest(plan_row(plan(c.op, c.contract, c.dtype)));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s %s tree digest %s (4294967296 cases, %.2f s on %u hardware threads)\n", key.c_str(),
              dtype_name(c.dtype), got.c_str(), s, std::thread::hardware_concurrency());
  EXPECT_EQ(got, *want) << key << " " << dtype_name(c.dtype) << ": the tree digest differs from "
                        << test::golden().label();
  if (got == *want)
    std::printf("In 4294967296 cases, no errors found in %s %s (tree digest equals %s).\n", key.c_str(),
                dtype_name(c.dtype), test::golden().label().c_str());
}

INSTANTIATE_TEST_SUITE_P(EveryOpContractDtype, Reference_OpFamily, ::testing::ValuesIn(every_case()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.op + "_" + contract_name(info.param.contract) + "_" +
                                  dtype_name(info.param.dtype);
                         });

TEST(Reference_DomainSweep_both, NegativeControlOneWrongEntryChangesTheDigest) {
  SweepOptions part;
  part.bias_first = 0x3F00;
  part.bias_count = 64;
  const OpPlan& p = plan("bias_gelu_tanh", Contract::kEager, Dtype::kBf16);
  const std::string clean = flat_digest(plan_row(p), part);
  const RowFn spoiled = [&](uint16_t b, uint16_t* out) {
    p.row(b, out);
    out[0x3F80] ^= 1;
  };
  EXPECT_NE(flat_digest(spoiled, part), clean);
  EXPECT_NE(sweep_tree_digest(spoiled, part), sweep_tree_digest(plan_row(p), part));
}

TEST(Reference_DomainSweep_both, BlockingAndThreadsDoNotChangeTheStream) {
  SweepOptions a, b;
  a.bias_first = b.bias_first = 1000;
  a.bias_count = b.bias_count = 300;
  a.threads = 1;
  a.biases_per_block = 7;
  b.threads = 3;
  b.biases_per_block = 64;
  const RowFn row = plan_row(plan("silu_and_mul", Contract::kEager, Dtype::kFp16));
  EXPECT_EQ(flat_digest(row, a), flat_digest(row, b));
}

// The tree digest is the definition in tree_digest.h, whatever the thread count: here rebuilt from the ordered
// stream's rows over 512 second inputs (NaN/Inf ones included).
TEST(Reference_DomainSweep_both, TreeDigestIsTheRowDigestsDigestForAnyThreadCount) {
  const RowFn row = plan_row(plan("bias_gelu_tanh", Contract::kEager, Dtype::kBf16));
  SweepOptions part;
  part.bias_first = 0x7F00;
  part.bias_count = 512;
  Sha256 tree;
  sweep_domain(row, [&](uint32_t, uint32_t n, const uint16_t* out) {
    for (uint32_t r = 0; r < n; ++r) {
      const std::string digest = Sha256::of(out + size_t(r) * 65536, 65536 * 2);
      tree.update(digest.data(), digest.size());
    }
  }, part);
  const std::string want = tree.hex();
  for (unsigned threads : {1u, 2u, 3u}) {
    part.threads = threads;
    EXPECT_EQ(sweep_tree_digest(row, part), want) << threads << " threads";
  }
}

// The same for rows of bytes (the narrow-format casts): SHA-256 over each row's 65,536 bytes, not the uint16 buffer.
TEST(Reference_DomainSweep_both, ByteRowTreeDigestIsTheRowDigestsDigestForAnyThreadCount) {
  const ByteRowFn row = [](uint16_t r, uint8_t* out) { format_cast_row(FormatCast::kE4m3Nan, r, out); };
  SweepOptions part;
  part.bias_first = 0x43D0;
  part.bias_count = 48;
  Sha256 tree;
  std::vector<uint8_t> bytes(65536);
  for (uint32_t r = part.bias_first; r < part.bias_first + part.bias_count; ++r) {
    row(uint16_t(r), bytes.data());
    const std::string digest = Sha256::of(bytes.data(), bytes.size());
    tree.update(digest.data(), digest.size());
  }
  const std::string want = tree.hex();
  for (unsigned threads : {1u, 2u, 3u}) {
    part.threads = threads;
    EXPECT_EQ(sweep_tree_digest_bytes(row, part), want) << threads << " threads";
  }
  // Negative control: the saturating cast differs on these rows (448 .. 512), so its digest does.
  EXPECT_NE(sweep_tree_digest_bytes([](uint16_t r, uint8_t* out) { format_cast_row(FormatCast::kE4m3Saturate, r, out); },
                                    part),
            want);
}

TEST(Reference_DomainSweep_both, AWorkerExceptionReachesTheCaller) {
  SweepOptions part;
  part.bias_count = 64;
  const RowFn throwing = [](uint16_t b, uint16_t*) {
    if (b == 40) throw std::runtime_error("row 40");
  };
  EXPECT_THROW(sweep_tree_digest(throwing, part), std::runtime_error);
  EXPECT_THROW(flat_digest(throwing, part), std::runtime_error);
}

TEST(Reference_DomainSweep_both, AConsumerExceptionReachesTheCaller) {
  SweepOptions part;
  part.bias_count = 64;
  part.biases_per_block = 4;
  part.threads = 3;
  const RowFn row = add_round_row(Dtype::kBf16);
  EXPECT_THROW(sweep_domain(row, [](uint32_t b0, uint32_t, const uint16_t*) {
    if (b0 == 20) throw std::runtime_error("block at 20");
  }, part), std::runtime_error);
}

// The stop flag ends an ordered sweep after the block that set it: the blocks before it, in order, and none after.
TEST(Reference_DomainSweep_both, StopEndsTheSweepAfterTheBlockThatSetIt) {
  std::atomic<bool> stop{false};
  SweepOptions part;
  part.bias_first = 100;
  part.bias_count = 64;
  part.biases_per_block = 4;
  part.threads = 3;
  part.stop = &stop;
  std::vector<uint32_t> seen;
  sweep_domain(add_round_row(Dtype::kFp16), [&](uint32_t b0, uint32_t, const uint16_t*) {
    seen.push_back(b0);
    if (b0 == 120) stop = true;
  }, part);
  EXPECT_EQ(seen, (std::vector<uint32_t>{100, 104, 108, 112, 116, 120}));
  // Control: without the flag set, every block.
  stop = false;
  seen.clear();
  sweep_domain(add_round_row(Dtype::kFp16), [&](uint32_t b0, uint32_t, const uint16_t*) { seen.push_back(b0); }, part);
  EXPECT_EQ(seen.size(), 16u);
}

// A block function (a backend computing several rows at once) gives the stream its rows give.
TEST(Reference_DomainSweep_both, BlockFunctionGivesTheRowFunctionsStream) {
  const RowFn row = plan_row(plan("silu_and_mul", Contract::kEager, Dtype::kBf16));
  SweepOptions part;
  part.bias_first = 0x7F70;
  part.bias_count = 40;
  part.biases_per_block = 16;
  Sha256 h;
  sweep_blocks([&](uint32_t first, uint32_t count, uint16_t* out) {
    for (uint32_t i = 0; i < count; ++i) row(uint16_t(first + i), out + size_t(i) * 65536);
  }, [&](uint32_t, uint32_t n, const uint16_t* out) { h.update(out, size_t(n) * 65536 * 2); }, part);
  EXPECT_EQ(h.hex(), flat_digest(row, part));
}

// DomainDigests over the ordered stream equals the flat stream and sweep_tree_digest, whatever the thread count and
// the block sizes handed to it; one wrong element changes both (negative control).
TEST(Reference_DomainSweep_both, DomainDigestsEqualTheFlatAndTreeDigests) {
  const OpPlan& p = plan("bias_gelu_tanh", Contract::kEager, Dtype::kFp16);
  SweepOptions part;
  part.bias_first = 0x3C00;
  part.bias_count = 100;
  part.biases_per_block = 9;
  const auto both = [&](const RowFn& row) {
    DomainDigests d(true, true);
    sweep_domain(row, [&](uint32_t, uint32_t n, const uint16_t* out) { d.update(out, n); }, part);
    return std::pair(d.flat_hex(), d.tree_hex());
  };
  const auto [flat, tree] = both(plan_row(p));
  EXPECT_EQ(flat, flat_digest(plan_row(p), part));
  EXPECT_EQ(tree, sweep_tree_digest(plan_row(p), part));
  const RowFn spoiled = [&](uint16_t b, uint16_t* out) {
    p.row(b, out);
    if (b == 0x3C10) out[7] ^= 0x8000;
  };
  const auto [flat2, tree2] = both(spoiled);
  EXPECT_NE(flat2, flat);
  EXPECT_NE(tree2, tree);
}

// Rows of fewer outputs (a rounding stage's: as many pairs as its first operand has values): each row's first
// row_elems outputs count, in the flat stream and in the row digests; what lies past them does not (negative control:
// a change inside them changes both digests).
TEST(Reference_DomainSweep_both, DomainDigestsOfShortRowsHashOnlyTheirElements) {
  constexpr size_t kElems = 1000;
  SweepOptions part;
  part.bias_count = 37;
  part.biases_per_block = 5;
  const auto digests = [&](const RowFn& row) {
    DomainDigests d(true, true, kElems);
    sweep_domain(row, [&](uint32_t, uint32_t n, const uint16_t* out) { d.update(out, n); }, part);
    return std::pair(d.flat_hex(), d.tree_hex());
  };
  const RowFn row = [](uint16_t b, uint16_t* out) {
    for (size_t i = 0; i < 65536; ++i) out[i] = uint16_t(b * 977u + i * 31u);
  };
  Sha256 flat;
  std::vector<std::string> rows;
  std::vector<uint16_t> buf(65536);
  for (uint16_t b = 0; b < part.bias_count; ++b) {
    row(b, buf.data());
    flat.update(buf.data(), kElems * 2);
    rows.push_back(Sha256::of(buf.data(), kElems * 2));
  }
  const auto [f, t] = digests(row);
  EXPECT_EQ(f, flat.hex());
  EXPECT_EQ(t, tree_of_row_digests(rows));
  const auto past = digests([&](uint16_t b, uint16_t* out) {
    row(b, out);
    out[kElems] ^= 1;  // past each row's elements
  });
  EXPECT_EQ(past, std::pair(f, t));
  const auto inside = digests([&](uint16_t b, uint16_t* out) {
    row(b, out);
    if (b == 20) out[kElems - 1] ^= 1;
  });
  EXPECT_NE(inside.first, f);
  EXPECT_NE(inside.second, t);
}

// golden's stage trees ("<key>.stage<k>_tree", derived from the reference where its flat SHA-256 equals the captured
// one: scripts/capture_golden.py --derive-stage-trees) are what the stages class computes on a GPU: a row per b value,
// its a.values outputs. Checked on modulate's stage 0 (65,536 pairs) in both dtypes, with the flat digest beside it;
// the negative control: one output changed changes the tree.
TEST(Reference_DomainSweep_both, GoldenStageTreeIsTheReferencesRowDigests) {
  for (const Dtype d : {Dtype::kBf16, Dtype::kFp16}) {
    const OpPlan& p = plan("modulate", Contract::kEager, d);
    ASSERT_FALSE(p.stages().empty());
    const Stage& st = p.stages()[0];
    ASSERT_EQ(st.pairs(), 65536u) << dtype_name(d);
    const size_t na = st.a.values.size();
    SweepOptions so;
    so.bias_count = uint32_t(st.b.values.size());
    const auto digests = [&](bool spoil) {
      DomainDigests dg(true, true, na);
      sweep_domain([&](uint16_t ib, uint16_t* o) {
        p.stage_row(st, ib, o);
        if (spoil && ib == 7) o[0] ^= 1;
      }, [&](uint32_t, uint32_t n, const uint16_t* rows) { dg.update(rows, n); }, so);
      return std::pair(dg.flat_hex(), dg.tree_hex());
    };
    const auto [flat, tree] = digests(false);
    const std::string key = golden_stage_digest_key("modulate", 0);
    EXPECT_EQ(flat, test::golden().require_digest(key, d)) << dtype_name(d);
    EXPECT_EQ(tree, test::golden().require_digest(key + "_tree", d)) << dtype_name(d);
    EXPECT_NE(digests(true).second, tree) << dtype_name(d);
  }
}

RC_GTEST_PROP(Reference_DomainSweep_both, AddRowEqualsAddRoundThenTable, ()) {
  static const auto tables = [] {
    return std::pair(activation_table(Activation::kGeluTanh, Dtype::kBf16, cuda_cfg()),
                     activation_table(Activation::kGeluTanh, Dtype::kFp16, cuda_cfg()));
  }();
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
