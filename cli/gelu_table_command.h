// gelu_table_command.h: `fuseproof gelu-table` — the reference GELU over all 65,536 inputs, written to a file.
#pragma once

namespace CLI { class App; }

namespace fuseproof::cli {
void add_gelu_table_command(CLI::App& app);
}
