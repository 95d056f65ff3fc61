// emulated_backend.h: `fuseproof bench --backend emulated`: the CPU emulation's throughput per shape and variant.
#pragma once

#include "bench/bench_options.h"
#include "audit/plugin_loader.h"
#include "bench/bench_report.h"
#include "bench/input_distribution.h"

namespace fuseproof::bench {

/// Elements per second of the CPU emulation (one host thread, as the launcher runs it) and of each host-memory
/// plugin at min(rows, emulated_rows) rows of each shape, per distribution; every variant's output is compared with
/// the first variant's. Returns the exit status.
int run_emulated(const BenchOptions& o, const std::vector<Distribution>& dists,
                 const std::vector<audit::Plugin>& plugins, Report& rep);

}  // namespace fuseproof::bench
