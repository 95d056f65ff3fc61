#!/usr/bin/env python3
"""run_battery.py: runs the bad-input battery (cases.py) against the binaries as built, one scratch folder per case.

Each case states its exit status, how many lines it puts on stderr (one for every non-zero status) and its effect on
the scratch folder: nothing created, nothing replaced (type, mode, inode, mtime, size, content hash and link target of
every entry before and after), save what the case names. A failing case prints one line that can be copy-pasted to
reproduce it, then its stderr; the run ends with `N passed, M failed`.

Usage: run_battery.py --bin-dir build/bin --python-path build/python --golden-dir golden --fixture DIR
                      [--group G] [--user root|nobody] [--only ID_REGEX] [--timeout S] [--list] [--self-test]
As root, --user nobody runs every command under setpriv as uid/gid 65534; as another user it exits 77 (SKIPPED).
"""

import argparse
import hashlib
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import cases as table  # noqa: E402  (the data table beside this file)

SKIP = 77
NOBODY = 65534
DROP = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups"]


# ---------------------------------------------------------------------------------------------------------------------
# Scratch folder: setup, snapshot, comparison

def make_entries(scratch, setup, ctx):
    """Creates the case's setup entries inside `scratch` (never outside: every path is relative to it)."""
    for step in setup:
        kind, rel = step[0], step[1]
        path = os.path.join(scratch, rel)
        if os.path.commonpath([os.path.realpath(os.path.dirname(path)), scratch]) != scratch:
            raise ValueError("setup path %s leaves the scratch folder" % rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if kind == "file":
            data = step[2] if len(step) > 2 else b""
            with open(path, "wb") as f:
                f.write(data.encode() if isinstance(data, str) else data)
        elif kind == "dir":
            os.makedirs(path, exist_ok=True)
        elif kind == "fifo":
            os.mkfifo(path, 0o666)
        elif kind == "chardev":  # ("chardev", name, major, minor): made here, never the real /dev node
            os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(step[2], step[3]))
        elif kind == "link":
            os.symlink(step[2], path)
        elif kind == "copy":  # ("copy", name, fixture-relative source)
            src = os.path.join(ctx["fixture"], step[2])
            if os.path.isdir(src):
                shutil.copytree(src, path, symlinks=True)
            else:
                shutil.copyfile(src, path)
        elif kind == "golden":  # ("golden", name): a copy of golden/<arch>/ as name/<arch>/
            for arch in sorted(os.listdir(ctx["golden_dir"])):
                src = os.path.join(ctx["golden_dir"], arch)
                if arch != "e2e" and os.path.isdir(src):
                    shutil.copytree(src, os.path.join(path, arch))
        elif kind == "truncate":  # ("truncate", name, bytes kept; negative: bytes cut)
            size = os.path.getsize(path)
            os.truncate(path, step[2] if step[2] >= 0 else size + step[2])
        elif kind == "flipbit":  # ("flipbit", name, byte offset, bit)
            with open(path, "r+b") as f:
                f.seek(step[2])
                b = f.read(1)[0]
                f.seek(step[2])
                f.write(bytes([b ^ (1 << step[3])]))
        elif kind == "remove":
            os.remove(path)
        elif kind == "json":  # ("json", name, function editing the loaded object in place)
            import json
            with open(path) as f:
                doc = json.load(f)
            step[2](doc, scratch)
            with open(path, "w") as f:
                json.dump(doc, f, indent=1)
        else:
            raise ValueError("unknown setup step %r" % (kind,))


def chown_tree(root, uid, gid):
    os.lchown(root, uid, gid)
    for d, dirs, files in os.walk(root):
        for n in dirs + files:
            os.lchown(os.path.join(d, n), uid, gid)


def describe(path, st):
    """What must not change about an entry: its type, mode, inode, mtime, size, link target and content."""
    d = {"type": stat.S_IFMT(st.st_mode), "mode": st.st_mode, "ino": st.st_ino, "mtime": st.st_mtime_ns,
         "size": st.st_size}
    if stat.S_ISLNK(st.st_mode):
        d["target"] = os.readlink(path)
    elif stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode):
        d["rdev"] = st.st_rdev
    elif stat.S_ISREG(st.st_mode):
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        d["sha256"] = h.hexdigest()
    return d


