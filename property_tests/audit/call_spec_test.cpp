// call_spec_test.cpp: tests audit/call_spec.h and the LargeSpec of audit/kernel_runner.h for ops of 3 inputs with
// group-broadcast inputs: buffer sizes, element offsets, the ABI call's group_rows, the counter-generated views.
#include <gtest/gtest.h>

#include "audit/call_spec.h"
#include "audit/counter_patterns.h"
#include "audit/kernel_runner.h"
#include "reference/op_plan.h"
#include "reference/op_spec.h"

namespace fuseproof::audit {
namespace {

const ref::OpSpec& op(const char* name) {
  const ref::OpSpec* o = ref::find_op(name);
  if (!o) throw std::runtime_error(std::string("no op ") + name);
  return *o;
}

TEST(Audit_CallSpec_both, GatedResidualGroupBuffers) {
  const ref::OpSpec& gr = op("gated_residual");
  CallSpec s = make_call(gr, 6, 8, FUSEPROOF_DTYPE_BF16, 3);
  ASSERT_EQ(s.buffer_names, (std::vector<std::string>{"x", "gate", "y"}));
  EXPECT_EQ(s.group_rows, 3);
  EXPECT_EQ(s.buffers[0].size(), 48u);  // x [6, 8]
  EXPECT_EQ(s.buffers[1].size(), 16u);  // gate [6 / 3, 8]
  EXPECT_EQ(s.buffers[2].size(), 48u);  // y [6, 8]
  EXPECT_EQ(s.out_elems, 48u);
  // Row r of gate is row r / 3 of its buffer: rows 0..2 share row 0, rows 3..5 row 1.
  for (int64_t c = 0; c < 8; ++c) {
    s.buffers[1][size_t(c)] = uint16_t(0x100 + c);
    s.buffers[1][size_t(8 + c)] = uint16_t(0x200 + c);
  }
  for (int64_t r = 0; r < 6; ++r)
    for (int64_t c = 0; c < 8; ++c) EXPECT_EQ(s.at(1, r, c), uint16_t((r < 3 ? 0x100 : 0x200) + c)) << r << "," << c;
  for (int64_t r = 0; r < 6; ++r)
    EXPECT_EQ(gr.input_offset(1, r, 5, 8, 3), (r / 3) * 8 + 5);
  // Negative control: group_rows 1 makes gate per element (a buffer of every row, row r its own).
  const CallSpec e = make_call(gr, 6, 8, FUSEPROOF_DTYPE_BF16, 1);
  EXPECT_EQ(e.buffers[1].size(), 48u);
  EXPECT_EQ(e.row_of(e.inputs[1], 5), 5);
  EXPECT_EQ(s.row_of(s.inputs[1], 5), 1);
}

TEST(Audit_CallSpec_both, AbiCallCarriesGroupRows) {
  const ref::OpSpec& mod = op("modulate");
  const CallSpec s = make_call(mod, 8, 16, FUSEPROOF_DTYPE_FP16, 4);
  EXPECT_EQ(s.buffers[1].size(), 32u);  // scale [2, 16]
  EXPECT_EQ(s.buffers[2].size(), 32u);  // shift [2, 16]
  std::vector<std::vector<uint16_t>> data = s.buffers;
  std::vector<uint8_t*> ptrs;
  for (auto& b : data) ptrs.push_back(reinterpret_cast<uint8_t*>(b.data()));
  std::vector<uint16_t> out(s.out_elems);
  const fuseproof_call_t c = abi_call(s, ptrs, reinterpret_cast<uint8_t*>(out.data()), nullptr);
  EXPECT_EQ(c.n_inputs, 3);
  EXPECT_EQ(c.group_rows, 4);
  EXPECT_EQ(c.shape[0], 8);
  EXPECT_EQ(c.shape[1], 16);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(c.inputs[i].data, ptrs[size_t(i)]) << i;
    EXPECT_EQ(c.inputs[i].stride[0], 16) << i;
    EXPECT_EQ(c.inputs[i].stride[1], 1) << i;
  }
  EXPECT_NE(describe_call(s).find("group_rows=4"), std::string::npos) << describe_call(s);
}

TEST(Audit_CallSpec_both, TwoInputOpsIgnoreGroupRows) {
  const ref::OpSpec& b = op("bias_gelu_tanh");
  const CallSpec s = make_call(b, 6, 8, FUSEPROOF_DTYPE_BF16, 3);
  EXPECT_EQ(s.group_rows, 1);
  EXPECT_EQ(s.buffers[0].size(), 48u);
  EXPECT_EQ(s.buffers[1].size(), 8u);
  EXPECT_EQ(describe_call(s).find("group_rows"), std::string::npos);
}

TEST(Audit_CallSpec_both, LargeSpecGroupBuffers) {
  const ref::OpSpec& gr = op("gated_residual");
  const LargeSpec ls{&gr, 10, 4, FUSEPROOF_DTYPE_BF16, 77, 5};
  EXPECT_EQ(ls.buffer_elems(0), 40u);
  EXPECT_EQ(ls.buffer_elems(1), 8u);  // 2 groups of 5 rows
  EXPECT_EQ(ls.buffer_elems(2), 40u);
  uint16_t in[ref::kMaxOpInputs];
  ls.inputs(7, 3, in);
  EXPECT_EQ(in[0], counter_pattern(true, ls.buffer_seed(0), 7 * 4 + 3));
  EXPECT_EQ(in[1], counter_pattern(true, ls.buffer_seed(1), 1 * 4 + 3));
  EXPECT_EQ(in[2], counter_pattern(true, ls.buffer_seed(2), 7 * 4 + 3));
  const CallSpec v = ls.view();
  EXPECT_EQ(v.rows, 10);
  EXPECT_EQ(v.group_rows, 5);
  EXPECT_TRUE(v.inputs[1].grouped);
}

// The counter stream is generated on the device and regenerated on the host: pinned here by an FNV-1a hash of its
// first 2^20 patterns per dtype (computed with the generator as first written), so a change to either side's
// arithmetic fails on the CPU before a GPU run disagrees with itself.
TEST(CounterPatterns, StreamIsPinned) {
  for (const bool bf16 : {false, true}) {
    uint64_t h = 1469598103934665603ull;
    for (uint64_t i = 0; i < (uint64_t(1) << 20); ++i) {
      h ^= counter_pattern(bf16, 0x5EEDull, i);
      h *= 1099511628211ull;
    }
    EXPECT_EQ(h, bf16 ? 0x062c0106295c8c9cull : 0xcd2ab463a4bfc19cull) << (bf16 ? "bf16" : "fp16");
  }
}

// LargeSpec::input_run (the shapes class's runs) equals input() element by element, for every layout: elementwise,
// row-broadcast, group-broadcast and packed.
TEST(LargeSpecRuns, InputRunEqualsInput) {
  for (const char* name : {"bias_gelu_tanh", "silu_and_mul", "gated_residual", "modulate"}) {
    for (const int32_t dtype : {FUSEPROOF_DTYPE_BF16, FUSEPROOF_DTYPE_FP16}) {
      const ref::OpSpec& o = op(name);
      LargeSpec ls{&o, 6, 24, dtype, 0xC0FFEEull, o.has_groups() ? 3 : 1};
      for (int i = 0; i < int(o.inputs.size()); ++i)
        for (int64_t r = 0; r < ls.rows; ++r) {
          uint16_t run[24];
          ls.input_run(i, r, 5, 19, run);
          for (int64_t j = 0; j < 19; ++j)
            ASSERT_EQ(run[j], ls.input(i, r, 5 + j)) << name << " input " << i << " r=" << r << " c=" << 5 + j;
        }
    }
  }
}

// The shapes classes' "not run" entry: none when the call fits or the free memory is unknown, else one line.
TEST(MemoryShortfall, OnlyWhenTheCallDoesNotFit) {
  const uint64_t gib = uint64_t(1) << 30;
  EXPECT_EQ(memory_shortfall("155345x13824", "above 2^31", 3 * gib, 4 * gib), "");
  EXPECT_EQ(memory_shortfall("155345x13824", "above 2^31", 3 * gib, 0), "");
  EXPECT_EQ(memory_shortfall("155345x13824", "above 2^31", 5 * gib + gib / 2, 4 * gib),
            "155345x13824 (above 2^31: needs 5.5 GiB, 4.0 GiB free)");
}

}  // namespace
}  // namespace fuseproof::audit
