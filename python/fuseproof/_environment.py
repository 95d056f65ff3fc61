"""_environment.py: what the package needs of the interpreter (torch; the extension built for it), each lack one
ImportError line that names the fix."""

import sys


def _line(e):
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__


def require_torch():
    """The torch module; ImportError (one line) when this interpreter has none."""
    try:
        import torch
    except ImportError as e:
        raise ImportError("fuseproof: %s cannot import torch (%s), which every subject needs: apt-get install "
                          "python3-torch and run /usr/bin/python3, or a venv made with `/usr/bin/python3 -m venv "
                          "--system-site-packages`" % (sys.executable, _line(e))) from None
    return torch


def extension():
    """The extension module _fuseproof; ImportError (one line) when this interpreter cannot load it."""
    try:
        from fuseproof import _fuseproof
    except ImportError as e:
        try:
            from fuseproof import _build_info
            made_for = "%s (Python %s)" % (_build_info.PYTHON, _build_info.PYTHON_VERSION)
        except ImportError:  # the source tree's python/, not a build or an install
            made_for = "no interpreter yet (python/ is the source; PYTHONPATH=build/python or pip install it)"
        raise ImportError("fuseproof: %s cannot load the extension _fuseproof (%s); it was built for %s: run that "
                          "interpreter, or pip install --no-build-isolation the fuseproof checkout from this one"
                          % (sys.executable, _line(e), made_for)) from None
    return _fuseproof
