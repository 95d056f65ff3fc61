// cli_exit.h: one exit-status policy for the e2e and video commands: CLI11 parse errors exit 2, never CLI11's own codes.
#pragma once

#include <CLI/CLI.hpp>

#include <iostream>

namespace fuseproof::e2e {

/// Parses and runs `app`. Commands report their own status by throwing CLI::RuntimeError(code) after printing one line;
/// --help exits 0; any other parse error prints CLI11's one-line message and exits 2.
inline int parse_and_run(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << app.get_name() << ": " << e.what() << '\n';
    return 2;
  }
  return 0;
}

}  // namespace fuseproof::e2e
