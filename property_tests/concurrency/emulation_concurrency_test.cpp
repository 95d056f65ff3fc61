// emulation_concurrency_test.cpp: the CPU emulation launcher and the reference sweep called from several host threads
// at once give exactly what one thread gives (ctest label `concurrency`, run under ThreadSanitizer by the tsan preset).
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <iterator>
#include <vector>

#include "common/sha256.h"
#include "kernels/bias_gelu_tanh_emulation.h"
#include "property_tests/kernels/bias_gelu_tanh_testbed.h"
#include "common/domain_sweep.h"
#include "reference/sweep_row.h"
#include "reference/activation_table.h"
#include "common/parallel_for.h"

namespace fuseproof::test {
namespace {

constexpr int kThreads = 4;

/// One thread's launch: its own buffers, seeds, shape and GELU math, so no two threads share mutable state.
struct Job {
  ScalarType t;
  int64_t rows, width;
  GeluMath math;
  VectorPolicy vector;
  uint64_t seed;
  std::shared_ptr<GuardedBuffer> x, bias;  ///< 64-byte aligned, as the 32-byte vectors need
  std::string error;             ///< launch error, guard damage or mismatches (asserted on the main thread)
  uint64_t checked = 0;
  std::vector<uint16_t> out;     ///< the last output, compared with the single-thread run

  void run(int repeats) {
    const ref::Dtype d = ref_dtype(t);
    for (int r = 0; r < repeats && error.empty(); ++r) {
      GuardedBuffer o{size_t(rows * width)};
      o.poison();
      BiasGeluOptions opt;
      opt.math = math;
      opt.vector = vector;
      opt.emulated_sms = 3;  // most simulated threads loop several times
      const LaunchStatus st = bias_gelu_tanh(contiguous_view(o.data(), t, {rows, width}),
                                             contiguous_view(x->data(), t, {rows, width}),
                                             contiguous_view(bias->data(), t, {width}), opt);
      if (!st.ok) {
        error = st.message;
        return;
      }
      if (const std::string g = o.check_guards(); !g.empty()) error = "guard damaged: " + g;
      MismatchLog log("bias_gelu_tanh", d);
      checked += verify_bias_gelu(log, BiasGeluOracle::libm(d), rows, width, x->data(), bias->data(), o.data());
      if (!log.clean()) error = log.report(uint64_t(rows * width));
      if (output_is_trivial(o.data(), o.size())) error = "trivial output";
      out.assign(o.data(), o.data() + o.size());
    }
  }
};

std::vector<Job> make_jobs(ScalarType t) {
  const ref::Dtype d = ref_dtype(t);
  std::vector<Job> jobs;
  for (int i = 0; i < kThreads; ++i) {
    Job j{t, 17 + 5 * i, 5120 + 256 * i, kAllGeluMaths[i % std::size(kAllGeluMaths)], i % 2 ? VectorPolicy::kBytes32 : VectorPolicy::kBytes16,
          0xC0FFEEull + uint64_t(i), {}, {}, {}, 0, {}};
    j.x = std::make_shared<GuardedBuffer>(size_t(j.rows * j.width));
    j.bias = std::make_shared<GuardedBuffer>(size_t(j.width));
    fill_half_bits(j.x->data(), j.x->size(), d, j.seed);
    fill_half_bits(j.bias->data(), j.bias->size(), d, ~j.seed);
    jobs.push_back(std::move(j));
  }
  return jobs;
}

/// Every thread launches 3 times at once (the host tables are built on first use, by whichever thread comes first);
/// every output equals the oracle and equals the same launch run alone afterwards.
void concurrent_launches(ScalarType t) {
  std::vector<Job> jobs = make_jobs(t);
  run_workers(unsigned(jobs.size()), [&](unsigned k) { jobs[k].run(3); });  // a thread a job
  for (Job& j : jobs) {
    ASSERT_EQ(j.error, "") << gelu_math_name(j.math) << " " << j.rows << "x" << j.width;
    EXPECT_EQ(j.checked, uint64_t(3 * j.rows * j.width));
    const std::vector<uint16_t> concurrent = j.out;
    j.run(1);  // alone
    ASSERT_EQ(j.error, "");
    EXPECT_TRUE(concurrent == j.out) << "concurrent and single-thread outputs differ";
  }
}
FUSEPROOF_BOTH_DTYPES(Emulated, ConcurrentLaunchesBitExact, concurrent_launches)

ref::MathConfig libm_config() {
  ref::MathConfig c;
  c.math = ref::MathModel::kLibm;
  return c;
}

/// SHA-256 of the canonical rows [b0, b0 + n) of bias_gelu(d), computed with `workers` sweep threads.
std::string sweep_digest(ref::Dtype d, const std::vector<uint16_t>& table, uint32_t b0, uint32_t n, unsigned workers) {
  SweepOptions so;
  so.threads = workers;
  so.bias_first = b0;
  so.bias_count = n;
  so.biases_per_block = 8;
  Sha256 h;
  sweep_domain([&](uint16_t b, uint16_t* row) { ref::sweep_row(d, table.data(), ref::NanPolicy::kCudaCvtRn, b, row); },
                    [&h](uint32_t, uint32_t rows, const uint16_t* out) { h.update(out, size_t(rows) * 65536 * 2); }, so);
  return h.hex();
}

/// Several host threads each run a multi-threaded sweep over their own bias range at once; each digest equals the
/// one-thread sweep of that range, and the digests of different ranges differ (negative control: the digest sees the
/// rows).
TEST(Reference_Sweep_bf16, ConcurrentSweepsEqualSingleThread) {
  const ref::Dtype d = ref::Dtype::kBf16;
  const std::vector<uint16_t> table = ref::activation_table(ref::Activation::kGeluTanh, d, libm_config());
  constexpr uint32_t kRows = 24;
  std::vector<std::string> concurrent(kThreads);
  run_workers(unsigned(kThreads),
              [&](unsigned i) { concurrent[i] = sweep_digest(d, table, 0x3F00u + kRows * i, kRows, 2); });
  for (int i = 0; i < kThreads; ++i) {
    EXPECT_EQ(concurrent[i], sweep_digest(d, table, 0x3F00u + kRows * i, kRows, 1)) << "range " << i;
    if (i) EXPECT_NE(concurrent[i], concurrent[i - 1]) << "two ranges hash alike: the digest does not see the rows";
  }
}

}  // namespace
}  // namespace fuseproof::test
