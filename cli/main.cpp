// main.cpp: the `fuseproof` command: conformance audits, reference tables, domain sweeps, the kernel benchmark, video
// and e2e tools.
#include <cstdio>
#include <string>

#include "cli/fuseproof_app.h"
#include "common/cli_exit.h"

int main(int argc, char** argv) {
  const auto app = fuseproof::cli::make_fuseproof_app();
  if (argc > 1) {
    const std::string unknown = fuseproof::cli::unknown_command_message(*app, argv[1]);
    if (!unknown.empty()) {
      std::fprintf(stderr, "%s\n", unknown.c_str());
      return 2;
    }
  }
  return fuseproof::parse_and_run(*app, argc, argv);
}
