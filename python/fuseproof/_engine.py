"""_engine.py: turns a subject and its options into the C++ audit's AuditOptions and Subject (extension _fuseproof)."""

import inspect
import json
import os
import sys

import torch

from fuseproof import _fuseproof
from fuseproof._bridge import Bridge
from fuseproof.subjects import importable_name, takes_out

_OPTION_TYPES = {"seed": int, "only": str, "tanh_model": str, "domain_biases": int, "max_width": int,
                 "property_cases": int, "stop_after": int, "records": int}


def resolve_device(device):
    """torch.device of the subject: cuda when available unless told; ValueError for anything but cpu and cuda."""
    if device is None:
        device = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        d = torch.device(device)
    except (RuntimeError, TypeError) as e:
        raise ValueError("fuseproof audit: device must be cpu or cuda, got %s" % device) from e
    if d.type not in ("cpu", "cuda"):
        raise ValueError("fuseproof audit: device must be cpu or cuda, got %s" % device)
    if d.type == "cuda" and not torch.cuda.is_available():
        raise ValueError("fuseproof audit: device cuda is not usable here (torch %s, torch.cuda.is_available() is "
                         "False)" % torch.__version__)
    return d


def child_command(subject_args):
    """argv re-creating the subject in a fresh process (the engine appends --child-spec FILE): this interpreter, this
    process's sys.path (so that the package and the subject's module import there too), `audit` and subject_args."""
    boot = ("import sys, json; sys.path[:0] = json.loads(sys.argv.pop(1)); from fuseproof._cli import main; "
            "sys.exit(main(sys.argv[1:]))")
    path = [os.path.abspath(p) if p else os.getcwd() for p in sys.path]
    return [sys.executable, "-c", boot, json.dumps(path), "audit"] + list(subject_args)


def _source_sha256(fn):
    try:
        path = inspect.getsourcefile(inspect.unwrap(fn))
    except (TypeError, ValueError):
        path = None
    return (path or "", _fuseproof.file_sha256(path) if path else "")


def run_callable(fn, op="bias_gelu_tanh", dtype="all", device=None, report=None, json_path=None, out_arg=None,
                 options=None, command="", name=None, description=None, subject_args=None, child_spec=""):
    """Runs the audit on fn; returns (exit status, JSON report text). ValueError (one line) for bad arguments."""
    if dtype not in ("bf16", "fp16", "all"):
        raise ValueError("fuseproof audit: dtype must be bf16, fp16 or all, got %s" % dtype)
    options = dict(options or {})
    for k, v in options.items():
        if k not in _OPTION_TYPES:
            raise ValueError("fuseproof audit: unknown option %s (%s)" % (k, ", ".join(sorted(_OPTION_TYPES))))
        if not isinstance(v, _OPTION_TYPES[k]) or isinstance(v, bool):
            raise ValueError("fuseproof audit: option %s must be %s, got %r" % (k, _OPTION_TYPES[k].__name__, v))
    d = resolve_device(device)
    if out_arg is None:
        out_arg = takes_out(fn)
    if name is None:
        name = importable_name(fn) or getattr(fn, "__qualname__", repr(fn))
    source, sha = _source_sha256(fn)
    if subject_args is None:
        importable = importable_name(fn)
        subject_args = ["--callable", importable] if importable else []
    if subject_args:
        subject_args = list(subject_args) + ["--backend", "cuda" if d.type == "cuda" else "emulated"]
        if out_arg != takes_out(fn):
            subject_args += ["--out-arg" if out_arg else "--no-out-arg"]
    subject = {
        "name": name,
        "description": (description or "Python callable") + (" (" + source + ")" if source else "") +
                       ", " + ("fn(x, bias, out)" if out_arg else "fn(x, bias) -> out") + ", torch " + torch.__version__,
        "sha256": sha,
        "cuda": d.type == "cuda",
        "child_command": child_command(subject_args) if subject_args else [],
    }
    opts = dict(options, op=op, dtypes=["bf16", "fp16"] if dtype == "all" else [dtype],
                backend="cuda" if d.type == "cuda" else "emulated", command=command)
    return _fuseproof.run(Bridge(fn, d, out_arg), subject, opts, report or "", json_path or "", child_spec or "")
