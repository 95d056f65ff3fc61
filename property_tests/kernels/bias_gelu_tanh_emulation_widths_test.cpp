// bias_gelu_tanh_emulation_widths_test.cpp: every valid width up to 16,384, both vector policies and both GELU maths
// (direct, table), on the CPU emulation.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "property_tests/kernels/bias_gelu_tanh_testbed.h"

namespace fuseproof::test {
namespace {

constexpr int64_t kMaxWidth = 16384;

/// Every multiple of the vector's element count up to kMaxWidth, 1-3 rows, 1-5 simulated SMs (so threads loop and the
/// bias column wraps), fresh seeded inputs per width; one log for the whole sweep.
void every_valid_width(ScalarType t, VectorPolicy v, GeluMath m) {
  const ref::Dtype d = ref_dtype(t);
  const int64_t elems = bias_gelu_tanh_vector_elems(t, v);
  const BiasGeluOracle& oracle = BiasGeluOracle::libm(d);
  GuardedBuffer x{size_t(3 * kMaxWidth)}, bias{size_t(kMaxWidth)}, out{size_t(3 * kMaxWidth)};
  MismatchLog log("bias_gelu_tanh", d);
  uint64_t cases = 0, widths = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t width = elems; width <= kMaxWidth; width += elems) {
    const int64_t k = width / elems;
    const int64_t rows = 1 + k % 3;
    fill_half_bits(x.data(), size_t(rows * width), d, uint64_t(k) * 2);
    fill_half_bits(bias.data(), size_t(width), d, uint64_t(k) * 2 + 1);
    out.poison();
    BiasGeluOptions opt;
    opt.vector = v;
    opt.math = m;
    opt.emulated_sms = int(1 + k % 5);
    const LaunchStatus st = bias_gelu_tanh(contiguous_view(out.data(), t, {rows, width}),
                                           contiguous_view(x.data(), t, {rows, width}),
                                           contiguous_view(bias.data(), t, {width}), opt);
    ASSERT_TRUE(st.ok) << "width " << width << ": " << st.message;
    cases += verify_bias_gelu(log, oracle, rows, width, x.data(), bias.data(), out.data());
    // Nothing written past rows x width: the rest of the buffer and the guards keep their poison.
    const auto* tail = reinterpret_cast<const uint8_t*>(out.data() + rows * width);
    const auto* end = reinterpret_cast<const uint8_t*>(out.data() + out.size());
    ASSERT_TRUE(std::all_of(tail, end, [](uint8_t b) { return b == GuardedBuffer::kPoison; }))
        << "width " << width << ": write past the last element";
    ASSERT_TRUE(out.check_guards().empty()) << "width " << width << ": " << out.check_guards();
    ++widths;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s, %s math: %llu widths (%lld..%lld step %lld), %.2f s\n", policy_label(t, v).c_str(), gelu_math_name(m),
              static_cast<unsigned long long>(widths), static_cast<long long>(elems), static_cast<long long>(kMaxWidth),
              static_cast<long long>(elems), s);
  EXPECT_EQ(widths, uint64_t(kMaxWidth / elems));
  FUSEPROOF_EXPECT_CLEAN(log, cases);
}

void every_valid_width_16(ScalarType t) {
  for (GeluMath m : kAllGeluMaths) every_valid_width(t, VectorPolicy::kBytes16, m);
}
void every_valid_width_32(ScalarType t) {
  for (GeluMath m : kAllGeluMaths) every_valid_width(t, VectorPolicy::kBytes32, m);
}

FUSEPROOF_BOTH_DTYPES(Emulated, BitExactVsReference_EveryValidWidth_16ByteVectors, every_valid_width_16)
FUSEPROOF_BOTH_DTYPES(Emulated, BitExactVsReference_EveryValidWidth_32ByteVectors, every_valid_width_32)

}  // namespace
}  // namespace fuseproof::test
