// narrow_formats_exhaustive_test.cpp: every binary32 pattern through reference/f32_to_e4m3.h (both conventions),
// reference/e2m1.h (the cvt and the vLLM table) and reference/ue8m0.h's encode, against independent models.
#include <atomic>
#include <cmath>
#include <thread>

#include <gtest/gtest.h>

#include "property_tests/reference/narrow_format_oracle.h"
#include "reference/dtype.h"
#include "reference/e2m1.h"
#include "reference/f32_to_e4m3.h"
#include "reference/ue8m0.h"
#include "common/parallel_for.h"

namespace fuseproof::ref {
namespace {

TEST(Reference_F32ToE4m3_both, AllBinary32PatternsVsModel) {
  for (E4m3Overflow o : kAllE4m3Overflows) {
    const test::BoundaryModel model(test::e4m3_format(o == E4m3Overflow::kSaturate));
    test::CodeLog log(std::string("f32_to_e4m3 ") + e4m3_overflow_name(o));
    const uint64_t cases = test::sweep_against_model(model, [o](float f) { return f32_to_e4m3(f, o); }, log);
    EXPECT_EQ(cases, uint64_t(1) << 32);
    EXPECT_EQ(log.count(), 0u) << log.report(cases);
    if (log.count() == 0) std::printf("%s\n", log.report(cases).c_str());
  }
}

TEST(Reference_F32ToE2m1_e2m1, AllBinary32PatternsVsModel) {
  const test::BoundaryModel model(test::e2m1_format());
  test::CodeLog log("f32_to_e2m1");
  const uint64_t cases = test::sweep_against_model(model, [](float f) { return f32_to_e2m1(f); }, log);
  EXPECT_EQ(log.count(), 0u) << log.report(cases);
  if (log.count() == 0) std::printf("%s\n", log.report(cases).c_str());
}

/// Runs body(u) for every u in [0, end) on all hardware threads; body returns the number of mismatches it found.
template <typename Body>
uint64_t parallel_count(uint64_t end, const Body& body) {
  std::atomic<uint64_t> next{0}, bad{0};
  const uint64_t chunk = uint64_t(1) << 22;
  auto work = [&] {
    for (uint64_t lo = next.fetch_add(chunk); lo < end; lo = next.fetch_add(chunk)) bad += body(lo, std::min(end, lo + chunk));
  };
  run_workers(worker_count(), [&](unsigned) { work(); });
  return bad;
}

/// The E2M1 code of a value the vLLM table returns: one of the 16 exact values (checked at the end of the test), so the
/// cvt reads it back exactly with its sign.
uint8_t code_of_table_value(float v) { return f32_to_e2m1(v); }

TEST(Reference_E2m1VllmTable_e2m1, AllNonNanPatternsDifferFromTheModelOnlyAtMinusZero) {
  // The table against the same independent model as the cvt, over every non-NaN pattern: the one difference is
  // x = -0.0 (torch.sign(-0.0) = +0, so the table's +0 against the model's 0x8).
  const test::BoundaryModel model(test::e2m1_format());
  test::CodeLog log("e2m1_vllm_table");
  const uint64_t cases = test::sweep_against_model(
      model, [](float f) { return code_of_table_value(e2m1_vllm_table(f)); }, log, 0, 0x7F800001u);
  EXPECT_EQ(log.count(), 1u) << log.report(cases);
  EXPECT_NE(log.report(cases).find("e2m1_vllm_table x=0x80000000 (-0x0p+0) => 0x00 expected 0x08"), std::string::npos)
      << log.report(cases);
  for (float v : {0.0f, -0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f, -0.5f, -1.0f, -1.5f, -2.0f, -3.0f, -4.0f, -6.0f})
    EXPECT_EQ(f32_bits(e2m1_to_f32(code_of_table_value(v))), f32_bits(v)) << v;
}

TEST(Reference_F32ToUe8m0Ceil_ue8m0, AllPositiveNormalsVsPowerOfTwoSearch) {
  // Independent: walk the normals upwards holding the smallest power of two p = 2^k >= s (doubling in double).
  const uint64_t first = 0x00800000u, end = 0x7F000001u;  // up to 2^127, the largest s with a code
  const uint64_t bad = parallel_count(end - first, [&](uint64_t lo, uint64_t hi) {
    uint64_t n = 0;
    int k = -126;
    double p = std::ldexp(1.0, k);
    for (uint64_t a = first + lo; a < first + hi; ++a) {
      const float s = f32_from_bits(uint32_t(a));
      while (p < double(s)) {
        p *= 2;
        ++k;
      }
      n += f32_to_ue8m0_ceil(s) != uint8_t(k + 127);
    }
    return n;
  });
  EXPECT_EQ(bad, 0u);
}

}  // namespace
}  // namespace fuseproof::ref
