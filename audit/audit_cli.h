// audit_cli.h: the `audit` subcommand of the fuseproof CLI (CLI11).
#pragma once

#include <CLI/CLI.hpp>

namespace fuseproof::audit {

/// Adds `audit` to `app`. Its callback runs the audit and reports its status by throwing CLI::RuntimeError:
/// 1 when a check failed (or a mutant survived), 2 for a usage or setup error (unknown --op/--dtype/--backend, a
/// missing or bad plugin, an unwritable report), after printing one line to stderr; it returns normally on a pass.
void add_audit_subcommand(CLI::App& app);

}  // namespace fuseproof::audit
