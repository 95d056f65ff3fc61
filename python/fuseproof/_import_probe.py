"""_import_probe.py: imports the module of --callable MODULE:FUNCTION in a child interpreter first.

A module that exits while it is imported (sys.exit, os._exit, raise SystemExit) or raises would otherwise end the
audit's own process before it gives a verdict, with whatever status the module chose (0 reads as a pass). The child
starts before this process imports torch, so the two imports overlap.
"""

import json
import os
import subprocess
import sys

_CHILD = """
import importlib, json, os, sys
fd = int(sys.argv[1])
sys.path[:0] = json.loads(sys.argv[2])
def say(**what):
    os.write(fd, json.dumps(what).encode())
    os._exit(0)
try:
    importlib.import_module(sys.argv[3])
except SystemExit as e:
    say(exit=e.code if isinstance(e.code, int) or e.code is None else str(e.code))
except BaseException as e:
    text = str(e).strip().splitlines()
    say(error=type(e).__name__ + (": " + text[0] if text else ""))
say(ok=True)
"""


def exit_words(code):
    """"status 0" for the code of a SystemExit (None is 0; a message is status 1, as Python exits)."""
    if code is None:
        return "status 0"
    if isinstance(code, int):
        return "status %d" % code
    return "status 1 (%s)" % code


class Probe:
    """The child importing MODULE of `spec`; finish() waits for it."""

    def __init__(self, spec):
        self.spec = spec
        self.module = spec.partition(":")[0]
        self.child = None
        if not self.module:
            return  # (load_callable refuses the spec itself)
        path = [os.path.abspath(p) if p else os.getcwd() for p in sys.path]
        self.read, write = os.pipe()
        try:
            self.child = subprocess.Popen([sys.executable, "-c", _CHILD, str(write), json.dumps(path), self.module],
                                          pass_fds=(write,), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                          stderr=subprocess.DEVNULL)
        except OSError as e:
            os.close(self.read)
            raise ValueError("--callable %s: cannot start %s to import %s: %s" % (spec, sys.executable, self.module, e))
        finally:
            os.close(write)

    def finish(self):
        """Returns when the import completed in the child; ValueError (one line naming the module) otherwise."""
        if self.child is None:
            return
        with os.fdopen(self.read, "rb") as f:
            said = f.read()
        status = self.child.wait()
        try:
            what = json.loads(said.decode()) if said else {}
        except ValueError:
            what = {}
        if what.get("ok"):
            return
        if "error" in what:
            raise ValueError("--callable %s: cannot import %s: %s" % (self.spec, self.module, what["error"]))
        if "exit" in what:
            how = "exited with " + exit_words(what["exit"])
        elif status < 0:
            how = "was killed by signal %d" % -status
        else:
            how = "exited with status %d" % status
        raise ValueError("--callable %s: importing '%s' %s before the audit ran" % (self.spec, self.module, how))

    def discard(self):
        """Ends a child that finish() never waited for (the command was refused before it loaded the subject)."""
        if self.child is not None and self.child.poll() is None:
            self.child.kill()
            self.child.wait()
            os.close(self.read)
