// audit_isolation.h: runs one piece of the audit in a child process and watches it: a crash, an abort or a call into
// the subject that outlives its time limit ends the child, never the auditor.
#pragma once

#include <string>
#include <vector>

namespace fuseproof::audit {

struct ChildOutcome {
  int exit_code = -1;        ///< the child's exit status when it exited
  int signal = 0;            ///< the signal that ended it (SIGKILL after a time-out)
  bool timed_out = false;    ///< a call into the subject ran past the call limit
  bool stalled = false;      ///< no heartbeat for the stall limit outside any call
  std::string last_call;     ///< the call in flight when it ended, from the heartbeat ("" when none)
  double call_seconds = 0;   ///< how long that call had run
  std::string output_tail;   ///< the last lines of its stdout and stderr
  double seconds = 0;
};

/// Spawns argv (argv[0] a path) in a process group of its own with its stdout and stderr to `log_path` and a heartbeat
/// pipe (call_watch.h), and waits for it. The whole group is killed when a call lasts over `call_timeout_s` or when
/// nothing is heard for `stall_timeout_s` outside a call. Throws std::runtime_error when it cannot be started.
ChildOutcome run_child(const std::vector<std::string>& argv, const std::string& log_path, double call_timeout_s,
                       double stall_timeout_s);

/// The executable that runs an audit's children (the describe child, each class, each mutant): this process's own, or
/// the `fuseproof-audit` beside it. `fuseproof` links libtorch for e2e, and libtorch's start-up (operator registration)
/// costs about 0.6 s a process on a 2-core machine, paid by every one of the main job's ~280 children;
/// `fuseproof-audit` runs the same audit code without it. It is taken only when both executables are at least as new
/// as the audit library they were linked from (a partial rebuild that relinked one of them leaves this one), and never
/// when that library is not where the build put it (an installed tree). FUSEPROOF_AUDIT_CHILD=self forces this one.
std::string audit_child_exe();

/// The environment run_child gives a child: the parent's (`parent_env`, null-terminated), without any heartbeat
/// variables of its own parent, with the heartbeat descriptor and this parent's pid, and glibc's malloc told to keep
/// large blocks in its heap (MALLOC_MMAP_THRESHOLD_ and MALLOC_TRIM_THRESHOLD_ at 2^31 - 1, unless the parent sets
/// either or GLIBC_TUNABLES): a class calls the subject on blocks of one size (the domain's 32 MB grids, 256 of them
/// a dtype), and each freed block's pages would otherwise go back to the kernel and be zeroed again on the next
/// allocation (docs/PERFORMANCE.md, The domain's images). A child is one class and exits, so nothing accumulates.
std::vector<std::string> child_environment(char** parent_env, int progress_fd, long parent_pid);

/// "signal 11 (SIGSEGV)", "signal 6 (SIGABRT)", ...
std::string signal_description(int sig);

/// In a child run by run_child: SIGKILL to this process when the parent that started it ends, so that an auditor
/// killed from outside (a timeout, ^C) does not leave its class running; exits at once when the parent is gone already.
void die_with_parent();

}  // namespace fuseproof::audit
