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

}  // namespace
}  // namespace fuseproof::audit
