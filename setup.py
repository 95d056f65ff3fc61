"""setup.py: builds the extension _fuseproof with the project's CMake build and puts it beside python/fuseproof/.

The build tree: $FUSEPROOF_BUILD_DIR when set (an already configured tree is reused as it is, so a pip install after
`cmake --build --preset default` compiles nothing), else the `default` preset's build/. A tree not yet configured is
configured with the `default` preset for the interpreter running pip. Only the module's target is built.
"""

import importlib.machinery
import os
import re
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
TARGET = "fuseproof_python"  # python/CMakeLists.txt


def project_version():
    """The one version string: project(fuseproof VERSION x.y.z) in CMakeLists.txt."""
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        m = re.search(r"project\(\s*fuseproof\s+VERSION\s+([0-9.]+)", f.read())
    if not m:
        sys.exit("fuseproof setup.py: CMakeLists.txt has no project(fuseproof VERSION ...)")
    return m.group(1)


def build_dir():
    d = os.environ.get("FUSEPROOF_BUILD_DIR") or "build"
    return os.path.abspath(os.path.join(ROOT, d))


def cmake_cache(tree, key):
    try:
        with open(os.path.join(tree, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return ""


class CMakeBuildExt(build_ext):
    """build_ext whose only extension comes out of the CMake tree: configure (when needed), build TARGET, copy."""

    def build_extension(self, ext):
        tree = build_dir()
        if not os.path.exists(os.path.join(tree, "CMakeCache.txt")):
            self.spawn(["cmake", "--preset", "default", "-S", ROOT, "-B", tree,
                        "-DPython_EXECUTABLE=" + sys.executable])
        package = os.path.join(tree, "python", "fuseproof")
        if not os.path.exists(os.path.join(package, "_build_info.py")):  # written when configure set the package up
            sys.exit("fuseproof setup.py: %s is configured without the Python package (its configure line "
                     "'fuseproof: ...' says why): apt-get install python3-dev pybind11-dev python3-torch, then "
                     "reconfigure" % tree)
        self.spawn(["cmake", "--build", tree, "--target", TARGET] +
                   (["-j", str(self.parallel)] if self.parallel else []))
        built = [n for n in os.listdir(package) if n.startswith("_fuseproof.") and n.endswith(".so")]
        python = cmake_cache(tree, "Python_EXECUTABLE") or "no interpreter"
        mine = [n for n in built if n[len("_fuseproof"):] in importlib.machinery.EXTENSION_SUFFIXES]
        if not mine:
            sys.exit("fuseproof setup.py: %s has no _fuseproof module for %s (Python %d.%d; built: %s, for %s): "
                     "pip install from that interpreter, or set FUSEPROOF_BUILD_DIR to a new folder"
                     % (tree, sys.executable, sys.version_info[0], sys.version_info[1], ", ".join(built) or "none",
                        python))
        dest = self.get_ext_fullpath(ext.name)
        os.makedirs(os.path.dirname(dest), exist_ok=True)
        shutil.copyfile(os.path.join(package, mine[0]), dest)
        # The interpreter the module was made for (written by CMake), for the one-line error of another interpreter.
        shutil.copyfile(os.path.join(package, "_build_info.py"), os.path.join(os.path.dirname(dest), "_build_info.py"))


os.makedirs(build_dir(), exist_ok=True)  # egg_info's egg_base must exist before the configure
setup(
    version=project_version(),
    package_dir={"": "python"},
    packages=["fuseproof"],
    ext_modules=[Extension("fuseproof._fuseproof", sources=[])],
    cmdclass={"build_ext": CMakeBuildExt},
    # setuptools' own scratch space inside the CMake tree, not the source tree (nor build/ beside CMake's files).
    options={"build": {"build_base": os.path.join(build_dir(), "setuptools")},
             "egg_info": {"egg_base": os.path.relpath(build_dir(), ROOT)}},
)
