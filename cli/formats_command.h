// formats_command.h: `fuseproof formats [--format F] [--overflow O] [--rows A:B] [--json] [--out FILE]`: the tree
// digests of the narrow-format casts (E4M3 both overflow conventions, E2M1) over the binary32 patterns.
#pragma once

namespace CLI { class App; }

namespace fuseproof::cli {
void add_formats_command(CLI::App& app);
}
