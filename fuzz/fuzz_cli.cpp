// fuzz_cli.cpp: the `fuseproof` command-line parser (every subcommand this build has, cli/fuseproof_app.h) on argument
// lists made from the input (split at NUL and newline bytes): parsed or refused with CLI11's one-line error or our own,
// never a crash. The commands themselves never run: only parsing and the options' own checks.
#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/fuseproof_app.h"
#include "common/cli_exit.h"

namespace {

/// Thrown by the root app's parse-complete callback, which CLI11 runs after every option and subcommand is parsed and
/// checked and before any subcommand's own callback: the commands never run. (Removing their callbacks instead would
/// free the option storage that those callbacks own.)
struct ParsedOnly {};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args = {"fuseproof"};
  std::string cur;
  for (size_t i = 0; i < size && args.size() < 64; ++i) {
    if (data[i] == 0 || data[i] == '\n') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += char(data[i]);
    }
  }
  if (!cur.empty()) args.push_back(cur);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  const auto app = fuseproof::cli::make_fuseproof_app();
  app->parse_complete_callback([] { throw ParsedOnly(); });
  try {
    app->parse(int(argv.size()), argv.data());
  } catch (const ParsedOnly&) {
    // parsed and accepted: the command would run now
  } catch (const CLI::Error&) {
    // CLI11's refusal (or --help): parse_and_run prints it, or the unknown-subcommand line, in one line and exits 2
    // (0 for --help).
    const std::string unknown = fuseproof::detail::unknown_subcommand_line(*app, int(argv.size()), argv.data());
    if (unknown.find('\n') != std::string::npos) __builtin_trap();
  } catch (const std::exception& e) {
    const std::string m = e.what();
    if (m.find('\n') != std::string::npos) __builtin_trap();
  }
  return 0;
}
