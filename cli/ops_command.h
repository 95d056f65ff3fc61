// ops_command.h: `fuseproof ops [--json]`: every op of the op spec with its inputs, layout, Python signature,
// contracts and each contract's stages.
#pragma once

namespace CLI { class App; }

namespace fuseproof::cli {
void add_ops_command(CLI::App& app);
}
