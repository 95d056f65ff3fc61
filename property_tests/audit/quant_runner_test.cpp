// quant_runner_test.cpp: the host quantization runner reports what a subject did to its buffers by itself: the codes
// and scales every byte (poison where nothing was written, the swizzle's padding cells included), guard bytes written
// past either tensor (the pad byte of an odd-sized one too), a changed input, a rejection's message, and the calls of
// a batch spread over the workers each with its own outcome, calls made at once (call_concurrent) each with its own,
// a large call streamed back in row chunks with its guards counted; the CUDA runner the same on CUDA twins of the
// plugins, and its graph capture's replays (skipped without a device). The plugins (quant_test_plugins.c) write known
// bytes.
#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "audit/quant_runner.h"

namespace fuseproof::audit {
namespace {

std::string lib(const std::string& name) { return std::string(FUSEPROOF_QUANT_TEST_PLUGIN_DIR) + "/lib" + name + ".so"; }

const ref::QuantOpSpec& nvfp4() { return *ref::find_quant_op("nvfp4_quant"); }

QuantCallSpec spec(int64_t rows, int64_t width, ref::ScaleLayout layout) {
  return make_quant_call(nvfp4(), ref::QuantContract::kVllmRef, rows, width, FUSEPROOF_DTYPE_BF16, layout);
}

/// The byte the plugins write to code byte j of row r.
uint8_t known_code(int64_t r, int64_t j) { return uint8_t(0x11 * ((r + j) % 15 + 1)); }
/// The poison a byte of a codes or scales tensor keeps when nothing writes it (kPoison, little-endian).
uint8_t poison_byte(size_t i) { return i % 2 ? uint8_t(kPoison >> 8) : uint8_t(kPoison & 0xFF); }

/// Whether scale cell `i` of a swizzled [rows, blocks] tensor is a block's (not padding).
bool is_block_cell(size_t i, int64_t rows, int64_t blocks) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t k = 0; k < blocks; ++k)
      if (size_t(ref::scale_offset(ref::ScaleLayout::kSwizzled128x4, r, k, rows, blocks)) == i) return true;
  return false;
}

using Maker = std::unique_ptr<QuantRunner> (*)(const Plugin&);

/// Where a variant's plugin is: quant_test_<variant> for the host runner, quant_test_cuda_<variant> for CUDA.
struct Backend {
  std::string prefix;
  Maker make;
};

void reads_back_every_byte(const Backend& b) {
  const Plugin p = Plugin::load(lib(b.prefix + "writes_all"), "nvfp4_quant");
  auto runner = b.make(p);
  const QuantCallSpec s = spec(3, 64, ref::ScaleLayout::kSwizzled128x4);
  ASSERT_EQ(s.codes_bytes, 3u * 64 / 2);
  ASSERT_EQ(s.scale_bytes, 128u * 4);
  const QuantOutcome o = runner->call(s);
  EXPECT_EQ(o.rc, 0) << o.message;
  EXPECT_TRUE(o.fault.empty()) << o.fault;
  EXPECT_EQ(o.guard_writes, 0u);
  EXPECT_TRUE(o.inputs_intact) << o.modified;
  ASSERT_EQ(o.codes.size(), s.codes_bytes);
  ASSERT_EQ(o.scales.size(), s.scale_bytes);
  for (int64_t r = 0; r < 3; ++r)
    for (int64_t j = 0; j < 32; ++j) ASSERT_EQ(o.codes[size_t(r * 32 + j)], known_code(r, j)) << r << "," << j;
  for (size_t i = 0; i < o.scales.size(); ++i)
    ASSERT_EQ(o.scales[i], is_block_cell(i, 3, 4) ? 0x38 : 0x00) << "cell " << i;
}

/// Padding cells a subject leaves unwritten come back as poison (what the layout class judges); the block cells are
/// still read.
void unwritten_padding_is_poison(const Backend& b) {
  const Plugin p = Plugin::load(lib(b.prefix + "no_padding"), "nvfp4_quant");
  auto runner = b.make(p);
  const QuantCallSpec s = spec(3, 64, ref::ScaleLayout::kSwizzled128x4);
  const QuantOutcome o = runner->call(s);
  EXPECT_EQ(o.rc, 0) << o.message;
  EXPECT_EQ(o.guard_writes, 0u);
  size_t poisoned = 0;
  for (size_t i = 0; i < o.scales.size(); ++i) {
    if (is_block_cell(i, 3, 4)) {
      ASSERT_EQ(o.scales[i], 0x38) << "cell " << i;
    } else {
      ASSERT_EQ(o.scales[i], poison_byte(i)) << "cell " << i;
      ++poisoned;
    }
  }
  EXPECT_EQ(poisoned, 512u - 12u);
}

