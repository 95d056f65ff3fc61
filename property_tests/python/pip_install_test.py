"""pip_install_test.py: pip installs the checkout (pyproject.toml, setup.py) offline into a fresh venv and runs a kernel
repository's pytest suite through the pytest11 entry point: no conftest.py, no PYTHONPATH.

Usage: pip_install_test.py SOURCE_DIR BUILD_DIR USER_SUITE_DIR SUBJECTS_FILE. The install reuses BUILD_DIR
(FUSEPROOF_BUILD_DIR), so it compiles nothing when the tree is built. Negative controls: a venv without the install
cannot import the package nor take --fuseproof-scope; without torch, and for an interpreter whose extension is not
there, the installed package says so in one line that names the fix.
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SOURCE, BUILD, USER_SUITE, SUBJECTS = sys.argv[1:5]
failures = []


def run(what, argv, cwd, env=None, expect=0, match=None, one_line_stderr=False):
    """Runs argv; records a failure unless it exits `expect` and its output matches `match`. Returns the output."""
    t0 = time.monotonic()
    p = subprocess.run(argv, cwd=cwd, env=env or ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = p.stdout + p.stderr
    print("== %s: exit %d in %.1f s: %s" % (what, p.returncode, time.monotonic() - t0, " ".join(argv)))
    print(out[-3000:])
    if p.returncode != expect:
        failures.append("%s: expected exit %d, got %d" % (what, expect, p.returncode))
    if match and not re.search(match, out, re.S):
        failures.append("%s: output does not match %r" % (what, match))
    if one_line_stderr and len(p.stderr.strip().splitlines()) != 1:
        failures.append("%s: expected one stderr line, got %d" % (what, len(p.stderr.strip().splitlines())))
    return out


# The base interpreter, whoever runs this script (a venv's python would make venvs of the venv).
BASE = os.path.realpath(getattr(sys, "_base_executable", sys.executable))
ENV = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "PIP_", "VIRTUAL_ENV"))}
ENV.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", FUSEPROOF_BUILD_DIR=BUILD)

tmp = tempfile.mkdtemp(prefix="fuseproof_pip_")
try:
    venv = os.path.join(tmp, "venv")
    py = os.path.join(venv, "bin", "python")
    run("venv", [BASE, "-m", "venv", "--system-site-packages", venv], tmp)
    run("pip install", [py, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--no-cache-dir", SOURCE],
        tmp, match="Successfully installed fuseproof-")

    # A kernel repository elsewhere: the user suite and its callables, nothing else.
    user = os.path.join(tmp, "kernel_repo")
    os.makedirs(user)
    for f in glob.glob(os.path.join(USER_SUITE, "*.py")) + [SUBJECTS]:
        shutil.copy(f, user)
    site = os.path.join(venv, "lib", "python%d.%d" % sys.version_info[:2], "site-packages")
    run("import", [py, "-c", "import fuseproof, fuseproof.testing; print(fuseproof.__file__)"], user,
        match=re.escape(os.path.join(site, "fuseproof", "__init__.py")))
    pytest = [py, "-m", "pytest", "-p", "no:cacheprovider", "--strict-markers", "-m", "fuseproof",
              "--fuseproof-scope", "quick", "-q", "test_user_kernels.py"]
    run("pytest via the entry point", pytest, user, expect=1,
        match=r"x=0x[0-9A-F]+ bias=0x[0-9A-F]+ => 0x[0-9A-F]+ expected 0x[0-9A-F]+.*reproduce: python3 -m fuseproof "
              r"audit.*1 failed, 1 passed")
    run("fuseproof-py", [os.path.join(venv, "bin", "fuseproof-py"), "audit", "--dtype", "bf16"], user, expect=2,
        match="--callable MODULE:FUNCTION or --subject NAME is required", one_line_stderr=True)

    # Negative control: the same in a venv without the install.
    bare = os.path.join(tmp, "venv_without_install")
    run("venv without the install", [BASE, "-m", "venv", "--system-site-packages", "--without-pip", bare], tmp)
    bare_py = os.path.join(bare, "bin", "python")
    run("import without the install", [bare_py, "-c", "import fuseproof.testing"], user, expect=1,
        match="No module named 'fuseproof'")
    run("pytest without the install", [bare_py] + pytest[1:], user, expect=4,
        match="unrecognized arguments: --fuseproof-scope")

    # Without torch (a venv without the system's site-packages, the installed package on its path): one line.
    no_torch = os.path.join(tmp, "venv_without_torch")
    run("venv without torch", [BASE, "-m", "venv", "--without-pip", no_torch], tmp)
    env = dict(ENV, PYTHONPATH=site)
    no_torch_py = os.path.join(no_torch, "bin", "python")
    run("import without torch", [no_torch_py, "-c", "import fuseproof.testing"], user, env=env, expect=1,
        match=r"ImportError: fuseproof: \S+ cannot import torch \(No module named 'torch'\), which every subject "
              r"needs: apt-get install python3-torch")
    run("audit without torch", [no_torch_py, "-m", "fuseproof", "audit", "--callable", "cpu_subjects:correct",
                                "--dtype", "bf16", "--backend", "emulated"], user, env=env, expect=2,
        match="cannot import torch .*apt-get install python3-torch", one_line_stderr=True)

    # Another interpreter: the package whose extension carries another ABI tag, as that interpreter would see it.
    other = os.path.join(tmp, "other_abi")
    shutil.copytree(os.path.join(site, "fuseproof"), os.path.join(other, "fuseproof"))
    for so in glob.glob(os.path.join(other, "fuseproof", "_fuseproof*.so")):
        os.rename(so, os.path.join(other, "fuseproof", "_fuseproof.cpython-399-x86_64-linux-gnu.so"))
    run("audit, extension of another interpreter", [bare_py, "-m", "fuseproof", "audit", "--callable",
                                                    "cpu_subjects:correct", "--dtype", "bf16"], user,
        env=dict(ENV, PYTHONPATH=other), expect=2,
        match=r"cannot load the extension _fuseproof .*; it was built for \S+ \(Python [0-9.]+\): run that "
              r"interpreter, or pip install", one_line_stderr=True)
finally:
    shutil.rmtree(tmp, ignore_errors=True)

for f in failures:
    print("FAIL " + f)
if failures:
    sys.exit(1)
print("pip install: the installed package ran the user suite (1 passed, 1 failed) with no conftest.py and no "
      "PYTHONPATH; the controls without the install, without torch and for another interpreter held")
