// fuseproof_app.h: the `fuseproof` command's CLI11 application, with every subcommand this build has.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

namespace fuseproof::cli {

/// The `fuseproof` app: one required subcommand among those this configuration built (audit, sweep, video, ...).
std::unique_ptr<CLI::App> make_fuseproof_app();

}  // namespace fuseproof::cli