/// One byte past the end of codes and one past scales are guard writes, also where the tensor's size is odd (the
/// linear scales of one row of one block: one byte, inside the image's last 16-bit element). Negative control: the
/// correct plugin on the same calls writes no guard byte.
void counts_a_byte_past_either_tensor(const Backend& b) {
  const Plugin bad = Plugin::load(lib(b.prefix + "overrun"), "nvfp4_quant");
  const Plugin good = Plugin::load(lib(b.prefix + "writes_all"), "nvfp4_quant");
  auto bad_runner = b.make(bad);
  auto good_runner = b.make(good);
  for (const QuantCallSpec& s : {spec(3, 64, ref::ScaleLayout::kSwizzled128x4), spec(1, 16, ref::ScaleLayout::kLinear),
                                 spec(5, 32, ref::ScaleLayout::kLinear)}) {
    const QuantOutcome o = bad_runner->call(s);
    EXPECT_EQ(o.rc, 0) << o.message;
    EXPECT_EQ(o.guard_writes, 2u) << describe_quant_call(s);
    EXPECT_EQ(good_runner->call(s).guard_writes, 0u) << describe_quant_call(s);
  }
}

void rejection_keeps_its_message(const Backend& b) {
  const Plugin p = Plugin::load(lib(b.prefix + "writes_all"), "nvfp4_quant");
  QuantCallSpec s = spec(2, 32, ref::ScaleLayout::kLinear);
  s.null_codes = true;
  const QuantOutcome o = b.make(p)->call(s);
  EXPECT_NE(o.rc, 0);
  EXPECT_EQ(o.message, "quant test plugin: out must not be null");
  EXPECT_EQ(o.guard_writes, 0u);
  for (size_t i = 0; i < o.codes.size(); ++i) ASSERT_EQ(o.codes[i], poison_byte(i));
  for (size_t i = 0; i < o.scales.size(); ++i) ASSERT_EQ(o.scales[i], poison_byte(i));
}

/// A batch larger than the runner's lanes: every call's outcome is its own (shapes differ call to call), in order;
/// a second batch reuses the runner's buffers.
void batch_keeps_each_outcome(const Backend& b) {
  const Plugin p = Plugin::load(lib(b.prefix + "writes_all"), "nvfp4_quant");
  auto runner = b.make(p);
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<QuantCallSpec> specs;
    for (int i = 0; i < 3 * runner->preferred_batch(); ++i)
      specs.push_back(spec(1 + (i + pass) % 7, 16 * (1 + i % 5),
                           i % 2 ? ref::ScaleLayout::kLinear : ref::ScaleLayout::kSwizzled128x4));
    const std::vector<QuantOutcome> out = runner->call_batch(specs);
    ASSERT_EQ(out.size(), specs.size());
    for (size_t i = 0; i < specs.size(); ++i) {
      ASSERT_EQ(out[i].rc, 0) << out[i].message;
      ASSERT_TRUE(out[i].fault.empty()) << out[i].fault;
      ASSERT_EQ(out[i].codes.size(), specs[i].codes_bytes);
      ASSERT_EQ(out[i].scales.size(), specs[i].scale_bytes);
      ASSERT_EQ(out[i].guard_writes, 0u);
      ASSERT_TRUE(out[i].inputs_intact);
      const int64_t half = specs[i].width / 2;
      for (int64_t r = 0; r < specs[i].rows; ++r)
        for (int64_t j = 0; j < half; ++j) ASSERT_EQ(out[i].codes[size_t(r * half + j)], known_code(r, j)) << i;
    }
  }
}

