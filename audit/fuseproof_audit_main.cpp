// fuseproof_audit_main.cpp: standalone `fuseproof-audit`, the same subcommand `fuseproof audit` wires in.
#include <CLI/CLI.hpp>

#include <cstring>
#include <vector>

#include "audit/audit_cli.h"
#include "common/cli_exit.h"

int main(int argc, char** argv) {
  CLI::App app{"fuseproof-audit: audit a fused kernel for bit-exactness (also `fuseproof audit`)", "fuseproof-audit"};
  app.require_subcommand(1);
  fuseproof::audit::add_audit_subcommand(app);
  // `fuseproof-audit --op ...` and `fuseproof-audit audit --op ...` both work.
  std::vector<char*> args(argv, argv + argc);
  static char kAudit[] = "audit";
  if (argc < 2 || (std::strcmp(argv[1], "audit") != 0 && std::strcmp(argv[1], "--help") != 0 &&
                   std::strcmp(argv[1], "-h") != 0))
    args.insert(args.begin() + 1, kAudit);
  return fuseproof::parse_and_run(app, int(args.size()), args.data());
}
