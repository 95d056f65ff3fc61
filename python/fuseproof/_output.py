"""_output.py: the one writer of every file the Python side writes: the rules of common/atomic_file.h.

- An empty path is refused.
- An existing target that is not a regular file (a directory, a device, a FIFO, a socket) is refused; nothing is
  created or replaced.
- A symbolic link is written through: resolved to its final target (os.path.realpath), which must be an existing
  regular file; the temporary file goes beside the target and os.replace() puts it over the target, so the link
  itself is never replaced. A dangling link is refused.
- Two outputs of one command on the same file are refused before anything is written (claim_output_paths).
- Atomic: a temporary file in the target's directory, fsync, os.replace(); on any failure the temporary file is
  removed, so no partial or empty file is left behind.

Every refusal and write error is an OutputError, one line naming the file (exit 2 in the command line).
It imports nothing from the package, so scripts/ can use it from a checkout without the extension.
"""

import os
import stat
import tempfile
import threading

__all__ = ["OutputError", "resolve_output_target", "claim_output_paths", "write_file_atomically"]


class OutputError(ValueError):
    """A file that cannot be written under the rules above; str() is the one-line reason."""


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISFIFO, "a FIFO"), (stat.S_ISSOCK, "a socket"))


def _refuse(path, why):
    raise OutputError("cannot write '%s': %s" % (path, why))


def _kind(mode):
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def resolve_output_target(path):
    """The file that writing `path` replaces: `path` itself (a regular file or a new one), or a symbolic link's final
    target (which must be a regular file). Raises OutputError for an empty path, a non-regular file, a dangling link."""
    path = os.fspath(path) if path is not None else ""
    if path == "":
        _refuse(path, "the path is empty (name a file)")
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return path  # a new file; a missing directory fails when the file is created
    except OSError as e:
        _refuse(path, e.strerror)
    target = path
    if stat.S_ISLNK(st.st_mode):
        target = os.path.realpath(path)
        try:
            st = os.stat(target)
        except FileNotFoundError:
            _refuse(path, "it is a symbolic link to a missing file (only a link to a regular file is written through)")
        except OSError as e:
            _refuse(path, e.strerror)
    if not stat.S_ISREG(st.st_mode):
        where = "" if target == path else " ('%s', the link's target)" % target
        _refuse(path, "it is %s%s (only a regular file is written)" % (_kind(st.st_mode), where))
    return target


_lock = threading.Lock()
_claimed = {}  # canonical path -> the option that claimed it


class OutputClaims:
    """The output paths a command holds until release() (or the end of a with block)."""

    def __init__(self, canonical):
        self._canonical = list(canonical)

    def release(self):
        with _lock:
            for c in self._canonical:
                _claimed.pop(c, None)
        self._canonical = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


def _canonical(target):
    return os.path.normpath(os.path.join(os.path.realpath(os.path.dirname(os.path.abspath(target))),
                                         os.path.basename(target)))


def claim_output_paths(outputs):
    """Claims every output of a command before it runs. `outputs`: (option, path) pairs; a path of None means the
    option was not given, and "" is refused. Each must resolve (resolve_output_target), its directory must take a new
    file (a temporary file is made there and removed), and no two may name one file, nor one another claim of this
    process holds. Raises OutputError naming the option; on a refusal nothing is claimed and nothing is left on disk."""
    wanted = []  # (canonical, option, path)
    for option, path in outputs:
        if path is None:
            continue
        try:
            target = resolve_output_target(path)
            fd, probe = tempfile.mkstemp(prefix=os.path.basename(target) + ".tmp.",
                                         dir=os.path.dirname(target) or ".")
            os.close(fd)
            os.unlink(probe)
        except OutputError as e:
            raise OutputError("%s: %s" % (option, e))
        except OSError as e:
            raise OutputError("%s: cannot write '%s': %s" % (option, path, e.strerror))
        canonical = _canonical(target)
        for c, other, _ in wanted:
            if c == canonical:
                raise OutputError("%s: cannot write '%s': it is also the %s output (give each output its own file)"
                                  % (option, path, other))
        wanted.append((canonical, option, path))
    with _lock:
        for canonical, option, path in wanted:
            if canonical in _claimed:
                raise OutputError("%s: cannot write '%s': it is also the %s output (give each output its own file)"
                                  % (option, path, _claimed[canonical]))
        for canonical, option, _ in wanted:
            _claimed[canonical] = option
    return OutputClaims(c for c, _, _ in wanted)


def write_file_atomically(path, data):
    """Replaces the file `path` names (resolve_output_target) with `data` (bytes or str, UTF-8) atomically. The new
    file keeps the mode of the one it replaces, or gets the one a plain open() would give."""
    target = resolve_output_target(path)
    if isinstance(data, str):
        data = data.encode("utf-8")
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except FileNotFoundError:
        mask = os.umask(0)
        os.umask(mask)
        mode = 0o666 & ~mask
    try:
        fd, tmp = tempfile.mkstemp(prefix=os.path.basename(target) + ".tmp.", dir=os.path.dirname(target) or ".")
    except OSError as e:
        _refuse(path, e.strerror)
    try:
        try:
            view = memoryview(data)
            while view:
                n = os.write(fd, view)
                view = view[n:]
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            _refuse(path, e.strerror or str(e))
        raise