def snapshot(scratch):
    """Every entry under scratch (lstat: links are not followed; FIFOs and devices are never opened)."""
    snap = {}
    for d, dirs, files in os.walk(scratch):
        for n in dirs + files:
            p = os.path.join(d, n)
            snap[os.path.relpath(p, scratch)] = describe(p, os.lstat(p))
    return snap


def kind_name(t):
    return {stat.S_IFREG: "file", stat.S_IFDIR: "dir", stat.S_IFLNK: "symlink", stat.S_IFIFO: "fifo",
            stat.S_IFCHR: "chardev", stat.S_IFBLK: "blockdev", stat.S_IFSOCK: "socket"}.get(t, "?")


def fs_problems(before, after, creates, may_change):
    """The differences the case does not allow, as short phrases."""
    out = []
    for rel, b in sorted(before.items()):
        a = after.get(rel)
        if a is None:
            out.append("%s removed" % rel)
            continue
        if rel in may_change:
            if a["type"] != b["type"]:
                out.append("%s: %s became %s" % (rel, kind_name(b["type"]), kind_name(a["type"])))
            continue
        changed = [k for k in ("type", "mode", "ino", "mtime", "size", "target", "rdev", "sha256") if b.get(k) != a.get(k)]
        if changed and not (b["type"] == stat.S_IFDIR and set(changed) <= {"mtime", "size"}):
            what = ("%s became %s" % (kind_name(b["type"]), kind_name(a["type"])) if "type" in changed
                    else "changed (" + ", ".join(changed) + ")")
            out.append("%s %s" % (rel, what))
    for rel in sorted(set(after) - set(before)):
        if rel in creates:
            if after[rel]["type"] != stat.S_IFREG and not any(c.startswith(rel + "/") for c in creates):
                out.append("%s created as %s, expected a regular file" % (rel, kind_name(after[rel]["type"])))
            continue
        if any(c.startswith(rel + "/") for c in creates):
            continue
        out.append("%s created" % rel)
    for rel in sorted(creates):
        if rel not in after:
            out.append("%s not created" % rel)
    return out


# ---------------------------------------------------------------------------------------------------------------------
# Running one case

def substitute(argv, ctx, scratch):
    m = dict(ctx["vars"], scratch=scratch)
    return [re.sub(r"\{(\w+)\}", lambda x: m.get(x.group(1), x.group(0)), a) for a in argv]


def run_one(case, ctx, user, timeout):
    base = ctx["base"]
    scratch = os.path.realpath(tempfile.mkdtemp(prefix=case["id"].replace("/", "_")[:40] + ".", dir=base))
    os.chmod(scratch, 0o755)
    make_entries(scratch, case.get("setup", ()), ctx)
    if user == "nobody":
        chown_tree(scratch, NOBODY, NOBODY)
    argv = substitute(case["argv"], ctx, scratch)
    full_argv = (DROP if user == "nobody" else []) + argv
    before = snapshot(scratch)
    env = dict(ctx["env"])
    stdout_kind = case.get("stdout", "pipe")
    stdout_file = None
    sigpipe_ignored = False
    if stdout_kind == "pipe":
        stdout_target = subprocess.PIPE  # never the real /dev/null: a link to /proc/self/fd/1 must not reach it
    elif stdout_kind.startswith("path:"):  # a node made in setup (e.g. a /dev/full-like device)
        stdout_file = open(os.path.join(scratch, stdout_kind[5:]), "wb", buffering=0)
        stdout_target = stdout_file
    elif stdout_kind == "closed-pipe":  # the reader went away; SIGPIPE ignored, so a write gets EPIPE
        read_end, write_end = os.pipe()
        os.close(read_end)
        stdout_target = write_end
        sigpipe_ignored = True
    else:
        raise ValueError("unknown stdout %r" % stdout_kind)

    def preexec():
        if sigpipe_ignored:
            signal.signal(signal.SIGPIPE, signal.SIG_IGN)

    t0 = time.monotonic()
    timed_out = False
    try:
        p = subprocess.Popen(full_argv, cwd=scratch, env=env, stdin=subprocess.DEVNULL, stdout=stdout_target,
                             stderr=subprocess.PIPE, start_new_session=True, preexec_fn=preexec)
    finally:
        if stdout_file:
            stdout_file.close()
        if stdout_kind == "closed-pipe":
            os.close(stdout_target)
    try:
        _, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _, err = p.communicate()
    seconds = time.monotonic() - t0
    # A command may have left a child behind in its group: end it before looking at the folder.
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    after = snapshot(scratch)
    err = err.decode("utf-8", "replace")
    got = {"status": p.returncode, "stderr_lines": len(err.splitlines()), "timed_out": timed_out}
    problems = judge(case, got, err, before, after, scratch)
    if not (problems and ctx.get("keep")):
        shutil.rmtree(scratch, ignore_errors=True)
    return problems, argv, got, err, seconds, scratch


