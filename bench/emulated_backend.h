// emulated_backend.h: `fuseproof bench --backend emulated`: the CPU emulation's throughput per shape and variant.
#pragma once

#include "bench/bench_options.h"
#include "bench/bench_report.h"

namespace fuseproof::bench {

/// Elements per second of the CPU emulation (one host thread, as the launcher runs it) at min(rows, emulated_rows)
/// rows of each shape; every variant's output is compared with the first variant's. Returns the exit status.
int run_emulated(const BenchOptions& o, Report& rep);

}  // namespace fuseproof::bench
