"""_cli.py: the command line: python3 -m fuseproof audit (--callable MODULE:FUNCTION | --subject NAME) [options].

The audit's options are the C++ audit's option table (audit/audit_options.cpp, through the extension): the same
names, types, ranges and help as `fuseproof audit`. Exit status as `fuseproof audit`: 0 pass, 1 a check failed (a
mismatch, a fault, a hang), 2 bad input or a setup error (one line on stderr), 3 incomplete (golden data missing, or a
built-in subject unavailable here: no torch.compile, no Triton; said so on stdout and in the reports), 4 a corrupt
data file.
"""

import argparse
import json
import os
import sys

from fuseproof import _output


class _Refusal(Exception):
    def __init__(self, message, status=2):
        super().__init__(message)
        self.status = status


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2 (argparse would print the usage too)
        raise _Refusal("fuseproof audit: " + message)


def _extension():
    from fuseproof._environment import extension
    try:
        return extension()
    except ImportError as e:  # one line naming the fix (_environment.py)
        raise _Refusal(str(e))


# Options of the table that a Python subject's command line handles itself, or that name no Python subject's need.
_NOT_FROM_TABLE = {"plugin", "backend", "dtype", "op", "contract", "golden_dir", "golden_build_dir", "arch"}


def _parser(table):
    p = _Parser(prog="python3 -m fuseproof", description="Audit a fused op written in Python against the reference")
    sub = p.add_subparsers(dest="command")
    a = sub.add_parser("audit", help="run the audit's check battery on a Python subject")
    a.error = p.error
    who = a.add_mutually_exclusive_group()
    who.add_argument("--callable", metavar="MODULE:FUNCTION",
                     help="fn(*buffers) -> out or fn(*buffers, out) -> None (fuseproof ops lists each op's buffers; "
                          "gated_residual and modulate take [groups, group_rows, d] and [groups, 1, d] tensors); "
                          "a quantization op: fn(*buffers, *scalars) -> (codes, scales) (docs/SUBJECTS.md)")
    who.add_argument("--subject", help="built-in subject: eager, torch-compile, torch-compile-emulated, torch-compile-reduce-overhead, "
                          "torch-cuda-graph, triton, triton-fma, triton-fp-fusion; a quantization op: eager or "
                          "torch-compile, the project's torch reference of --contract")
    a.add_argument("--op", help="op to audit (fuseproof ops lists them; default: the first, bias_gelu_tanh)")
    a.add_argument("--contract", help="the contract to judge against: eager, fp32 or fma, a quantization op's "
                                      "(vllm-ref, te, ...: fuseproof ops) (default: the callable's fuseproof_contract "
                                      "attribute, else eager, or the quantization op's first)")
    a.add_argument("--dtype", default="all", help="bf16, fp16 or all")
    a.add_argument("--backend", help="cuda (CUDA tensors, CUDA eager model) or emulated (CPU tensors, emulated model); "
                                     "default cuda when torch sees a GPU")
    a.add_argument("--report", help="write a Markdown report (--report-format)")
    a.add_argument("--report-format", default="markdown", choices=("markdown", "github"),
                   help="markdown (the full report) or github (short enough for a pull-request comment)")
    a.add_argument("--json", help="write a JSON report")
    a.add_argument("--junit", help="write a JUnit XML report: a testcase per check class and dtype")
    for o in table:
        if o["key"] in _NOT_FROM_TABLE:
            continue
        flags = [o["flag"]] + (["--tanh-model"] if o["key"] == "math_model" else [])
        if o["type"] == "bool":
            # A default-true switch is cleared by its --no- flag; a default-false one set by its flag.
            a.add_argument(*flags, dest=o["key"], action="store_false" if o["default"] else "store_true",
                           default=None, help=o["help"])
        else:
            a.add_argument(*flags, dest=o["key"], type={"int": int, "float": float, "str": str}[o["type"]],
                           help=o["help"])
    a.add_argument("--no-reference", action="store_true",
                   help="accepted for the C++ command's reproduce lines; the Python front end runs no reference "
                        "self-audit (fuseproof reference-audit does)")
    out = a.add_mutually_exclusive_group()
    out.add_argument("--out-arg", dest="out_arg", action="store_const", const=True,
                     help="the callable takes out as its last argument (default: from its signature)")
    out.add_argument("--no-out-arg", dest="out_arg", action="store_const", const=False,
                     help="the callable returns out")
    a.add_argument("--child-spec", help=argparse.SUPPRESS)  # set by the engine in its fault-isolation children
    return p


def _unavailable(args, name, why):
    line = "fuseproof audit: subject %s unavailable: %s" % (name, why)
    print(line)
    print("VERDICT: UNAVAILABLE (%s); nothing was audited" % name)
    report = {"tool": "fuseproof audit", "op": args.op, "kernel": {"name": name}, "verdict": "unavailable",
              "reason": why, "checks": []}
    try:
        if args.json:
            _output.write_file_atomically(args.json, json.dumps(report, indent=2) + "\n")
        if args.report:
            _output.write_file_atomically(args.report, "# fuseproof audit: %s\n\n**Verdict: UNAVAILABLE**: %s\n"
                                          % (name, why))
    except _output.OutputError as e:
        raise _Refusal("fuseproof audit: " + str(e))
    sys.stdout.flush()
    print(line.rstrip("."), file=sys.stderr)  # every non-zero status says why on stderr, in one line
    return 3


