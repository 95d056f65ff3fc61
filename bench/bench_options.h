// bench_options.h: what one `fuseproof bench` run measures: backend, shapes, dtypes, distributions, vector policies,
// GELU maths, plugins, reps.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fuseproof::bench {

/// The names of every explicit GELU math, from the kernel's own table (kAllGeluMaths, gelu_math_name): the
/// choices of --maths and its default.
std::vector<std::string> gelu_math_choices();

struct BenchOptions {
  std::string backend = "cuda";          ///< cuda or emulated
  std::vector<std::string> shapes;       ///< names from bench_shapes() or ROWSxWIDTH; empty = all
  std::vector<std::string> dtypes = {"bf16", "fp16"};
  std::vector<int> vectors = {16, 32};   ///< vector bytes
  std::vector<std::string> maths = gelu_math_choices();  ///< gelu_math_name()s
  int reps = 30;
  /// How fused and copy reps are timed (CUDA): "alternate" (a fused rep, then a copy rep, ...), "blocks" (every fused
  /// rep, then every copy rep: each launch follows itself), "after-gemm" (alternating, each timed rep preceded by an
  /// untimed bf16/fp16 GEMM of 2,048 x 5,120 x 5,120 on the same stream, as in the model where the op follows fc_in).
  std::string timing = "alternate";
  /// Whether the built-in kernel's timed reps launch with programmatic dependent launch ("on", as shipped) or without
  /// ("off"); warm-up, graph rows and plugins are unchanged (a plugin launches as it launches).
  std::string pdl = "on";
  int warmup = 3;
  int graph_launches = 20;
  int graph_reps = 10;
  int64_t emulated_rows = 32;
  std::vector<std::string> dists;        ///< builtin_distribution_names() entries; empty = every built-in
  std::string input_file, input_shape;   ///< --input FILE (raw little-endian 16-bit) and its ROWSxWIDTH
  std::string e2e_capture;               ///< folder of an e2e FFN capture (the e2e distribution)
  std::vector<std::string> plugins;      ///< ABI plugins timed beside the built-in kernel
  uint64_t seed = 1234;                  ///< of every generated input
};

}  // namespace fuseproof::bench
