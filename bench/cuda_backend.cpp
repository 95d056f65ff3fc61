// cuda_backend.cpp: timing the CUDA kernel against a copy and eager libtorch.
#include "bench/cuda_backend.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <stdexcept>

#include <cuda_runtime.h>
#include <torch/torch.h>
#include <torch/version.h>

#include "bench/bench_shapes.h"
#include "bench/cuda_timing.h"
#include "bench/input_fill.h"
#include "bench/machine_probe.h"
#include "kernels/bias_gelu_tanh_launcher.h"
#include "kernels/cuda_device.h"

namespace fuseproof::bench {

namespace {

/// Elements of a and b whose encodings differ (compared as int16 on the device).
int64_t count_differences(const torch::Tensor& a, const torch::Tensor& b) {
  return a.view(torch::kInt16).ne(b.view(torch::kInt16)).sum().item<int64_t>();
}

/// --timing after-gemm: the GEMM (M x K) x (K x N) that precedes each timed rep, about a tenth of a millisecond on an
/// H200 (the model's fc_in is this kind of kernel: tensor cores, most of the shared memory).
constexpr int64_t kGemmM = 2048, kGemmK = 5120, kGemmN = 5120;

/// Rotating inputs and outputs of one shape and dtype, with eager's answer for each.
struct Sets {
  std::vector<torch::Tensor> xs, outs, eager;
  torch::Tensor bias, copy_out;  ///< copy_out: where the same-run copy writes, so the fused outputs stay to be checked
  torch::Tensor gemm_a, gemm_b, gemm_c;  ///< --timing after-gemm: the GEMM run before each timed rep
  int count = 0;
  int64_t bytes = 0;  // of one x or out
};

/// Enough input/output sets that one rotation touches more than three L2s: no rep finds its data cached. Inputs of
/// distribution d from o.seed, generated on the device (bench/input_fill.cu).
Sets make_sets(const Shape& shape, ScalarType t, int l2_bytes, const Distribution& d, uint64_t seed,
               const std::string& timing) {
  Sets s;
  const auto opts = torch::TensorOptions()
                        .dtype(t == ScalarType::kBf16 ? torch::kBFloat16 : torch::kHalf)
                        .device(torch::kCUDA, 0);
  s.bytes = shape.rows * shape.width * 2;
  s.count = int(std::min<int64_t>(16, std::max<int64_t>(1, (3 * int64_t(l2_bytes)) / (2 * s.bytes) + 1)));
  const bool bf16 = t == ScalarType::kBf16;
  for (int i = 0; i < s.count; ++i) {
    s.xs.push_back(torch::empty({shape.rows, shape.width}, opts));
    fill_device(static_cast<uint16_t*>(s.xs.back().data_ptr()), shape.rows * shape.width, d, bf16, seed,
                x_stream(i), nullptr);
    s.outs.push_back(torch::empty({shape.rows, shape.width}, opts));
  }
  s.copy_out = torch::empty({shape.rows, shape.width}, opts);
  if (timing == "after-gemm") {
    s.gemm_a = torch::ones({kGemmM, kGemmK}, opts);
    s.gemm_b = torch::ones({kGemmK, kGemmN}, opts);
    s.gemm_c = torch::empty({kGemmM, kGemmN}, opts);
  }
  s.bias = torch::empty({shape.width}, opts);
  fill_device(static_cast<uint16_t*>(s.bias.data_ptr()), shape.width, d, bf16, seed, kBiasStream, nullptr);
  for (int i = 0; i < s.count; ++i) s.eager.push_back(torch::gelu(s.xs[size_t(i)] + s.bias, "tanh"));
  cuda_check(cudaDeviceSynchronize(), "inputs");
  return s;
}

/// Every out poisoned with 0xFF bytes, so that only the variant under test can make them exact.
void poison(const Sets& s, cudaStream_t stream) {
  for (const auto& o : s.outs) cuda_check(cudaMemsetAsync(o.data_ptr(), 0xFF, size_t(s.bytes), stream), "cudaMemsetAsync");
}

int64_t differences_from_eager(const Sets& s) {
  int64_t n = 0;
  for (int i = 0; i < s.count; ++i) n += count_differences(s.outs[size_t(i)], s.eager[size_t(i)]);
  return n;
}

/// Launches one variant on set i % count, on `stream`, with or without PDL (plugins launch as they launch).
using Launch = std::function<void(int i, cudaStream_t stream, bool pdl)>;

/// Measures one variant into `row` (times, exactness); throws on a rejected launch or a CUDA error. `pdl_choice`:
/// the variant can launch with and without PDL (graph rows for both); a plugin has one way.
void measure(const BenchOptions& o, const Shape& shape, Sets& sets, const Launch& launch, bool pdl_choice,
             cudaStream_t s, cudaStream_t gs, Row& row) {
  // The same bytes as the fused rep's x, into a buffer of their own (the fused outputs stay to be checked).
  auto copy = [&](int i, cudaStream_t stream) {
    const size_t k = size_t(i % sets.count);
    cuda_check(cudaMemcpyAsync(sets.copy_out.data_ptr(), sets.xs[k].data_ptr(), size_t(sets.bytes),
                               cudaMemcpyDeviceToDevice, stream),
               "cudaMemcpyAsync");
  };
  // The GEMM before each timed rep (after-gemm): on the legacy default stream, libtorch's, which `s` is or (a plugin's
  // blocking stream) is ordered with.
  auto gemm = [&](int) {
    if (o.timing == "after-gemm") torch::matmul_out(sets.gemm_c, sets.gemm_a, sets.gemm_b);
  };
  poison(sets, s);
  for (int i = 0; i < std::max(o.warmup, sets.count); ++i) {
    gemm(i);
    launch(i, s, true);
    copy(i, s);
  }
  const bool timed_pdl = o.pdl == "on";
  if (o.timing == "blocks") {
    // Every fused rep, then every copy rep: each launch follows itself.
    row.fused_us = time_reps(s, o.reps, [&](int i) { launch(i, s, timed_pdl); });
    row.copy_us = time_reps(s, o.reps, [&](int i) { copy(i, s); });
  } else {
    // Fused and copy reps alternate (time_reps_interleaved): timed as two blocks one after the other, the same kernel
    // moved by up to 2.6 % between rows of one run (docs/PERFORMANCE.md, Timing protocol), most of the spread of a
    // ratio.
    const auto [fused_us, copy_us] = time_reps_interleaved(
        s, o.reps, [&](int i) { launch(i, s, timed_pdl); }, [&](int i) { copy(i, s); }, gemm);
    row.fused_us = fused_us;
    row.copy_us = copy_us;
  }
  cuda_check(cudaDeviceSynchronize(), "fused");
  row.mismatches = differences_from_eager(sets);
  if (shape.rows <= kGraphMaxRows && o.graph_launches > 0) {
    row.graph_pdl_us = time_graph(gs, o.graph_launches, o.graph_reps, [&](int i) { launch(i, gs, true); });
    if (pdl_choice)
      row.graph_nopdl_us = time_graph(gs, o.graph_launches, o.graph_reps, [&](int i) { launch(i, gs, false); });
    row.graph_copy_us = time_graph(gs, o.graph_launches, o.graph_reps, [&](int i) { copy(i, gs); });
    // The graph replays wrote the outputs again: they must still be exact.
    cuda_check(cudaDeviceSynchronize(), "graphs");
    poison(sets, gs);
    time_graph(gs, std::max(o.graph_launches, sets.count), 1, [&](int i) { launch(i, gs, true); });
    row.mismatches += differences_from_eager(sets);
  }
  row.exact = row.mismatches == 0;
}

/// Fills in the ratios of a measured row (or drops them when it was not exact) and prints its line; 1 when not exact.
int finish_row(Row& row, const Sets& sets, const Shape& shape) {
  row.fused_gbs = double(2 * sets.bytes + shape.width * 2) / (row.fused_us * 1e3);
  row.copy_gbs = double(2 * sets.bytes) / (row.copy_us * 1e3);
  row.fraction = row.copy_us / row.fused_us;
  row.speedup = row.eager_us / row.fused_us;
  int status = 0;
  if (!row.exact) {
    // A variant that is not exact is not a result: keep the row, drop its numbers.
    if (row.note.empty()) row.note = std::to_string(row.mismatches) + " elements differ from eager";
    row.fused_gbs = row.fraction = row.speedup = NAN;
    status = 1;
  }
  std::printf("%s %s %s %s %d-byte %s: fused %.2f us, copy %.2f us (%.3f of copy), eager %.2f us (x%.2f)%s%s\n",
              shape.name.c_str(), row.dtype.c_str(), row.dist.c_str(), row.kernel.c_str(), row.vector,
              row.math.c_str(), row.fused_us, row.copy_us, row.fraction, row.eager_us, row.speedup,
              row.exact ? "" : ", NOT EXACT: ", row.note.c_str());
  std::fflush(stdout);
  return status;
}

}  // namespace

int run_cuda(const BenchOptions& o, const std::vector<Distribution>& dists, const std::vector<audit::Plugin>& plugins,
             Report& rep) {
  constexpr Device kCuda0{DeviceKind::kCuda, 0};
  rep.backend = "cuda";
  if (cuda_device_count() == 0 || !torch::cuda::is_available()) {
    std::fprintf(stderr, "fuseproof bench: --backend cuda needs a CUDA device visible to both the CUDA runtime and "
                         "libtorch, got none\n");
    return 2;
  }
  rep.machine = cuda_machine(TORCH_VERSION);
  rep.settings = {{"reps", o.reps}, {"timing", o.timing}, {"pdl", o.pdl}, {"warmup", o.warmup},
                  {"graph_launches", o.graph_launches}, {"graph_reps", o.graph_reps}, {"seed", o.seed},
                  {"distributions", distribution_settings(dists)}};
  int l2 = 0;
  cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0);
  cudaStream_t s = nullptr;   // the legacy default stream: libtorch's default stream, so eager queues on it too
  cudaStream_t gs = nullptr;  // graph capture needs a stream of its own
  cuda_check(cudaStreamCreateWithFlags(&gs, cudaStreamNonBlocking), "cudaStreamCreate");
  std::printf("bench on %s (sm_%s, driver %s, CUDA runtime %s, torch %s)\n",
              rep.machine["gpu"].get<std::string>().c_str(), rep.machine["sm"].get<std::string>().c_str(),
              rep.machine["driver"].get<std::string>().c_str(), rep.machine["cuda_runtime"].get<std::string>().c_str(),
              TORCH_VERSION);
  // Plugins get a stream of their own (the ABI never hands them the legacy default stream); a blocking stream, so
  // that it is ordered with the default stream's fills, eager and poisoning.
  cudaStream_t ps = nullptr;
  cuda_check(cudaStreamCreate(&ps), "cudaStreamCreate");
  int status = 0;
  for (const Shape& shape : select_shapes(o.shapes)) {
    for (const std::string& dt : o.dtypes) {
      const ScalarType t = dt == "fp16" ? ScalarType::kFp16 : ScalarType::kBf16;
      for (const Distribution& dist : dists) {
        Sets sets = make_sets(shape, t, l2, dist, o.seed, o.timing);
        // Eager, once per shape, dtype and distribution.
        for (int i = 0; i < o.warmup; ++i) (void)torch::gelu(sets.xs[size_t(i % sets.count)] + sets.bias, "tanh");
        const double eager_us = time_reps(
            s, o.reps, [&](int i) { (void)torch::gelu(sets.xs[size_t(i % sets.count)] + sets.bias, "tanh"); });
        // Times one kernel's row, checks it bit for bit and keeps it; a launch that throws is a row with its reason.
        const auto measure_row = [&](const Launch& launch, bool builtin, cudaStream_t stream, Row& row) {
          try {
            measure(o, shape, sets, launch, builtin, stream, gs, row);
          } catch (const std::exception& e) {
            row.exact = false;
            row.note = e.what();
            cudaGetLastError();
          }
          status |= finish_row(row, sets, shape);
          rep.rows.push_back(row);
        };
        for (int vb : o.vectors) {
          for (const std::string& m : o.maths) {
            BiasGeluOptions opt;
            opt.vector = static_cast<VectorPolicy>(vb);
            if (!gelu_math_from_name(m, &opt.math)) throw std::runtime_error("bench: unknown GELU math " + m);
            // kAuto is named by what it resolved to at this shape.
            const std::string math_name =
                opt.math == GeluMath::kAuto
                    ? m + "=" + gelu_math_name(bias_gelu_tanh_resolve_math(kCuda0, shape.rows * shape.width, opt.math))
                    : m;
            Row row = variant_row(shape.name, shape.rows, shape.width, dt, vb, math_name);
            row.dist = dist.name;
            row.eager_us = eager_us;
            const Launch launch = [&](int i, cudaStream_t stream, bool pdl) {
              BiasGeluOptions lo = opt;
              lo.stream = stream;
              lo.pdl = pdl;
              const size_t k = size_t(i % sets.count);
              const LaunchStatus st =
                  bias_gelu_tanh(contiguous_view(sets.outs[k].data_ptr(), t, {shape.rows, shape.width}, kCuda0),
                                 contiguous_view(sets.xs[k].data_ptr(), t, {shape.rows, shape.width}, kCuda0),
                                 contiguous_view(sets.bias.data_ptr(), t, {shape.width}, kCuda0), lo);
              if (!st.ok) throw std::runtime_error(st.message);
            };
            measure_row(launch, true, s, row);
          }
        }
        for (const audit::Plugin& p : plugins) {
          Row row = variant_row(shape.name, shape.rows, shape.width, dt, p.info().vector_bytes, "-");
          row.dist = dist.name;
          row.kernel = p.info().kernel_name;
          row.eager_us = eager_us;
          const int32_t code = t == ScalarType::kBf16 ? FUSEPROOF_DTYPE_BF16 : FUSEPROOF_DTYPE_FP16;
          const Launch launch = [&](int i, cudaStream_t stream, bool) {
            const size_t k = size_t(i % sets.count);
            std::string msg;
            // The timed loops run on the default stream; the plugin gets `ps` there, ordered with it.
            if (p.call_with_bias(sets.outs[k].data_ptr(), sets.xs[k].data_ptr(), sets.bias.data_ptr(), shape.rows, shape.width,
                       code, stream == nullptr ? ps : stream, &msg) != 0)
              throw std::runtime_error(p.info().kernel_name + ": " + msg);
          };
          measure_row(launch, false, ps, row);
        }
      }
    }
  }
  cudaStreamDestroy(ps);
  cudaStreamDestroy(gs);
  return status;
}

}  // namespace fuseproof::bench