def run(argv):
    probe = []
    try:
        return _run(argv, probe)
    finally:
        for p in probe:
            p.discard()


def _run(argv, probes):
    ext = _extension()
    table = json.loads(ext.option_table())
    args = _parser(table).parse_args(argv)
    if args.command != "audit":
        raise _Refusal("fuseproof: a command is required: audit")
    if not args.callable and not args.subject:
        raise _Refusal("fuseproof audit: --callable MODULE:FUNCTION or --subject NAME is required")
    if args.backend not in (None, "cuda", "emulated"):
        raise _Refusal("fuseproof audit: unknown --backend %s (cuda, emulated)" % args.backend)
    # Every report path checked and claimed before anything runs: a refusal writes nothing (common/atomic_file.h).
    try:
        claims = _output.claim_output_paths([("--report", args.report), ("--json", args.json),
                                             ("--junit", args.junit)])
    except _output.OutputError as e:
        raise _Refusal("fuseproof audit: " + str(e))
    with claims:
        return _run_claimed(args, argv, ext, table, probes)


def _run_claimed(args, argv, ext, table, probes):
    # The subject's module is imported in a child first (fuseproof/_import_probe.py), alongside this process's torch.
    probe = None
    if args.callable and not args.child_spec:  # (the audit's own children import what this process imported already)
        from fuseproof._import_probe import Probe
        try:
            probe = Probe(args.callable)
            probes.append(probe)
        except ValueError as e:
            raise _Refusal("fuseproof audit: " + str(e))
    # torch loads only now: a usage error stays fast.
    try:
        from fuseproof import _engine, subjects
    except ImportError as e:
        raise _Refusal(_line(e))
    try:
        op = _engine.find_op(args.op)
        args.op = op["name"]
    except ValueError as e:
        raise _Refusal(str(e))
    options = {o["key"]: getattr(args, o["key"]) for o in table
               if o["key"] not in _NOT_FROM_TABLE and getattr(args, o["key"], None) is not None}
    device = None if args.backend is None else ("cuda" if args.backend == "cuda" else "cpu")
    if args.subject:
        if args.subject not in subjects.BUILTIN:
            raise _Refusal("fuseproof audit: unknown --subject %s (%s)" % (args.subject, ", ".join(subjects.BUILTIN)))
        name = args.subject
        try:
            description, fn = subjects.builtin(args.subject, op, args.contract)
        except subjects.Unavailable as e:
            return _unavailable(args, name, str(e))
        except subjects.Refused as e:
            raise _Refusal("fuseproof audit: " + str(e))
        subject_args = ["--subject", args.subject]
    else:
        try:
            if probe:
                probe.finish()
            fn = subjects.load_callable(args.callable)
        except ValueError as e:
            raise _Refusal("fuseproof audit: " + str(e))
        name, description = args.callable, "Python callable " + args.callable
        subject_args = ["--callable", args.callable]
    command = "python3 -m fuseproof audit " + " ".join(a for a in argv if a is not None)
    try:
        status, _ = _engine.run_callable(fn, op=args.op, contract=args.contract, dtype=args.dtype, device=device,
                                         report=args.report, json_path=args.json, out_arg=args.out_arg,
                                         options=options, command=command, name=name, description=description,
                                         subject_args=subject_args, child_spec=args.child_spec,
                                         junit=args.junit, report_format=args.report_format)
    except ValueError as e:
        raise _Refusal(str(e) if str(e).startswith(("fuseproof", "audit")) else "fuseproof audit: " + str(e))
    except (ext.MissingDataError, ext.CorruptDataError) as e:  # golden data missing (3) or corrupt (4)
        missing = isinstance(e, ext.MissingDataError)
        if missing:
            print("\nverdict: INCOMPLETE (%s)" % _line(e))
        raise _Refusal(_line(e), 3 if missing else 4)
    except RuntimeError as e:  # other setup errors of the engine: one line, exit 2
        raise _Refusal(_line(e))
    return status


def _line(e):
    text = str(e).strip().splitlines()
    return text[0] if text else "fuseproof audit: " + type(e).__name__


def console_main():
    """The fuseproof-py command (pyproject.toml): python3 -m fuseproof."""
    return main(sys.argv[1:])


def main(argv):
    """The status of the command; a lost standard output (a full disk, a closed pipe) turns a 0 into 2 with one line
    on stderr, as common/cli_exit.h does for the C++ commands."""
    try:
        status = run(argv)
    except _Refusal as e:
        _flush_standard_output()
        print(str(e).rstrip("."), file=sys.stderr)
        return e.status
    except BrokenPipeError as e:
        status, lost = 0, _stdout_lost(e)
    else:
        lost = _flush_standard_output()
    if lost and status == 0:
        print("fuseproof audit: cannot write standard output: %s" % lost, file=sys.stderr)
        return 2
    return status


def _stdout_lost(e):
    # Nothing more can reach standard output: send what is left to /dev/null, so the interpreter's own flush at exit
    # adds no second message.
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return e.strerror or str(e)


def _flush_standard_output():
    """Flushes sys.stdout and the C stdout the extension prints to; "" when every byte got there, else why not."""
    try:
        sys.stdout.flush()
    except OSError as e:
        return _stdout_lost(e)
    ext = sys.modules.get("fuseproof._fuseproof")
    lost = ext.flush_standard_output() if ext is not None and hasattr(ext, "flush_standard_output") else ""
    if lost:
        _stdout_lost(OSError(0, lost))
    return lost
