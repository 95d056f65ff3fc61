// dit_ops_launcher_test.cpp: every rejection rule of the family launcher for gated_residual and modulate (3 inputs,
// group-broadcast, ABI version 3) on host buffers: the exact one-line message, and no byte of any buffer written.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <string>

#include "property_tests/kernels/bias_gelu_tanh_testbed.h"
#include "property_tests/kernels/dit_ops_testbed.h"

namespace fuseproof::test {
namespace {

using kernel::Contract;
using kernel::FamilyOp;

constexpr int64_t kRows = 8, kW = 8, kGroupRows = 4;

/// Poisoned out and inputs with room for shifted views, and a valid call of `op` over them (2 groups of 4 rows).
struct Bench {
  FamilyOp op;
  GuardedBuffer out{2 * kRows * kW}, in0{2 * kRows * kW}, in1{2 * kRows * kW}, in2{2 * kRows * kW};
  fuseproof_call_t call;
  explicit Bench(FamilyOp o) : op(o) {
    for (GuardedBuffer* b : {&out, &in0, &in1, &in2}) b->poison();
    call = dit_call(FUSEPROOF_DTYPE_BF16, kRows, kW, kGroupRows, out.data(), in0.data(), in1.data(), in2.data());
  }
  std::string name() const { return op == FamilyOp::kGatedResidual ? "gated_residual" : "modulate"; }
  /// The input names in declared order.
  const char* input(int i) const {
    static const char* gated[] = {"x", "gate", "y"};
    static const char* modulate[] = {"x", "scale", "shift"};
    return (op == FamilyOp::kGatedResidual ? gated : modulate)[i];
  }
  bool grouped(int i) const { return i == 1 || (i == 2 && op == FamilyOp::kModulate); }
};

/// Rejected with exactly "<op>: <expected>", one line, no final period, and nothing written anywhere.
void expect_rejected(const Bench& b, const std::string& expected, Contract contract = Contract::kEager) {
  const FamilyLaunch l = dit_launch(b.op, contract);
  const std::string can = family_can_implement(l, b.call), why = dit_run(l, b.call);
  EXPECT_EQ(why, b.name() + ": " + expected);
  EXPECT_EQ(can, why);
  EXPECT_EQ(why.find('\n'), std::string::npos);
  ASSERT_FALSE(why.empty());
  EXPECT_NE(why.back(), '.');
  EXPECT_EQ(b.out.check_untouched(), "") << "out written by a rejected call: " << expected;
  for (const GuardedBuffer* in : {&b.in0, &b.in1, &b.in2})
    EXPECT_EQ(in->check_untouched(), "") << "an input written by a rejected call: " << expected;
}

class DitOpsLauncher : public ::testing::TestWithParam<FamilyOp> {};

TEST_P(DitOpsLauncher, AcceptsValidCalls) {
  for (int64_t g : {int64_t(1), int64_t(2), kGroupRows, kRows})
    for (Contract contract : {Contract::kEager, Contract::kFma}) {
      Bench b(GetParam());
      for (GuardedBuffer* in : {&b.in0, &b.in1, &b.in2}) fill_half_bits(in->data(), in->size(), ref::Dtype::kBf16, 7);
      b.call.group_rows = g;
      const FamilyLaunch l = dit_launch(b.op, contract);
      ASSERT_EQ(family_can_implement(l, b.call), "") << "group_rows " << g;
      EXPECT_EQ(b.out.check_untouched(), "") << "can_implement wrote out";
      ASSERT_EQ(dit_run(l, b.call), "");
      EXPECT_NE(b.out.check_untouched(), "") << "an accepted call left out untouched";
      EXPECT_EQ(b.out.check_guards(), "");
    }
}

TEST_P(DitOpsLauncher, RejectsTheCallOfAnotherAbiVersion) {
  Bench b(GetParam());
  b.call.struct_size = FUSEPROOF_CALL_V2_SIZE;  // a version-2 call has no group_rows
  expect_rejected(b, "call struct size must be " + std::to_string(sizeof(fuseproof_call_t)) + ", got " +
                         std::to_string(FUSEPROOF_CALL_V2_SIZE));
}

TEST_P(DitOpsLauncher, RejectsEveryOtherDtype) {
  for (int32_t d : {-1, int32_t(FUSEPROOF_DTYPE_FLOAT32), int32_t(FUSEPROOF_DTYPE_INT16), 77}) {
    Bench b(GetParam());
    b.call.dtype = d;
    expect_rejected(b, "dtype code must be 0 (bf16) or 1 (fp16), got " + std::to_string(d));
  }
}

TEST_P(DitOpsLauncher, RejectsAnotherInputCount) {
  for (int32_t n : {0, 1, 2, 4}) {
    Bench b(GetParam());
    b.call.n_inputs = n;
    expect_rejected(b, "takes 3 inputs, got " + std::to_string(n));
  }
}

TEST_P(DitOpsLauncher, RejectsEmptyAndOffVectorShapes) {
  {
    Bench b(GetParam());
    b.call.shape[0] = 0;
    expect_rejected(b, "rows must be >= 1, got 0");
  }
  {
    Bench b(GetParam());
    b.call.shape[0] = -3;
    expect_rejected(b, "rows must be >= 1, got -3");
  }
  {
    Bench b(GetParam());
    b.call.shape[1] = 0;
    expect_rejected(b, "width must be >= 1, got 0");
  }
  for (int64_t w : {1, 4, 12, 13, 4095}) {
    Bench b(GetParam());
    b.call.shape[1] = w;
    expect_rejected(b, "width must be a multiple of 8, got " + std::to_string(w));
  }
}

TEST_P(DitOpsLauncher, RejectsGroupRowsThatDoNotDivideRows) {
  for (int64_t g : {0, -1, -4}) {
    Bench b(GetParam());
    b.call.group_rows = g;
    expect_rejected(b, "group_rows must be >= 1, got " + std::to_string(g));
  }
  {
    Bench b(GetParam());  // the message the brief names; rejected before any buffer is read
    b.call.shape[0] = 4100;
    b.call.group_rows = 4096;
    expect_rejected(b, "rows must be a multiple of group_rows (4096), got 4100");
  }
  {
    Bench b(GetParam());
    b.call.group_rows = 3;
    expect_rejected(b, "rows must be a multiple of group_rows (3), got 8");
  }
  {
    Bench b(GetParam());  // more rows per group than the call has
    b.call.group_rows = 16;
    expect_rejected(b, "rows must be a multiple of group_rows (16), got 8");
  }
}

TEST_P(DitOpsLauncher, RejectsSizesThatOverflowInt64Bytes) {
  Bench b(GetParam());
  const int64_t rows = INT64_MAX / 8;  // rows * 8 elements * 2 bytes > INT64_MAX
  b.call.shape[0] = rows;
  b.call.group_rows = 1;
  expect_rejected(b, "rows * width overflows int64 bytes, got " + std::to_string(rows) + " x 8");
}

TEST_P(DitOpsLauncher, RejectsNullPointers) {
  {
    Bench b(GetParam());
    b.call.out = nullptr;
    expect_rejected(b, "out must not be null");
  }
  for (int i = 0; i < 3; ++i) {
    Bench b(GetParam());
    b.call.inputs[i].data = nullptr;
    expect_rejected(b, std::string(b.input(i)) + " must not be null");
  }
}

TEST_P(DitOpsLauncher, RejectsPointersOffThe16ByteVector) {
  for (int64_t off : {1, 2, 7}) {
    {
      Bench b(GetParam());
      b.call.out = b.out.data() + off;
      expect_rejected(b, "out must be aligned to 16 bytes");
    }
    for (int i = 0; i < 3; ++i) {
      Bench b(GetParam());
      b.call.inputs[i].data = static_cast<const uint16_t*>(b.call.inputs[i].data) + off;
      expect_rejected(b, std::string(b.input(i)) + " must be aligned to 16 bytes");
    }
  }
}

TEST_P(DitOpsLauncher, RejectsEveryOtherStride) {
  const int64_t bad[][2] = {{0, 1}, {0, 0}, {kW + 8, 1}, {kW, 2}, {1, kW}, {-kW, 1}};
  for (int i = 0; i < 3; ++i)
    for (const auto& s : bad) {
      Bench b(GetParam());
      b.call.inputs[i].stride[0] = s[0];
      b.call.inputs[i].stride[1] = s[1];
      const std::string got = "got {" + std::to_string(s[0]) + ", " + std::to_string(s[1]) + "}";
      expect_rejected(b, std::string(b.input(i)) +
                             (b.grouped(i) ? " must be [rows / group_rows, width], one row per group of group_rows rows"
                                           : " must be contiguous [rows, width]") +
                             " (stride {width, 1} = {8, 1}), " + got);
    }
}

TEST_P(DitOpsLauncher, RejectsOutOverlappingAnInput) {
  for (int i = 0; i < 3; ++i) {
    {
      Bench b(GetParam());  // in place: out is the input itself
      b.call.out = const_cast<void*>(b.call.inputs[i].data);
      expect_rejected(b, std::string("out must not overlap ") + b.input(i));
    }
    {
      Bench b(GetParam());  // out's first row inside the input's last: a group-broadcast input has 2 rows of 8 here
      const int64_t input_rows = b.grouped(i) ? kRows / kGroupRows : kRows;
      b.call.out = const_cast<uint16_t*>(static_cast<const uint16_t*>(b.call.inputs[i].data)) + (input_rows - 1) * kW;
      expect_rejected(b, std::string("out must not overlap ") + b.input(i));
    }
    {
      Bench b(GetParam());  // the input starts in out's last row
      b.call.inputs[i].data = static_cast<uint16_t*>(b.call.out) + (kRows - 1) * kW;
      expect_rejected(b, std::string("out must not overlap ") + b.input(i));
    }
  }
  // A group-broadcast input is rows / group_rows rows: out right after its last row does not overlap it.
  Bench b(GetParam());
  b.call.out = b.in1.data() + (kRows / kGroupRows) * kW;
  EXPECT_EQ(family_can_implement(dit_launch(b.op, Contract::kEager), b.call), "");
}

TEST_P(DitOpsLauncher, RejectsTheFp32Contract) {
  Bench b(GetParam());
  expect_rejected(b, "has no fp32 contract", Contract::kFp32);
}

INSTANTIATE_TEST_SUITE_P(Launcher, DitOpsLauncher, ::testing::Values(FamilyOp::kGatedResidual, FamilyOp::kModulate),
                         [](const ::testing::TestParamInfo<FamilyOp>& p) {
                           return std::string(p.param == FamilyOp::kGatedResidual ? "GatedResidual" : "Modulate");
                         });

/// The 2-input ops keep their rules: group_rows is not theirs to read, and they have no fma contract.
TEST(Launcher_SiluAndMul, IgnoresGroupRowsAndRefusesFma) {
  GuardedBuffer x(2 * kRows * kW), out(kRows * kW);
  x.poison();
  out.poison();
  fuseproof_call_t c{};
  c.struct_size = sizeof c;
  c.dtype = FUSEPROOF_DTYPE_FP16;
  c.shape[0] = kRows;
  c.shape[1] = kW;
  c.out = out.data();
  c.n_inputs = 2;
  c.inputs[0] = {x.data(), {2 * kW, 1}};
  c.inputs[1] = {x.data() + kW, {2 * kW, 1}};
  c.group_rows = 0;  // invalid for a grouped op, ignored here
  EXPECT_EQ(family_can_implement(dit_launch(FamilyOp::kSiluAndMul, Contract::kEager), c), "");
  EXPECT_EQ(family_can_implement(dit_launch(FamilyOp::kSiluAndMul, Contract::kFp32), c), "");
  EXPECT_EQ(family_launch(dit_launch(FamilyOp::kSiluAndMul, Contract::kFma), c), "silu_and_mul: has no fma contract");
  EXPECT_EQ(out.check_untouched(), "");
  c.n_inputs = 3;
  EXPECT_EQ(family_launch(dit_launch(FamilyOp::kSiluAndMul, Contract::kEager), c), "silu_and_mul: takes 2 inputs, got 3");
}

}  // namespace
}  // namespace fuseproof::test
