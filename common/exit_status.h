// exit_status.h: the one exit-status policy of every fuseproof command, and the errors that carry each status.
#pragma once

#include <stdexcept>
#include <string>

namespace fuseproof {

/// Exit statuses, the same for every command (README, "Exit status").
enum ExitStatus : int {
  kExitPass = 0,        ///< everything checked passed
  kExitFail = 1,        ///< a defect of the subject: a mismatch, a fault, a crash, a hang
  kExitUsage = 2,       ///< bad arguments, or a setup error (a plugin that cannot be loaded, no device)
  kExitIncomplete = 3,  ///< evidence missing: golden data absent or unreadable; the verdict is INCOMPLETE, never PASS
  kExitCorrupt = 4,     ///< a data file is corrupt or foreign: wrong size, SHA-256 differs from provenance, truncated
};

/// Bad arguments or setup: exit 2. what() is the one-line message.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// Golden data (or other evidence) that a verdict needs is missing or unreadable: exit 3.
struct MissingDataError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// A data file exists but is corrupt or belongs to something else: exit 4.
struct CorruptDataError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The status for an exception escaping a command: MissingDataError 3, CorruptDataError 4, anything else 2.
inline int exit_status_of(const std::exception& e) {
  if (dynamic_cast<const MissingDataError*>(&e)) return kExitIncomplete;
  if (dynamic_cast<const CorruptDataError*>(&e)) return kExitCorrupt;
  return kExitUsage;
}

}  // namespace fuseproof
