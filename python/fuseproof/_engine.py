"""_engine.py: turns a subject and its options into the C++ audit's options and Subject (extension _fuseproof)."""

import inspect
import json
import os
import shlex
import sys

from fuseproof._environment import extension, require_torch

torch = require_torch()
_fuseproof = extension()

from fuseproof._bridge import Bridge
from fuseproof._quant_bridge import QuantBridge
from fuseproof.subjects import importable_name, takes_out

# Every width is valid for a torch op (2-byte "vectors"), so the widths class makes 8 times the calls it makes for the
# built-in plugins' 8-element vectors; these defaults keep it at the plugins' number of calls (8,192 on CUDA, 2,048 on
# the host). max_width raises them.
_PYTHON_MAX_WIDTH = {"cuda": 8192, "cpu": 2048}


def op_spec():
    """The op spec (reference/op_registry.cpp) as `fuseproof ops --json` prints it."""
    return json.loads(_fuseproof.op_spec())


def quant_op_spec():
    """The quantization ops (reference/quant_spec.h) as `fuseproof ops --json` prints them (its quant_ops), each with
    "quant": True."""
    return [dict(op, quant=True) for op in json.loads(_fuseproof.quant_op_spec())]


def find_op(name=None):
    """The op spec's entry of `name` (an elementwise op, or a quantization op's entry with "quant": True); None: the
    seed op (the spec's first)."""
    if name is None:
        return op_spec()["ops"][0]
    ops = op_spec()["ops"] + quant_op_spec()
    for op in ops:
        if op["name"] == name:
            return op
    raise ValueError("fuseproof audit: unknown op %s (%s)" % (name, ", ".join(o["name"] for o in ops)))


def quant_buffers(op):
    """A quantization op's buffers, as its callable receives them: the packed gate|up is one ("x")."""
    if op["inputs"] and op["inputs"][0]["layout"] == "packed-first":
        return ["x"]
    return [i["name"] for i in op["inputs"]]


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


def run_callable(fn, op=None, contract=None, dtype="all", device=None, report=None, json_path=None,
                 out_arg=None, options=None, command="", name=None, description=None, subject_args=None,
                 child_spec="", junit=None, report_format=None):
    """Runs the audit on fn; returns (exit status, JSON report text). ValueError (one line) for bad arguments.

    report (Markdown, report_format "markdown" or "github"), json_path and junit are the C++ audit's reports."""
    if dtype not in ("bf16", "fp16", "all"):
        raise ValueError("fuseproof audit: dtype must be bf16, fp16 or all, got %s" % dtype)
    spec = find_op(op)
    op = spec["name"]
    if spec.get("quant"):
        return _run_quant(fn, spec, contract, dtype, device, report, json_path, options, command, name, description,
                          subject_args, child_spec, junit, report_format)
    if contract is None:
        contract = getattr(fn, "fuseproof_contract", "eager")
    options = dict(options or {})
    d = resolve_device(device)
    options.setdefault("max_width", _PYTHON_MAX_WIDTH[d.type])
    n_buffers = len(spec["buffers"])
    if out_arg is None:
        out_arg = takes_out(fn, n_buffers)
    if name is None:
        name = importable_name(fn) or getattr(fn, "__qualname__", repr(fn))
    source, sha = _source_sha256(fn)
    if subject_args is None:
        importable = importable_name(fn)
        subject_args = ["--callable", importable] if importable else []
    ident = list(subject_args) + ["--op", op, "--contract", contract]
    if subject_args and out_arg != takes_out(fn, n_buffers):
        ident.append("--out-arg" if out_arg else "--no-out-arg")
    repro = [a for k, a in enumerate(ident) if k not in (len(subject_args) + 2, len(subject_args) + 3)]
    # (the reproduce line: the engine adds --contract with the other options that differ from their defaults)
    backend = "cuda" if d.type == "cuda" else "emulated"
    args = ", ".join(spec["buffers"])
    subject = {
        "name": name,
        "description": (description or "Python callable") + (" (" + source + ")" if source else "") +
                       ", " + ("fn(%s, out)" % args if out_arg else "fn(%s) -> out" % args) +
                       ", torch " + torch.__version__,
        "sha256": sha,
        "cuda": d.type == "cuda",
        "child_command": child_command(ident + ["--backend", backend]) if subject_args else [],
        "reproduce_prefix": "python3 -m fuseproof audit " + " ".join(shlex.quote(a) for a in repro)
                            if subject_args else "fuseproof.audit(%s, ...) (an in-process callable)" % name,
    }
    opts = dict(options, op=op, contract=contract, dtype=dtype, backend=backend, command=command)
    return _fuseproof.run(Bridge(fn, d, out_arg), subject, json.dumps(opts), report or "", json_path or "",
                          child_spec or "", junit or "", report_format or "markdown")


def _run_quant(fn, spec, contract, dtype, device, report, json_path, options, command, name, description,
               subject_args, child_spec, junit, report_format):
    """run_callable for a quantization op: codes, scales = fn(*buffers, *scalars) (fuseproof/_quant_bridge.py)."""
    op = spec["name"]
    if contract is None:
        contract = getattr(fn, "fuseproof_contract", spec["contracts"][0]["name"])
    contracts = [c for c in spec["contracts"] if c["name"] == contract]
    if not contracts:
        raise ValueError("fuseproof audit: op %s has no contract %s (%s)"
                         % (op, contract, ", ".join(c["name"] for c in spec["contracts"])))
    layouts = getattr(fn, "fuseproof_scale_layouts", None)
    if layouts is not None:
        layouts = (layouts,) if isinstance(layouts, str) else tuple(layouts)
        unknown = [l for l in layouts if l not in spec["scale_layouts"]]
        if unknown:
            raise ValueError("fuseproof audit: fuseproof_scale_layouts names %s, which op %s has not (%s)"
                             % (unknown[0], op, ", ".join(spec["scale_layouts"])))
    d = resolve_device(device)
    if name is None:
        name = importable_name(fn) or getattr(fn, "__qualname__", repr(fn))
    source, sha = _source_sha256(fn)
    if subject_args is None:
        importable = importable_name(fn)
        subject_args = ["--callable", importable] if importable else []
    ident = list(subject_args) + ["--op", op, "--contract", contract]
    repro = list(subject_args)  # (the engine adds --op and --contract to a quantization op's reproduce line)
    backend = "cuda" if d.type == "cuda" else "emulated"
    args = ", ".join(quant_buffers(spec) + contracts[0]["scalars"])
    subject = {
        "name": name,
        "description": (description or "Python callable") + (" (" + source + ")" if source else "") +
                       ", fn(%s) -> (codes, scales)" % args +
                       (", scale layouts " + ", ".join(layouts) if layouts is not None else "") +
                       ", torch " + torch.__version__,
        "sha256": sha,
        "cuda": d.type == "cuda",
        "child_command": child_command(ident + ["--backend", backend]) if subject_args else [],
        "reproduce_prefix": "python3 -m fuseproof audit " + " ".join(shlex.quote(a) for a in repro)
                            if subject_args else "fuseproof.audit(%s, ...) (an in-process callable)" % name,
    }
    opts = dict(options or {}, op=op, contract=contract, dtype=dtype, backend=backend, command=command)
    return _fuseproof.run(QuantBridge(fn, d, layouts), subject, json.dumps(opts), report or "", json_path or "",
                          child_spec or "", junit or "", report_format or "markdown")
