// eval_command.h: `fuseproof eval --op OP --dtype D [--contract C] --in FILE --out FILE`: the reference on records.
#pragma once

namespace CLI { class App; }

namespace fuseproof::cli {
void add_eval_command(CLI::App& app);
}