/// The calls made at once (call_concurrent): every outcome its own call's, in order, with a span each.
void concurrent_keeps_each_outcome(const Backend& b) {
  const Plugin p = Plugin::load(lib(b.prefix + "writes_all"), "nvfp4_quant");
  auto runner = b.make(p);
  std::vector<QuantCallSpec> specs;
  for (int i = 0; i < 20; ++i)
    specs.push_back(spec(1 + i % 7, 16 * (1 + i % 5), i % 2 ? ref::ScaleLayout::kLinear : ref::ScaleLayout::kSwizzled128x4));
  const std::optional<QuantConcurrentOutcome> co = runner->call_concurrent(specs, 8);
  ASSERT_TRUE(co.has_value());
  ASSERT_TRUE(co->fault.empty()) << co->fault;
  EXPECT_FALSE(co->lanes.empty());
  ASSERT_EQ(co->calls.size(), specs.size());
  ASSERT_EQ(co->spans.size(), specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    const QuantOutcome& o = co->calls[i];
    ASSERT_EQ(o.rc, 0) << o.message;
    ASSERT_EQ(o.codes.size(), specs[i].codes_bytes);
    ASSERT_EQ(o.scales.size(), specs[i].scale_bytes);
    ASSERT_EQ(o.guard_writes, 0u);
    ASSERT_TRUE(o.inputs_intact);
    EXPECT_LE(co->spans[i].start_us, co->spans[i].end_us);
    const int64_t half = specs[i].width / 2;
    for (int64_t r = 0; r < specs[i].rows; ++r)
      for (int64_t j = 0; j < half; ++j) ASSERT_EQ(o.codes[size_t(r * half + j)], known_code(r, j)) << i;
  }
}

/// A large call (600,000 rows: 3 chunks on the host, 2 on CUDA): codes and scales streamed to the check in row chunks that cover every row once, in order, each
/// byte the plugin's; the overrun plugin's two bytes past codes and scales are guard writes, the input writer's
/// change is counted.
void large_call_streams_every_row(const Backend& b) {
  const QuantLargeSpec large = make_quant_large(nvfp4(), ref::QuantContract::kVllmRef, 600000, 64,
                                                FUSEPROOF_DTYPE_BF16, 7, {1.0f});
  ASSERT_EQ(large.view.codes_bytes, 600000u * 32);
  ASSERT_EQ(large.view.scale_bytes, 600000u * 4);
  const Plugin p = Plugin::load(lib(b.prefix + "writes_all"), "nvfp4_quant");
  auto runner = b.make(p);
  EXPECT_GT(runner->memory_available(), 0u);
  int64_t next = 0;
  uint64_t wrong = 0;
  const QuantChunkCheck check = [&](int64_t r0, int64_t rows, const uint8_t* codes, const uint8_t* scales) {
    EXPECT_EQ(r0, next);
    next = r0 + rows;
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t j = 0; j < 32; ++j) wrong += codes[r * 32 + j] != known_code(r0 + r, j);
      for (int64_t k = 0; k < 4; ++k) wrong += scales[r * 4 + k] != 0x38;
    }
    return true;
  };
  const std::optional<QuantLargeOutcome> o = runner->large_call(large, check);
  ASSERT_TRUE(o.has_value());
  ASSERT_TRUE(o->fault.empty()) << o->fault;
  EXPECT_EQ(o->rc, 0) << o->message;
  EXPECT_EQ(next, 600000);  // several chunks on either runner
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(o->guard_writes, 0u);
  EXPECT_EQ(o->inputs_changed, 0u);
  const Plugin bad = Plugin::load(lib(b.prefix + "overrun"), "nvfp4_quant");
  const std::optional<QuantLargeOutcome> ob = b.make(bad)->large_call(large, [](int64_t, int64_t, auto, auto) { return true; });
  ASSERT_TRUE(ob.has_value());
  EXPECT_EQ(ob->guard_writes, 2u);
}

const Backend kHost{"quant_test_", &make_host_quant_runner};
const Backend kCuda{"quant_test_cuda_", &make_cuda_quant_runner};

TEST(Audit_QuantHostRunner, ReadsBackEveryByteOfACorrectlyWritingSubject) { reads_back_every_byte(kHost); }
TEST(Audit_QuantHostRunner, PaddingLeftUnwrittenComesBackAsPoison) { unwritten_padding_is_poison(kHost); }
TEST(Audit_QuantHostRunner, CountsAByteWrittenPastEitherTensor) { counts_a_byte_past_either_tensor(kHost); }
TEST(Audit_QuantHostRunner, ARejectionKeepsItsMessageAndTouchesNothing) { rejection_keeps_its_message(kHost); }
TEST(Audit_QuantHostRunner, ABatchKeepsEachCallsOutcomeInOrder) { batch_keeps_each_outcome(kHost); }

