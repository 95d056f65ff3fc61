// cli_exit.h: parses and runs a CLI11 app under the exit-status policy of common/exit_status.h.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <string>

#include "common/exit_status.h"

namespace fuseproof {

/// Parses and runs `app`. A command reports its own status by throwing CLI::RuntimeError(code) after printing one
/// line; an exception escaping it prints `<app>: <what>` and exits by exit_status_of(); --help exits 0; any other
/// parse error prints CLI11's one-line message and exits 2.
inline int parse_and_run(CLI::App& app, int argc, char** argv);

/// A command's failure: `line` on stderr, then exit `code` through parse_and_run (default 2, usage).
[[noreturn]] inline void fail_with(const std::string& line, int code = kExitUsage) {
  std::fprintf(stderr, "%s\n", line.c_str());
  throw CLI::RuntimeError(code);
}

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
    std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), e.what());
    return exit_status_of(e);
  }
  return kExitPass;
}

}  // namespace fuseproof
