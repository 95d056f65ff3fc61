// main.cpp: the `fuseproof` command: conformance audits, reference tables, domain sweeps, the kernel benchmark, video
// and e2e tools.
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "common/cli_exit.h"

#include "cli/gelu_table_command.h"
#include "audit/reference_audit.h"
#include "cli/sweep_command.h"
#if FUSEPROOF_WITH_BENCH_CLI
#include "cli/bench_command.h"
#endif
#include "audit/audit_cli.h"
#if FUSEPROOF_WITH_E2E_CLI
#include "e2e/e2e_cli.h"
#endif
#if FUSEPROOF_WITH_VIDEO_CLI
#include "e2e/video_cli.h"
#endif

int main(int argc, char** argv) {
  CLI::App app{"fuseproof: prove a fused GPU kernel changes not one output bit against eager PyTorch", "fuseproof"};
  app.require_subcommand(1);
  fuseproof::audit::add_reference_audit_command(app);
  fuseproof::cli::add_gelu_table_command(app);
  fuseproof::cli::add_sweep_command(app);
#if FUSEPROOF_WITH_BENCH_CLI
  fuseproof::cli::add_bench_command(app);
#endif
  fuseproof::audit::add_audit_subcommand(app);
#if FUSEPROOF_WITH_E2E_CLI
  fuseproof::e2e::add_e2e_subcommand(app);
#endif
#if FUSEPROOF_WITH_VIDEO_CLI
  fuseproof::e2e::add_video_subcommand(app);
#endif
  if (argc > 1 && argv[1][0] != '-') {
    std::string known;
    for (const CLI::App* sub : app.get_subcommands({})) known += (known.empty() ? "" : ", ") + sub->get_name();
    if (app.get_subcommands([&](CLI::App* s) { return s->get_name() == argv[1]; }).empty()) {
      std::fprintf(stderr, "fuseproof: unknown command %s (known: %s)\n", argv[1], known.c_str());
      return 2;
    }
  }
  return fuseproof::parse_and_run(app, argc, argv);
}
