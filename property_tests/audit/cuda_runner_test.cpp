// cuda_runner_test.cpp: the elementwise CUDA runner's own checks (audit/cuda/cuda_runner.cu) on plugins that copy x
// to out (cuda_runner_test_plugins.cu): every element read back, a changed input named, a write past out counted;
// each for a call below 1 MiB a buffer (the images copied both ways) and one above (out poisoned and the inputs
// compared on the device); and the shapes class's comparison on the device, counting the elements that differ from
// the table. Skipped without CUDA or a device.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "audit/call_spec.h"
#include "audit/kernel_runner.h"
#include "audit/plugin_loader.h"
#include "kernels/fuseproof_kernel_abi.h"
#include "reference/op_spec.h"

namespace fuseproof::audit {
namespace {

std::string lib(const std::string& name) { return std::string(FUSEPROOF_CUDA_TEST_PLUGIN_DIR) + "/lib" + name + ".so"; }

class Audit_CudaRunner : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!cuda_runner_available(&why)) GTEST_SKIP() << "no CUDA device: " << why;
    if (!std::ifstream(lib("cuda_runner_test_copy"))) GTEST_SKIP() << "this build has no CUDA test plugins";
  }
};

/// A bias_gelu_tanh call of rows x width, x[i] = i's low 15 bits (no NaN), bias zero.
CallSpec known_call(int64_t rows, int64_t width) {
  CallSpec s = make_call(*ref::find_op("bias_gelu_tanh"), rows, width, FUSEPROOF_DTYPE_BF16);
  std::vector<uint16_t>& x = s.buffers[size_t(s.inputs[0].buffer)];
  for (size_t i = 0; i < x.size(); ++i) x[i] = uint16_t(i & 0x7FFF);
  return s;
}

/// 4 x 64 (512 bytes a buffer) and 1,024 x 1,024 (2 MiB): both sides of the runner's 1 MiB threshold.
const std::pair<int64_t, int64_t> kShapes[] = {{4, 64}, {1024, 1024}};

TEST_F(Audit_CudaRunner, ReadsBackEveryElementAndFindsNothingWrong) {
  const Plugin p = Plugin::load(lib("cuda_runner_test_copy"), "bias_gelu_tanh");
  auto runner = make_cuda_runner(p);
  for (const auto& [rows, width] : kShapes) {
    const CallSpec s = known_call(rows, width);
    const CallOutcome o = runner->call(s);
    ASSERT_TRUE(o.fault.empty()) << o.fault;
    EXPECT_EQ(o.rc, 0) << o.message;
    EXPECT_EQ(o.guard_writes, 0u) << rows << "x" << width;
    EXPECT_TRUE(o.inputs_intact) << rows << "x" << width << ": " << o.modified;
    EXPECT_EQ(o.out, s.buffers[size_t(s.inputs[0].buffer)]) << rows << "x" << width;
  }
}

TEST_F(Audit_CudaRunner, NamesAnInputTheSubjectChanged) {
  const Plugin p = Plugin::load(lib("cuda_runner_test_writes_input"), "bias_gelu_tanh");
  auto runner = make_cuda_runner(p);
  for (const auto& [rows, width] : kShapes) {
    const CallOutcome o = runner->call(known_call(rows, width));
    ASSERT_TRUE(o.fault.empty()) << o.fault;
    EXPECT_FALSE(o.inputs_intact) << rows << "x" << width;
    EXPECT_EQ(o.modified, "x") << rows << "x" << width;
  }
}

TEST_F(Audit_CudaRunner, CountsAWritePastOut) {
  const Plugin p = Plugin::load(lib("cuda_runner_test_overrun"), "bias_gelu_tanh");
  auto runner = make_cuda_runner(p);
  for (const auto& [rows, width] : kShapes) {
    const CallOutcome o = runner->call(known_call(rows, width));
    ASSERT_TRUE(o.fault.empty()) << o.fault;
    EXPECT_EQ(o.guard_writes, 2u) << rows << "x" << width;  // one element past out: its two bytes
    EXPECT_TRUE(o.inputs_intact) << rows << "x" << width;
  }
}

/// The device comparison: the copy plugin's out is x, so a table whose value at (x, bias) is x everywhere matches
/// every element, and one whose value differs at x = 5 counts the elements whose x is 5.
TEST_F(Audit_CudaRunner, ComparesOnTheDeviceAndCountsEveryDifference) {
  const Plugin p = Plugin::load(lib("cuda_runner_test_copy"), "bias_gelu_tanh");
  auto runner = make_cuda_runner(p);
  LargeSpec s{ref::find_op("bias_gelu_tanh"), 3000, 4096, FUSEPROOF_DTYPE_BF16, 11, 1};
  uint64_t fives = 0;  // elements whose x is the pattern 5, regenerated as the runner's device fill made them
  for (int64_t r = 0; r < s.rows; ++r)
    for (int64_t c = 0; c < s.width; ++c) fives += s.input(0, r, c) == 5;
  ASSERT_GT(fives, 0u);
  const RowFn identity = [](uint16_t, uint16_t* out) {
    for (uint32_t x = 0; x < 65536; ++x) out[x] = uint16_t(x);
  };
  const RowFn off_at_five = [](uint16_t, uint16_t* out) {
    for (uint32_t x = 0; x < 65536; ++x) out[x] = uint16_t(x == 5 ? 6 : x);
  };
  DeviceComparison same, off;
  const std::optional<LargeOutcome> a = runner->large_call_compared(s, "identity", identity, &same);
  ASSERT_TRUE(a.has_value()) << "no room for the table";
  ASSERT_TRUE(a->fault.empty()) << a->fault;
  EXPECT_EQ(a->rc, 0) << a->message;
  EXPECT_EQ(same.compared, uint64_t(s.rows * s.width));
  EXPECT_EQ(same.mismatches, 0u);
  EXPECT_EQ(same.seen.size(), 65536u);
  const std::optional<LargeOutcome> b = runner->large_call_compared(s, "off at 5", off_at_five, &off);
  ASSERT_TRUE(b.has_value());
  ASSERT_TRUE(b->fault.empty()) << b->fault;
  EXPECT_EQ(off.mismatches, fives);
}