def expectations(case):
    """The accepted outcomes: the case's own, or each of its `either` alternatives."""
    alts = case.get("either") or [{}]
    out = []
    for alt in alts:
        e = {k: case[k] for k in ("status", "stderr_lines", "stderr", "creates", "may_change") if k in case}
        e.update(alt)
        if "stderr_lines" not in e:
            e["stderr_lines"] = 1 if e["status"] != 0 else None
        out.append(e)
    return out


def judge(case, got, err, before, after, scratch):
    """[] when an accepted outcome matches, else the mismatches against the first one."""
    best = None
    for e in expectations(case):
        p = []
        if got["timed_out"]:
            p.append("timed out")
        if got["status"] != e["status"]:
            p.append("status %s, expected %d" % (signal_name(got["status"]), e["status"]))
        if e["stderr_lines"] is not None and got["stderr_lines"] != e["stderr_lines"]:
            p.append("%d stderr lines, expected %d" % (got["stderr_lines"], e["stderr_lines"]))
        if e.get("stderr") and not re.search(e["stderr"].replace("{scratch}", re.escape(scratch)), err):
            p.append("stderr does not match /%s/" % e["stderr"])
        p += fs_problems(before, after, set(e.get("creates", ())), set(e.get("may_change", ())))
        if not p:
            return []
        if best is None:
            best = p
    return best


def signal_name(code):
    if code is not None and code < 0:
        try:
            return "killed by %s" % signal.Signals(-code).name
        except ValueError:
            return "killed by signal %d" % -code
    return str(code)


def setup_text(case):
    """The setup steps in a few words: what to make in the scratch folder before running the command."""
    words = []
    for st in case.get("setup", ()):
        if st[0] == "json":
            words.append("json %s (%s)" % (st[1], getattr(st[2], "__name__", "edit")))
        elif st[0] == "file":
            words.append("file %s (%d bytes)" % (st[1], len(st[2]) if len(st) > 2 else 0))
        else:
            words.append(" ".join(str(x) for x in st))
    return ", ".join(words) or "none"


def repro(argv, case, user):
    s = " ".join(shlex.quote(a) for a in argv)
    out = case.get("stdout", "pipe")
    if out.startswith("path:"):
        s += " > " + out[5:]
    elif out == "closed-pipe":
        s = "(trap '' PIPE; %s) | true" % s
    if user == "nobody":
        s = " ".join(DROP) + " " + s
    return s


# ---------------------------------------------------------------------------------------------------------------------
# Fixture and main