TEST(Audit_QuantHostRunner, ConcurrentCallsKeepEachOutcome) { concurrent_keeps_each_outcome(kHost); }
TEST(Audit_QuantHostRunner, LargeCallStreamsEveryRowAndCountsGuards) { large_call_streams_every_row(kHost); }
TEST(Audit_QuantHostRunner, HasNoGraphs) {
  const Plugin p = Plugin::load(lib("quant_test_writes_all"), "nvfp4_quant");
  EXPECT_FALSE(make_host_quant_runner(p)->call_graph({{spec(2, 32, ref::ScaleLayout::kLinear)}}).has_value());
}

TEST(Audit_QuantHostRunner, NamesAnInputTheSubjectChanged) {
  const Plugin p = Plugin::load(lib("quant_test_writes_input"), "nvfp4_quant");
  const QuantOutcome o = make_host_quant_runner(p)->call(spec(2, 32, ref::ScaleLayout::kLinear));
  EXPECT_FALSE(o.inputs_intact);
  EXPECT_EQ(o.modified, "x");
}

/// The CUDA runner: the same checks on the CUDA twins of the plugins; skipped without CUDA or a device.
class Audit_QuantCudaRunner : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!cuda_runner_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
    if (!std::ifstream(lib("quant_test_cuda_writes_all"))) GTEST_SKIP() << "this build has no CUDA test plugins";
  }
};

TEST_F(Audit_QuantCudaRunner, ReadsBackEveryByteOfACorrectlyWritingSubject) { reads_back_every_byte(kCuda); }
TEST_F(Audit_QuantCudaRunner, PaddingLeftUnwrittenComesBackAsPoison) { unwritten_padding_is_poison(kCuda); }
TEST_F(Audit_QuantCudaRunner, CountsAByteWrittenPastEitherTensor) { counts_a_byte_past_either_tensor(kCuda); }
TEST_F(Audit_QuantCudaRunner, ARejectionKeepsItsMessageAndTouchesNothing) { rejection_keeps_its_message(kCuda); }
TEST_F(Audit_QuantCudaRunner, ABatchKeepsEachCallsOutcomeInOrder) { batch_keeps_each_outcome(kCuda); }
TEST_F(Audit_QuantCudaRunner, ConcurrentCallsKeepEachOutcome) { concurrent_keeps_each_outcome(kCuda); }
TEST_F(Audit_QuantCudaRunner, LargeCallStreamsEveryRowAndCountsGuards) { large_call_streams_every_row(kCuda); }

/// Graph capture: the warm-up calls and every replay read back the plugin's bytes for their own shapes.
TEST_F(Audit_QuantCudaRunner, GraphReplaysReadBackEveryCall) {
  const Plugin p = Plugin::load(lib("quant_test_cuda_writes_all"), "nvfp4_quant");
  auto runner = make_cuda_quant_runner(p);
  std::vector<std::vector<QuantCallSpec>> sets(3);
  for (auto& set : sets)
    for (int i = 0; i < 4; ++i)
      set.push_back(spec(1 + 3 * i, 16 * (1 + i), i % 2 ? ref::ScaleLayout::kLinear : ref::ScaleLayout::kSwizzled128x4));
  const std::optional<QuantGraphOutcome> g = runner->call_graph(sets);
  ASSERT_TRUE(g.has_value());
  ASSERT_TRUE(g->fault.empty()) << g->fault;
  ASSERT_TRUE(g->capture_error.empty()) << g->capture_error;
  ASSERT_EQ(g->warmup.size(), 4u);
  ASSERT_EQ(g->replays.size(), 3u);
  for (const auto& replay : g->replays) {
    ASSERT_EQ(replay.size(), 4u);
    for (size_t i = 0; i < replay.size(); ++i) {
      ASSERT_EQ(replay[i].rc, 0);
      ASSERT_EQ(replay[i].guard_writes, 0u);
      const int64_t half = sets[0][i].width / 2;
      for (int64_t r = 0; r < sets[0][i].rows; ++r)
        for (int64_t j = 0; j < half; ++j) ASSERT_EQ(replay[i].codes[size_t(r * half + j)], known_code(r, j)) << i;
    }
  }
}

}  // namespace
}  // namespace fuseproof::audit
