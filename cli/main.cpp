// main.cpp: the `fuseproof` command: conformance audits, reference tables, domain sweeps, the kernel benchmark, video
// and e2e tools.
#include <cstdio>
#include <exception>
#include <string>

#include <CLI/CLI.hpp>

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
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a command's own status
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "fuseproof: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuseproof: %s\n", e.what());
    return 2;
  }
  return 0;
}