def make_context(a):
    # Every command runs in its scratch folder: paths given relative to here are made absolute first.
    for k in ("bin_dir", "golden_dir", "fixture", "plugin_dir", "exit_plugin"):
        if getattr(a, k):
            setattr(a, k, os.path.abspath(getattr(a, k)))
    a.python_path = ":".join(os.path.abspath(p) for p in a.python_path.split(":") if p)
    bins = {n: os.path.join(a.bin_dir, n) for n in ("fuseproof", "fuseproof-audit", "fuseproof-e2e", "fuseproof-video")}
    bins = {n: (p if os.access(p, os.X_OK) else "") for n, p in bins.items()}
    v = {"fuseproof": bins["fuseproof"], "fuseproof_audit": bins["fuseproof-audit"], "fuseproof_e2e": bins["fuseproof-e2e"],
         "fuseproof_video": bins["fuseproof-video"], "python": a.python if a.python_path else "", "fixture": a.fixture or "",
         "golden_src": a.golden_dir, "plugin_dir": a.plugin_dir or "", "exit_plugin": a.exit_plugin or ""}
    base = tempfile.mkdtemp(prefix="fuseproof_battery.")
    os.chmod(base, 0o755)
    home = os.path.join(base, "home")  # outside every scratch folder: caches a tool writes do not count as effects
    os.makedirs(home)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8", "HOME": home,
           "XDG_CACHE_HOME": os.path.join(home, ".cache"), "PYTHONDONTWRITEBYTECODE": "1",
           "PYTHONPATH": a.python_path or "", "TORCHINDUCTOR_CACHE_DIR": os.path.join(home, "inductor"),
           "FUSEPROOF_GOLDEN_DIR": a.golden_dir}
    if os.environ.get("FUSEPROOF_GOLDEN_BUILD_DIR"):
        env["FUSEPROOF_GOLDEN_BUILD_DIR"] = os.environ["FUSEPROOF_GOLDEN_BUILD_DIR"]
    if os.geteuid() == 0:
        chown_tree(home, NOBODY, NOBODY)
    return {"vars": v, "env": env, "base": base, "fixture": a.fixture or "", "golden_dir": a.golden_dir,
            "bins": bins}


def nobody_can_run(ctx):
    """Whether uid 65534 can reach the binaries, the fixture and the Python package (the build tree's parents)."""
    paths = [ctx["bins"]["fuseproof"], ctx["fixture"], ctx["golden_dir"]] + ctx["env"]["PYTHONPATH"].split(":")
    for p in paths:
        if p and subprocess.run(DROP + ["test", "-r", p], stdout=subprocess.DEVNULL).returncode != 0:
            return p
    return None


def make_fixture(ctx):
    """The e2e run (small config, CPU, RGB24 and Y4M frames) and the golden file blessed from it."""
    d = ctx["fixture"]
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    fp = ctx["bins"]["fuseproof"]
    for argv in ([fp, "e2e", "run", "--config", "small", "--device", "cpu", "--modes", "lossless,high,high-eager",
                  "--formats", "rgb24,y4m", "--out", os.path.join(d, "run")],
                 [fp, "e2e", "bless", "--run-dir", os.path.join(d, "run"), "--arch", "sm_90", "--out",
                  os.path.join(d, "golden.json")]):
        print("+ " + " ".join(shlex.quote(x) for x in argv))
        r = subprocess.run(argv, stdout=subprocess.DEVNULL)
        if r.returncode != 0:
            print("fixture: exit %d" % r.returncode)
            return 1
    print("fixture: %s" % d)
    return 0


def sh(script):
    return ["sh", "-c", script]