/// The batched calls (calls_compared) on the copy plugin (out = x): 40 widths of weighted patterns and 3 grid blocks,
/// one batch. A table that differs wherever x is odd must count exactly the odd x the host regenerates, element for
/// element: the device's inputs are the host's. The plugins that change an input and write past out are seen in
/// every call of a batch.
TEST_F(Audit_CudaRunner, BatchedCallsGenerateTheHostsInputsAndCountEveryDifference) {
  const ref::OpSpec* op = ref::find_op("bias_gelu_tanh");
  std::vector<LargeSpec> specs;
  for (int64_t k = 0; k < 40; ++k) {
    LargeSpec s{op, 3, (k + 1) * 8, FUSEPROOF_DTYPE_BF16, 1000 + uint64_t(k), 1};
    s.patterns = Patterns::kWeighted;
    specs.push_back(s);
  }
  for (uint32_t b = 0; b < 3; ++b) {
    LargeSpec s{op, 64, 256, FUSEPROOF_DTYPE_BF16, 7, 1};
    s.patterns = Patterns::kGrid;
    s.grid_col0 = 1024 * b;
    specs.push_back(s);
  }
  std::vector<uint64_t> odd(specs.size(), 0);
  for (size_t i = 0; i < specs.size(); ++i)
    for (int64_t r = 0; r < specs[i].rows; ++r)
      for (int64_t c = 0; c < specs[i].width; ++c) odd[i] += specs[i].input(0, r, c) & 1u;
  const RowFn identity = [](uint16_t, uint16_t* out) {
    for (uint32_t x = 0; x < 65536; ++x) out[x] = uint16_t(x);
  };
  const RowFn off_when_odd = [](uint16_t, uint16_t* out) {
    for (uint32_t x = 0; x < 65536; ++x) out[x] = uint16_t(x & 1u ? x ^ 2u : x);
  };
  Sampling every;
  every.index_every = 1;
  const Plugin p = Plugin::load(lib("cuda_runner_test_copy"), "bias_gelu_tanh");
  auto runner = make_cuda_runner(p);
  std::vector<DeviceComparison> same, off;
  const auto a = runner->calls_compared(specs, ExpectedTable{"identity", identity, {}}, every, &same);
  ASSERT_TRUE(a.has_value()) << "no room for the table";
  ASSERT_TRUE((*a)[0].fault.empty()) << (*a)[0].fault;
  const auto b = runner->calls_compared(specs, ExpectedTable{"odd", off_when_odd, {}}, every, &off);
  ASSERT_TRUE(b.has_value());
  ASSERT_TRUE((*b)[0].fault.empty()) << (*b)[0].fault;
  for (size_t i = 0; i < specs.size(); ++i) {
    const uint64_t elems = uint64_t(specs[i].rows * specs[i].width);
    EXPECT_EQ((*a)[i].rc, 0) << i << ": " << (*a)[i].message;
    EXPECT_EQ((*a)[i].guard_writes, 0u) << i;
    EXPECT_EQ((*a)[i].inputs_changed, 0u) << i;
    EXPECT_EQ(same[i].compared, elems) << i;
    EXPECT_EQ(same[i].mismatches, 0u) << i;
    EXPECT_EQ(off[i].mismatches, odd[i]) << i;
    uint64_t flagged = 0;
    for (uint8_t f : same[i].seen) flagged += f;
    EXPECT_GT(flagged, 0u) << i;
  }
  EXPECT_EQ(off.back().mismatches, 32u * 256u);  // the grid's odd rows
  const Plugin w = Plugin::load(lib("cuda_runner_test_writes_input"), "bias_gelu_tanh");
  const auto changed = make_cuda_runner(w)->calls_compared(specs, ExpectedTable{"identity", identity, {}}, every, &same);
  ASSERT_TRUE(changed.has_value());
  ASSERT_TRUE((*changed)[0].fault.empty()) << (*changed)[0].fault;
  for (size_t i = 0; i < specs.size(); ++i) EXPECT_GT((*changed)[i].inputs_changed, 0u) << i;
  const Plugin o = Plugin::load(lib("cuda_runner_test_overrun"), "bias_gelu_tanh");
  const auto overrun = make_cuda_runner(o)->calls_compared(specs, ExpectedTable{"identity", identity, {}}, every, &same);
  ASSERT_TRUE(overrun.has_value());
  ASSERT_TRUE((*overrun)[0].fault.empty()) << (*overrun)[0].fault;
  for (size_t i = 0; i < specs.size(); ++i) EXPECT_EQ((*overrun)[i].guard_writes, 2u) << i;
}

}  // namespace
}  // namespace fuseproof::audit
