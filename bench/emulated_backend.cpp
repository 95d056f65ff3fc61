// emulated_backend.cpp: timing the CPU emulation.
#include "bench/emulated_backend.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <stdexcept>

#include "bench/bench_shapes.h"
#include "bench/machine_probe.h"
#include "kernels/bias_gelu_tanh_launcher.h"

namespace fuseproof::bench {

namespace {

/// n uint16 on a 64-byte boundary (std::vector alone promises less than the 32-byte vectors need).
class AlignedHalfs {
 public:
  explicit AlignedHalfs(size_t n) : store_(n + 32), n_(n) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(store_.data());
    p_ = store_.data() + ((64 - a % 64) % 64) / 2;
  }
  uint16_t* data() { return p_; }
  size_t size() const { return n_; }
  uint16_t& operator[](size_t i) { return p_[i]; }

 private:
  std::vector<uint16_t> store_;
  size_t n_;
  uint16_t* p_;
};

}  // namespace

int run_emulated(const BenchOptions& o, const std::vector<Distribution>& dists,
                 const std::vector<audit::Plugin>& plugins, Report& rep) {
  rep.backend = "emulated";
  rep.machine = host_machine();
  const int reps = std::max(1, std::min(o.reps, 5));
  rep.settings = {{"rows", o.emulated_rows}, {"reps", reps}, {"seed", o.seed},
                  {"distributions", distribution_settings(dists)}};
  for (const std::string& dt : o.dtypes) {
    const ScalarType t = dt == "fp16" ? ScalarType::kFp16 : ScalarType::kBf16;
    for (const Shape& s0 : select_shapes(o.shapes)) {
      const int64_t rows = std::min(s0.rows, o.emulated_rows);
      const Shape s{std::to_string(rows) + "x" + std::to_string(s0.width), rows, s0.width};
      const size_t n = size_t(s.rows * s.width);
      for (const Distribution& dist : dists) {
        AlignedHalfs x(n), bias(size_t(s.width)), out(n);
        fill_host(x.data(), int64_t(n), dist, t == ScalarType::kBf16, o.seed, x_stream(0));
        fill_host(bias.data(), s.width, dist, t == ScalarType::kBf16, o.seed, kBiasStream);
        std::vector<uint16_t> first;
        // Times one variant (best of reps) and compares its output with the first variant's.
        auto run_variant = [&](Row row, const std::function<std::string()>& call) {
          row.dist = dist.name;
          std::vector<double> secs;
          for (int r = 0; r < reps; ++r) {
            const auto t0 = std::chrono::steady_clock::now();
            const std::string err = call();
            if (!err.empty()) throw std::runtime_error(err);
            secs.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
          }
          const double best = *std::min_element(secs.begin(), secs.end());
          row.fused_us = best * 1e6;
          row.fused_gbs = double(s.rows * s.width) / best / 1e6;  // Melem/s in this mode
          if (first.empty()) {
            first.assign(out.data(), out.data() + n);
            row.exact = true;
            row.note = "first variant (others compared with it)";
          } else {
            row.mismatches = 0;
            for (size_t i = 0; i < n; ++i) row.mismatches += out[i] != first[i];
            row.exact = row.mismatches == 0;
          }
          rep.rows.push_back(row);
          std::printf("emulated %s %s %s %s %d-byte %s: %.1f Melem/s (best of %zu, %.2f ms)\n", s.name.c_str(),
                      dt.c_str(), dist.name.c_str(), row.kernel.c_str(), row.vector, row.math.c_str(), row.fused_gbs,
                      secs.size(), best * 1e3);
        };
        for (int vb : o.vectors)
          for (const std::string& m : o.maths) {
            BiasGeluOptions opt;
            opt.vector = static_cast<VectorPolicy>(vb);
            if (!gelu_math_from_name(m, &opt.math)) throw std::runtime_error("bench: unknown GELU math " + m);
            run_variant(variant_row(s.name, s.rows, s.width, dt, vb, m), [&] {
              const LaunchStatus ls = bias_gelu_tanh(contiguous_view(out.data(), t, {s.rows, s.width}),
                                                     contiguous_view(x.data(), t, {s.rows, s.width}),
                                                     contiguous_view(bias.data(), t, {s.width}), opt);
              return ls.ok ? std::string() : ls.message;
            });
          }
        for (const audit::Plugin& p : plugins) {
          Row row = variant_row(s.name, s.rows, s.width, dt, p.info().vector_bytes, "-");
          row.kernel = p.info().kernel_name;
          run_variant(row, [&] {
            std::string msg;
            const int32_t code = t == ScalarType::kBf16 ? FUSEPROOF_DTYPE_BF16 : FUSEPROOF_DTYPE_FP16;
            return p.call_with_bias(out.data(), x.data(), bias.data(), s.rows, s.width, code, nullptr, &msg) == 0
                       ? std::string()
                       : p.info().kernel_name + ": " + msg;
          });
        }
      }
    }
  }
  // A variant that differs from the first is a failure, as in the CUDA backend.
  for (const Row& r : rep.rows)
    if (!r.exact) return 1;
  return 0;
}

}  // namespace fuseproof::bench
