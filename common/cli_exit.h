// cli_exit.h: parses and runs a CLI11 app under the exit-status policy of common/exit_status.h, with checked
// standard output; the validator of options that name an output file.
#pragma once

#include <CLI/CLI.hpp>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>

#include "common/atomic_file.h"
#include "common/exit_status.h"

namespace fuseproof {

/// Parses and runs `app`. A command reports its own status by throwing CLI::RuntimeError(code) after printing one
/// line; an exception escaping it prints `<app>: <what>` and exits by exit_status_of(); --help exits 0; any other
/// parse error prints CLI11's one-line message and exits 2. SIGPIPE is ignored, so a closed pipe is a write error,
/// not death by signal; standard output is flushed and checked at the end (flush_standard_output): a command that
/// would exit 0 with its output lost (a full disk, a closed pipe) prints `<app>: cannot write standard output: <why>`
/// and exits 2. A non-zero status stands (its line is printed already; a lost output does not hide a defect).
inline int parse_and_run(CLI::App& app, int argc, char** argv);

/// Flushes std::cout and stdout; "" when every byte written to standard output got there, else why not.
inline std::string flush_standard_output() {
  errno = 0;
  std::cout.flush();
  const bool cout_bad = !std::cout.good();
  const bool flushed = std::fflush(stdout) == 0;
  const int err = errno;
  if (flushed && !cout_bad && !std::ferror(stdout)) return "";
  if (err) return std::strerror(err);
  // An earlier write failed (the stream's error flag) and its errno is gone: ask the descriptor again. A pipe or
  // socket nobody reads polls as an error (EPIPE); a device that refuses every write refuses an empty one too.
  pollfd p{STDOUT_FILENO, POLLOUT, 0};
  if (::poll(&p, 1, 0) == 1 && (p.revents & POLLERR)) return std::strerror(EPIPE);
  if (::write(STDOUT_FILENO, "", 0) < 0) return std::strerror(errno);
  return "an earlier write failed";
}

/// The validator of an option naming a file the command writes: refuses an empty value and a target that is not a
/// regular file (common/atomic_file.h, resolve_output_target) while the command line is parsed. The command still
/// claims its outputs (claim_output_paths) before it runs.
inline CLI::Validator output_file_option() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        try {
          resolve_output_target(path);
        } catch (const UsageError& e) {
          return e.what();
        }
        return "";
      },
      "FILE");
}

/// A command's failure: `line` on stderr, then exit `code` through parse_and_run (default 2, usage).
[[noreturn]] inline void fail_with(const std::string& line, int code = kExitUsage) {
  std::fprintf(stderr, "%s\n", line.c_str());
  throw CLI::RuntimeError(code);
}

namespace detail {
/// A command line that names no known subcommand where one is required (`fuseproof e2e bogus`): the line saying so,
/// naming the word and the known ones; "" when the words before the first option name known subcommands.
inline std::string unknown_subcommand_line(const CLI::App& app, int argc, char** argv) {
  const CLI::App* at = &app;
  std::string path = app.get_name();
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-') return "";
    const CLI::App* next = nullptr;
    std::string known;
    for (const CLI::App* sub : at->get_subcommands({})) {
      known += (known.empty() ? "" : ", ") + sub->get_name();
      if (sub->check_name(word)) next = sub;
    }
    if (!next) {
      if (at->get_require_subcommand_min() == 0 || known.empty()) return "";
      return path + ": unknown command '" + word + "' (known: " + known + ")";
    }
    at = next;
    path += " " + word;
  }
  return "";
}

inline int parse_and_run_unchecked(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string unknown = unknown_subcommand_line(app, argc, argv);
    std::fprintf(stderr, "%s\n", unknown.empty() ? (app.get_name() + ": " + e.what()).c_str() : unknown.c_str());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), e.what());
    return exit_status_of(e);
  }
  return kExitPass;
}
}  // namespace detail

inline int parse_and_run(CLI::App& app, int argc, char** argv) {
  std::signal(SIGPIPE, SIG_IGN);
  const int code = detail::parse_and_run_unchecked(app, argc, argv);
  const std::string lost = flush_standard_output();
  if (lost.empty() || code != kExitPass) return code;
  std::fprintf(stderr, "%s: cannot write standard output: %s\n", app.get_name().c_str(), lost.c_str());
  return kExitUsage;
}

}  // namespace fuseproof
