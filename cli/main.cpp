// main.cpp: the `fuseproof` command: conformance audits, reference tables, domain sweeps, the kernel benchmark, video
// and e2e tools.
#include "cli/fuseproof_app.h"
#include "common/cli_exit.h"

int main(int argc, char** argv) {
  const auto app = fuseproof::cli::make_fuseproof_app();
  return fuseproof::parse_and_run(*app, argc, argv);
}
