// sweep_command.h: `fuseproof sweep` — every (x, bias) pair of the 2^32 domain, digests and mismatch counts.
#pragma once

namespace CLI { class App; }

namespace fuseproof::cli {
void add_sweep_command(CLI::App& app);
}
