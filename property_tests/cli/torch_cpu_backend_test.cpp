// torch_cpu_backend_test.cpp: tests cli/torch_cpu_backend.cpp: the op spec's nodes run as eager libtorch give what the
// eager expressions `x + gate * y` and `x * (1 + scale) + shift` give, bit for bit; what it cannot state it refuses.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <stdexcept>
#include <vector>

#include "cli/torch_cpu_backend.h"

namespace fuseproof::cli {
namespace {

void cases_equal_eager_expressions(ref::Dtype d) {
  const auto dt = d == ref::Dtype::kBf16 ? torch::kBFloat16 : torch::kHalf;
  const size_t n = 1 << 16;
  std::vector<uint16_t> in(3 * n), got(n);
  uint64_t state = 23;
  for (auto& v : in) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = uint16_t(state >> 40);
  }
  const auto all = torch::from_blob(in.data(), {int64_t(n), 3}, torch::kInt16).view(dt);
  const auto x = all.select(1, 0).contiguous(), u = all.select(1, 1).contiguous(), w = all.select(1, 2).contiguous();
  for (const char* name : {"gated_residual", "modulate"}) {
    torch_cpu_cases(*ref::find_op(name), ref::Contract::kEager, d, in.data(), n, got.data());
    const auto want = (std::string(name) == "gated_residual" ? x + u * w : x * (1 + u) + w).contiguous();
    const auto* wb = reinterpret_cast<const uint16_t*>(want.data_ptr());
    size_t bad = 0;
    for (size_t k = 0; k < n; ++k) bad += got[k] != wb[k];
    EXPECT_EQ(bad, 0u) << name << " " << ref::dtype_name(d);
    // The fma contract has no eager libtorch statement: refused, one line.
    try {
      torch_cpu_cases(*ref::find_op(name), ref::Contract::kFma, d, in.data(), n, got.data());
      ADD_FAILURE() << name << ": the fma contract ran";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), std::string("torch-cpu backend: eager libtorch has no fused multiply-add with "
                                                   "one rounding (contract fma of ") + name + ")");
    }
  }
  std::vector<uint16_t> row(65536);
  EXPECT_THROW(torch_cpu_rows(ref::find_op("modulate"), ref::Contract::kEager, d, 0, 1, row.data()),
               std::invalid_argument);
}

TEST(Cli_TorchCpuBackend_bf16, CasesEqualEagerExpressions) { cases_equal_eager_expressions(ref::Dtype::kBf16); }
TEST(Cli_TorchCpuBackend_fp16, CasesEqualEagerExpressions) { cases_equal_eager_expressions(ref::Dtype::kFp16); }

}  // namespace
}  // namespace fuseproof::cli