# The harness's own negative controls: each way a command can break its promise, which the driver must fail, and
# the controls it must pass (a device that refuses writes, a pipe whose reader went away).
SELF_TEST = [
    (True, {"id": "control", "argv": sh("echo 'x: --opt bad' >&2; exit 2"), "status": 2, "stderr": "--opt"}),
    (True, {"id": "control_full_device", "argv": sh("printf hi 2>/dev/null || { echo 'write failed' >&2; exit 2; }"),
            "status": 2, "setup": [("chardev", "full", 1, 7)], "stdout": "path:full"}),
    (True, {"id": "control_closed_pipe", "argv": sh("printf hi 2>/dev/null || { echo 'write failed' >&2; exit 2; }"),
            "status": 2, "stdout": "closed-pipe"}),
    (True, {"id": "control_link_written_through", "argv": sh("echo new > {scratch}/l"), "status": 0,
            "setup": [("file", "t", "old\n"), ("link", "l", "t")],
            "either": [dict(status=0, may_change=["t"]), dict(status=2)]}),
    (False, {"id": "wrong_status", "argv": sh("echo e >&2; exit 0"), "status": 2}),
    (False, {"id": "silent_nonzero", "argv": sh("exit 2"), "status": 2}),
    (False, {"id": "two_stderr_lines", "argv": sh("printf 'a\\nb\\n' >&2; exit 2"), "status": 2}),
    (False, {"id": "stderr_names_other", "argv": sh("echo other >&2; exit 2"), "status": 2, "stderr": "--opt"}),
    (False, {"id": "creates_file", "argv": sh(": > {scratch}/r.json.tmp.1; echo e >&2; exit 2"), "status": 2}),
    (False, {"id": "replaces_device", "argv": sh("rm {scratch}/full; : > {scratch}/full; echo e >&2; exit 2"),
             "status": 2, "setup": [("chardev", "full", 1, 7)]}),
    (False, {"id": "replaces_link", "argv": sh("rm {scratch}/l; echo new > {scratch}/l"), "status": 0,
             "setup": [("file", "t", "old\n"), ("link", "l", "t")],
             "either": [dict(status=0, may_change=["t"]), dict(status=2)]}),
    (False, {"id": "rewrites_content", "argv": sh("printf bbbb > {scratch}/a; echo e >&2; exit 2"), "status": 2,
             "setup": [("file", "a", "aaaa")]}),
    (False, {"id": "new_inode_same_content", "argv": sh("cd {scratch} && cp -p a b && mv b a; echo e >&2; exit 2"),
             "status": 2, "setup": [("file", "a", "aaaa")]}),
    (False, {"id": "touches_mtime", "argv": sh("touch -d 2001-01-01 {scratch}/a; echo e >&2; exit 2"), "status": 2,
             "setup": [("file", "a", "aaaa")]}),
    (False, {"id": "removes_file", "argv": sh("rm {scratch}/a; echo e >&2; exit 2"), "status": 2,
             "setup": [("file", "a", "aaaa")]}),
    (False, {"id": "fifo_replaced", "argv": sh("rm {scratch}/f; mkdir {scratch}/f; echo e >&2; exit 2"), "status": 2,
             "setup": [("fifo", "f")]}),
    (False, {"id": "hangs", "argv": sh("sleep 30"), "status": 2, "timeout": 1}),
    (False, {"id": "ignores_full_device", "argv": sh("printf hi 2>/dev/null; exit 0"), "status": 2,
             "setup": [("chardev", "full", 1, 7)], "stdout": "path:full"}),
]


def self_test(ctx):
    bad = 0
    for should_pass, c in SELF_TEST:
        if os.geteuid() != 0 and any(st[0] == "chardev" for st in c.get("setup", ())):
            print("SKIPPED %s: its device node needs root to make (mknod)" % c["id"])
            continue
        problems, argv, got, err, _, _ = run_one(c, ctx, "root", c.get("timeout", 10))
        ok = (not problems) == should_pass
        bad += not ok
        print("%s %s: %s (%s)" % ("ok  " if ok else "BAD ", c["id"], "passes" if not problems else "fails",
                                 "; ".join(problems) or "as expected"))
    print("self-test: %d cases misjudged of %d" % (bad, len(SELF_TEST)))
    return 1 if bad else 0


