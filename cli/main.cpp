// main.cpp: the `fuseproof` command: conformance audits, reference tables, domain sweeps, video and e2e tools.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "cli/gelu_table_command.h"
#include "cli/reference_audit.h"
#include "cli/sweep_command.h"

int main(int argc, char** argv) {
  CLI::App app{"fuseproof: prove a fused GPU kernel changes not one output bit against eager PyTorch", "fuseproof"};
  app.require_subcommand(1);
  fuseproof::cli::add_reference_audit_command(app);
  fuseproof::cli::add_gelu_table_command(app);
  fuseproof::cli::add_sweep_command(app);
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
