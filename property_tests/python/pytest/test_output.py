"""Tests of fuseproof._output (the Python side's one writer, common/atomic_file.h's rules) and of the front end's
report paths and standard output, each rule with a control that writes. Targets are made in a scratch folder only:
the character device is a node 1:7 (what /dev/full is) made with mknod, skipped where that is not permitted."""

import os
import socket
import stat
import subprocess
import sys

import pytest

from fuseproof import _output


def _full_device(path):
    try:
        os.mknod(str(path), 0o666 | stat.S_IFCHR, os.makedev(1, 7))
        return True
    except (PermissionError, OSError):
        return False


def _kind(path):
    return stat.S_IFMT(os.lstat(str(path)).st_mode)


def test_empty_path_refused():
    with pytest.raises(_output.OutputError, match="the path is empty"):
        _output.write_file_atomically("", "x")
    with pytest.raises(_output.OutputError, match="--json: cannot write '': the path is empty"):
        _output.claim_output_paths([("--json", "")])


def test_non_regular_targets_refused_and_untouched(tmp_path):
    (tmp_path / "a_directory").mkdir()
    os.mkfifo(str(tmp_path / "a_fifo"))
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "a_socket"))
    sock.close()
    device = _full_device(tmp_path / "full")
    before = sorted(os.listdir(str(tmp_path)))
    cases = [("a_directory", "a directory"), ("a_fifo", "a FIFO"), ("a_socket", "a socket")]
    if device:
        cases.append(("full", "a character device"))
    for name, kind in cases:
        with pytest.raises(_output.OutputError, match="cannot write '.*%s': it is %s" % (name, kind)):
            _output.write_file_atomically(str(tmp_path / name), "must not be written")
        with pytest.raises(_output.OutputError, match="--json: cannot write"):
            _output.claim_output_paths([("--json", str(tmp_path / name))])
    assert sorted(os.listdir(str(tmp_path))) == before
    assert _kind(tmp_path / "a_fifo") == stat.S_IFIFO
    if device:
        assert _kind(tmp_path / "full") == stat.S_IFCHR
    # The control: a regular file beside them is written.
    _output.write_file_atomically(str(tmp_path / "regular"), "written")
    assert (tmp_path / "regular").read_text() == "written"
    if not device:
        pytest.skip("mknod not permitted here: the character-device case did not run")


def test_symlink_written_through_link_kept(tmp_path):
    (tmp_path / "target.json").write_text("previous")
    os.symlink("target.json", str(tmp_path / "link.json"))
    os.symlink("link.json", str(tmp_path / "link_to_link.json"))
    _output.write_file_atomically(str(tmp_path / "link_to_link.json"), "through two links")
    assert os.path.islink(str(tmp_path / "link.json")) and os.path.islink(str(tmp_path / "link_to_link.json"))
    assert (tmp_path / "target.json").read_text() == "through two links"
    os.symlink("missing.json", str(tmp_path / "dangling.json"))
    with pytest.raises(_output.OutputError, match="symbolic link to a missing file"):
        _output.write_file_atomically(str(tmp_path / "dangling.json"), "x")
    assert not (tmp_path / "missing.json").exists()
    assert sorted(os.listdir(str(tmp_path))) == ["dangling.json", "link.json", "link_to_link.json", "target.json"]


def test_same_path_claimed_twice_refused(tmp_path):
    r = str(tmp_path / "r.json")
    (tmp_path / "sub").mkdir()
    (tmp_path / "t.json").write_text("previous")
    os.symlink("t.json", str(tmp_path / "alias.json"))
    for second in (r, str(tmp_path / "sub" / ".." / "r.json")):
        with pytest.raises(_output.OutputError, match="--junit: cannot write .*it is also the --json output"):
            _output.claim_output_paths([("--json", r), ("--junit", second)])
    with pytest.raises(_output.OutputError, match="it is also the --json output"):
        _output.claim_output_paths([("--json", str(tmp_path / "t.json")), ("--report", str(tmp_path / "alias.json"))])
    assert sorted(os.listdir(str(tmp_path))) == ["alias.json", "sub", "t.json"]
    # The control: distinct files are claimed (None: not given); held, a second claim is refused; released, accepted.
    with _output.claim_output_paths([("--json", r), ("--junit", str(tmp_path / "r.xml")), ("--report", None)]):
        with pytest.raises(_output.OutputError):
            _output.claim_output_paths([("--out", r)])
    _output.claim_output_paths([("--out", r)]).release()


