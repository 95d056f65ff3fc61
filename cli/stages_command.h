// stages_command.h: `fuseproof stages --op OP --dtype D [--contract C] --out DIR`: each rounding boundary (stage) of a
// 3-input composition written for the golden capture: its description and its operands' witness inputs.
#pragma once

namespace CLI { class App; }

namespace fuseproof::cli {
void add_stages_command(CLI::App& app);
}