def select(a):
    chosen = []
    for c in table.CASES:
        if a.group and c["group"] != a.group:
            continue
        if a.only and not re.search(a.only, c["id"]):
            continue
        chosen.append(c)
    return chosen


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin-dir", required=True)
    ap.add_argument("--python", default="/usr/bin/python3", help="the interpreter with torch for the front end")
    ap.add_argument("--python-path", default="", help="build/python (empty: the Python cases are skipped)")
    ap.add_argument("--golden-dir", required=True, help="the source tree's golden/")
    ap.add_argument("--fixture", default="", help="folder made by make_fixture.sh: an e2e run, its golden, videos")
    ap.add_argument("--plugin-dir", default="", help="build/lib: the built-in plugins and the host mutants")
    ap.add_argument("--exit-plugin", default="", help="the plugin whose call ends the process with status 0")
    ap.add_argument("--group", help="one command group: " + ", ".join(table.GROUPS))
    ap.add_argument("--user", choices=("root", "nobody"), default="root",
                    help="root: as this process; nobody: every command as uid 65534 (needs root, else SKIPPED)")
    ap.add_argument("--only", help="regex over case ids")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per case")
    ap.add_argument("--list", action="store_true", help="print the case ids and argv, run nothing")
    ap.add_argument("--keep", action="store_true",
                    help="keep the scratch folder of every failing case, so that its printed command runs as it is")
    ap.add_argument("--make-fixture", action="store_true", help="write the --fixture folder and exit")
    ap.add_argument("--self-test", action="store_true", help="the harness's negative controls (no product binary)")
    a = ap.parse_args()
    if a.make_fixture or a.self_test:
        ctx = make_context(a)
        try:
            return make_fixture(ctx) if a.make_fixture else self_test(ctx)
        finally:
            shutil.rmtree(ctx["base"], ignore_errors=True)

    chosen = select(a)
    if a.list:
        counts = {}
        for c in chosen:
            print("%-55s %s" % (c["id"], " ".join(c["argv"])))
            counts[table.class_of(c)] = counts.get(table.class_of(c), 0) + 1
        for k, n in sorted(counts.items()):
            print("%-25s %d" % (k, n))
        print("%d cases" % len(chosen))
        return 0
    if not chosen:
        print("no case selected (group %s, only %s)" % (a.group, a.only))
        return 1
    if a.user == "nobody" and os.geteuid() != 0:
        print("SKIPPED: the unprivileged pass needs root to drop to uid %d; this runs as uid %d, which the root pass "
              "already covers" % (NOBODY, os.geteuid()))
        return SKIP
    ctx = make_context(a)
    ctx["keep"] = a.keep
    try:
        if a.user == "nobody":
            blocked = nobody_can_run(ctx)
            if blocked:
                print("SKIPPED: uid %d cannot read %s (a parent folder is private); the unprivileged pass needs a "
                      "build tree others can read" % (NOBODY, blocked))
                return SKIP
        passed = failed = 0
        t0 = time.monotonic()
        for c in chosen:
            wanted = set(c.get("needs", ())) | ({"fixture"} if any(st[0] == "copy" for st in c.get("setup", ())) else set())
            wanted |= set(c.get("needs", ())) | set(re.findall(r"{(\w+)}", " ".join(c["argv"]))) - {"scratch"}
            missing = sorted(k for k in wanted if not ctx["vars"].get(k))
            if missing:
                print("SKIPPED %s: no %s given" % (c["id"], ", ".join(missing)))
                continue
            if os.geteuid() != 0 and any(st[0] == "chardev" for st in c.get("setup", ())):
                print("SKIPPED %s: its device node needs root to make (mknod)" % c["id"])
                continue
            problems, argv, got, err, seconds, _ = run_one(c, ctx, a.user, c.get("timeout", a.timeout))
            if not problems:
                passed += 1
                continue
            failed += 1
            print("FAIL %s [%s] %s | setup: %s | expected status %s, got %s; %s | %s" % (
                c["id"], a.user, repro(argv, c, a.user), setup_text(c),
                "/".join(str(e["status"]) for e in expectations(c)), signal_name(got["status"]),
                "; ".join(p for p in problems if not p.startswith("status ")) or "-", "stderr: " + (err.strip().replace("\n", "\\n")[:2000] or "(empty)")))
        who = "uid %d" % (NOBODY if a.user == "nobody" else os.geteuid())
        print("%s, %s: %d passed, %d failed (%.1f s)" % (a.group or "all groups", who, passed, failed,
                                                       time.monotonic() - t0))
        if failed:
            print("one case again, its scratch folder kept: %s %s --keep --only '^ID$'" % (
                sys.executable, " ".join(shlex.quote(x) for x in sys.argv)))
        return 1 if failed else 0
    finally:
        if not a.keep:
            shutil.rmtree(ctx["base"], ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
