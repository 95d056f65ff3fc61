// table_command.h: `fuseproof table --act A --dtype D --out FILE` (alias gelu-table): an activation tabulated over
// all 65,536 inputs by the reference, compared with the golden table.
#pragma once

namespace CLI { class App; }

namespace fuseproof::cli {
void add_table_command(CLI::App& app);
}
