// e2e_cli.h: `fuseproof e2e run|check|bless|sites`: run the Wan-style pipeline, gate a run against golden, write golden.
#pragma once

namespace CLI {
class App;
}

namespace fuseproof::e2e {

/// Adds `e2e` with its subcommands to `app` (the fuseproof CLI). Exit statuses: see add_e2e_commands.
void add_e2e_subcommand(CLI::App& app);
/// Adds run, check, bless and sites directly to `app` (the standalone fuseproof-e2e). Statuses are thrown as
/// CLI::RuntimeError: run/sites 0 ok, 2 error; check and bless 0 pass, 1 mismatch, 2 error, 3 incomplete (no golden
/// file, an eager fallback, no frames to re-hash), 4 corrupt data (frame files or run.json not what they should be);
/// compare 0 identical, 1 different, 2 error, 4 corrupt data. Every non-zero status prints one line on stderr.
void add_e2e_commands(CLI::App& app);

}  // namespace fuseproof::e2e
