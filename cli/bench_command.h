// bench_command.h: `fuseproof bench` — the fused kernel against a same-run device copy and eager libtorch.
#pragma once

namespace CLI { class App; }

namespace fuseproof::cli {
/// Registers `bench`: --backend cuda (needs CUDA, libtorch and a device; exit 2 with one line otherwise) or emulated.
void add_bench_command(CLI::App& app);
}
