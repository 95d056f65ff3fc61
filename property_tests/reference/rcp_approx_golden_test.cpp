// rcp_approx_golden_test.cpp: reference/rcp_approx_model.h with the table of the golden MUFU capture (golden/<arch>/
// mufu_tables.tar.xz, the device's rcp.approx.ftz.f32 on [1, 2)): the 2-bit codes can hold it, and the model equals
// the MUFU model (reference/mufu_model.h) wherever that one claims anything: [1, 2^27).
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "property_tests/support/golden_paths.h"
#include "reference/dtype.h"
#include "reference/rcp_approx_model.h"

namespace fuseproof::ref {
namespace {

std::vector<uint32_t> golden_results() {
  std::vector<uint32_t> r(kRcpApproxMantissas);
  for (uint32_t k = 0; k < kRcpApproxMantissas; ++k)
    r[k] = f32_bits(test::arch_mufu().rcp_approx_ftz(f32_from_bits(0x3F800000u | k)));
  return r;
}

TEST(Reference_RcpApproxFtz_f32, GoldenCaptureFitsTheCodesAndEqualsTheMufuModel) {
  const std::vector<uint32_t> results = golden_results();
  std::string why;
  const std::optional<RcpApproxTable> t = RcpApproxTable::from_results(results, &why);
  ASSERT_TRUE(t) << test::golden().label() << ": " << why;
  uint64_t off = 0, n = 0;
  for (uint32_t k = 0; k < kRcpApproxMantissas; ++k) off += t->code(k) != 0;
  EXPECT_GT(off, 0u) << "the captured unit is not correctly rounded: a table of zeros would be a wrong capture";
  // The MUFU model's range is [1, 2^27), where the capture checked the scaling identity on the device: its first two
  // binades, one inside and its last, every pattern.
  for (uint32_t e : {127u, 128u, 140u, 153u})
    for (uint32_t k = 0; k < kRcpApproxMantissas; ++k) {
      const uint32_t x = e << 23 | k;
      const uint32_t want = f32_bits(test::arch_mufu().rcp_approx_ftz(f32_from_bits(x)));
      ASSERT_EQ(rcp_approx_ftz_bits(x, *t), want) << std::hex << "x=0x" << x;
      ++n;
    }
  EXPECT_EQ(n, uint64_t(4) << 23);
  // Negative control: a result moved two patterns is refused, one pattern is taken and changes that input alone.
  std::vector<uint32_t> moved = results;
  moved[4242] = rcp_correctly_rounded_mantissa_bits(4242) + 2;
  EXPECT_FALSE(RcpApproxTable::from_results(moved, &why));
  EXPECT_NE(why.find("+2 patterns"), std::string::npos) << why;
  const uint32_t cr = rcp_correctly_rounded_mantissa_bits(4242);
  moved[4242] = results[4242] == cr ? cr + 1 : cr;
  const std::optional<RcpApproxTable> m = RcpApproxTable::from_results(moved, &why);
  ASSERT_TRUE(m) << why;
  EXPECT_NE(rcp_approx_ftz_bits(0x3F800000u | 4242, *m), rcp_approx_ftz_bits(0x3F800000u | 4242, *t));
  EXPECT_FALSE(RcpApproxTable::from_results(std::vector<uint32_t>(5), &why));
}

}  // namespace
}  // namespace fuseproof::ref
