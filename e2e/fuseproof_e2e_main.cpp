// fuseproof_e2e_main.cpp: the standalone `fuseproof-e2e` executable (the same commands as `fuseproof e2e`).
#include <CLI/CLI.hpp>

#include "common/cli_exit.h"
#include "e2e_cli.h"

int main(int argc, char** argv) {
  CLI::App app{"fuseproof-e2e: deterministic Wan-style 81-frame pipeline, golden checks", "fuseproof-e2e"};
  app.require_subcommand(1);
  fuseproof::e2e::add_e2e_commands(app);
  return fuseproof::parse_and_run(app, argc, argv);
}
