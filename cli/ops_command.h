// ops_command.h: `fuseproof ops [--json]`: every op of the op spec with its inputs, layout, Python signature and
// contracts.
#pragma once

namespace CLI { class App; }

namespace fuseproof::cli {
void add_ops_command(CLI::App& app);
}
