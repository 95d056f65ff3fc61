// cuda_backend.h: `fuseproof bench --backend cuda`: the fused kernel next to a same-run device-to-device copy and
// eager libtorch, every timed output checked bit-exact against eager. CUDA and libtorch builds only.
#pragma once

#include "bench/bench_options.h"
#include "audit/plugin_loader.h"
#include "bench/bench_report.h"
#include "bench/input_distribution.h"

namespace fuseproof::bench {

/// Runs every shape x dtype x distribution x (vector x math of the built-in kernel, then each CUDA-memory plugin);
/// 0 when every variant was exact, 1 when one was not, 2 (one line on stderr) without a CUDA device visible to both
/// the runtime and libtorch.
int run_cuda(const BenchOptions& o, const std::vector<Distribution>& dists, const std::vector<audit::Plugin>& plugins,
             Report& rep);

}  // namespace fuseproof::bench
