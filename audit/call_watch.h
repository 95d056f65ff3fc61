// call_watch.h: the heartbeat a check-class child sends its parent around every call into the subject, so a fault or
// a hang is reported with the call that caused it.
#pragma once

#include <string>

namespace fuseproof::audit {

/// Environment variable holding the file descriptor the child writes its heartbeat to (absent: no heartbeat).
inline constexpr const char* kProgressFdEnv = "FUSEPROOF_AUDIT_PROGRESS_FD";

/// Set by the check classes before each call: what the call is for (the probe, the case), in words.
void watch_label(const std::string& label);
/// Written by the runners right before the subject runs: the label plus the call's shape, dtype and pointer offsets.
void watch_begin(const std::string& call);
/// Written when the subject has returned and its work has completed (stream synchronised).
void watch_end();
/// The last label (for records made in-process).
const std::string& watch_current_label();

}  // namespace fuseproof::audit