def test_failed_write_leaves_no_file(tmp_path):
    # A write error (EFBIG under a file-size limit, in a child): no file, no temporary, the previous file intact.
    (tmp_path / "old.bin").write_text("previous")
    code = ("import resource, signal, sys; from fuseproof import _output\n"
            "signal.signal(signal.SIGXFSZ, signal.SIG_IGN); resource.setrlimit(resource.RLIMIT_FSIZE, (16, 16))\n"
            "n = 0\n"
            "for p in sys.argv[1:]:\n"
            "    try: _output.write_file_atomically(p, b'x' * 4096)\n"
            "    except _output.OutputError: n += 1\n"
            "sys.exit(0 if n == 2 else 1)\n")
    subprocess.run([sys.executable, "-c", code, str(tmp_path / "fresh.bin"), str(tmp_path / "old.bin")], check=True)
    assert sorted(os.listdir(str(tmp_path))) == ["old.bin"]
    assert (tmp_path / "old.bin").read_text() == "previous"
    _output.write_file_atomically(str(tmp_path / "fresh.bin"), b"x" * 4096)  # the control
    assert (tmp_path / "fresh.bin").stat().st_size == 4096


# --- The front end: python3 -m fuseproof audit.
_AUDIT = [sys.executable, "-m", "fuseproof", "audit", "--callable", "cpu_subjects:correct", "--dtype", "bf16",
          "--backend", "emulated", "--tanh-model", "exact", "--only", "rejection", "--no-isolation"]  # seconds


def _run(args, stdout=subprocess.PIPE):
    # SIGPIPE at its default (as a shell gives it); Python ignores it in the child anyway.
    return subprocess.run(args, stdout=stdout, stderr=subprocess.PIPE, universal_newlines=True)


def test_cli_same_path_for_two_reports_refused(tmp_path):
    x = str(tmp_path / "x")
    r = _run(_AUDIT + ["--json", x, "--report", x, "--junit", x])
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "it is also the" in r.stderr, r.stderr
    assert os.listdir(str(tmp_path)) == []
    r = _run(_AUDIT + ["--json", ""])
    assert r.returncode == 2 and "the path is empty" in r.stderr, r.stderr
    os.mkfifo(str(tmp_path / "fifo"))
    r = _run(_AUDIT + ["--report", str(tmp_path / "fifo")])
    assert r.returncode == 2 and "it is a FIFO" in r.stderr, r.stderr
    assert os.listdir(str(tmp_path)) == ["fifo"] and _kind(tmp_path / "fifo") == stat.S_IFIFO


def test_cli_standard_output_checked(tmp_path):
    ok = _run(_AUDIT + ["--json", str(tmp_path / "r.json")])  # the control
    assert ok.returncode == 0, ok.stderr
    assert "verdict: PASS" in ok.stdout and (tmp_path / "r.json").stat().st_size > 0
    read, write = os.pipe()
    os.close(read)
    try:
        r = _run(_AUDIT, stdout=write)
    finally:
        os.close(write)
    assert r.returncode == 2, r.stderr
    assert r.stderr.count("\n") == 1 and "cannot write standard output" in r.stderr, r.stderr
    if _full_device(tmp_path / "full"):
        with open(str(tmp_path / "full"), "w") as full:
            r = _run(_AUDIT, stdout=full)
        assert r.returncode == 2, r.stderr
        assert r.stderr.count("\n") == 1 and "cannot write standard output: No space left on device" in r.stderr
        assert _kind(tmp_path / "full") == stat.S_IFCHR
