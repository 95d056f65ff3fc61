// subprocess.h: runs a command to completion and captures its exit status, stdout and stderr (CLI-level tests).
#pragma once

#include <string>
#include <vector>

namespace fuseproof::test {

struct CommandResult {
  int exit_code = -1;  ///< the exit status, or 128 + the signal that ended it
  std::string out, err;
  /// stderr's lines (without the final newline of each).
  std::vector<std::string> err_lines() const;
};

/// Runs argv[0] with argv (no shell), `env` ("NAME=value") added to this process's environment.
CommandResult run_command(const std::vector<std::string>& argv, const std::vector<std::string>& env = {});

}  // namespace fuseproof::test
