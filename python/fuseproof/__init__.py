"""fuseproof: bit-exactness audit of fused ops written in Python (torch ops, Triton kernels, torch.compile).

    import fuseproof
    verdict = fuseproof.audit(my_silu_and_mul, op="silu_and_mul", dtype="bf16", device="cuda")
    assert verdict, verdict.summary()

The checks, the reference, the reports and the exit statuses are the C++ audit's (audit/), reached through the
extension module _fuseproof; this package only wraps the subject (see _bridge.py) and parses the command line.
"""

import json as _json

__all__ = ["audit", "Verdict", "Unavailable"]


class Unavailable(Exception):
    """A built-in subject that cannot run here (no torch.compile, no Triton); reported, never a crash."""


class Verdict:
    """What the audit found: truthy on a pass. `status` is the exit status (0 pass, 1 fail, 3 incomplete)."""

    def __init__(self, status, report):
        self.status = status
        self.report = report  # the JSON report as a dict (the same as --json writes)

    @property
    def passed(self):
        return self.status == 0

    @property
    def verdict(self):
        return self.report.get("verdict", "fail" if self.status else "pass")

    @property
    def checks(self):
        return self.report.get("checks", [])

    @property
    def mismatches(self):
        return sum(c.get("mismatches", 0) for c in self.checks)

    def records(self):
        """Every mismatch line kept, TestFloat style, in check order."""
        return [r for c in self.checks for r in c.get("records", [])]

    def failed_checks(self):
        return [c for c in self.checks if c.get("status") == "fail"]

    def summary(self):
        lines = ["%s: %s" % (self.report.get("kernel", {}).get("name", "subject"), self.verdict.upper())]
        for c in self.checks:
            lines.append("  %-9s %s  %-7s %d cases, %d mismatches" % (c["class"], c["dtype"], c["status"], c["cases"],
                                                                      c["mismatches"]))
            lines.extend("      " + r for r in c.get("records", [])[:3])
        return "\n".join(lines)

    def __bool__(self):
        return self.passed

    def __repr__(self):
        return "Verdict(%s, %d checks, %d mismatches)" % (self.verdict.upper(), len(self.checks), self.mismatches)


def audit(fn, op=None, dtype="all", device=None, report=None, json=None, out_arg=None, contract=None,
          junit=None, report_format="markdown", **options):
    """Audits fn on torch tensors; returns the Verdict. fn takes the op's buffers (`fuseproof ops` lists them):
    fn(x, bias) -> out for the bias ops, fn(x) -> out for the packed *_and_mul ops (x = [rows, 2d]), fn(x, gate, y)
    and fn(x, scale, shift) for gated_residual and modulate on DiT's 3-D tensors (x, y, out [rows / group_rows,
    group_rows, d]; gate, scale, shift [rows / group_rows, 1, d]); or the same with out as a last argument, filled in
    place. A quantization op (nvfp4_quant, fp8_group_quant and the fused ones): codes, scales = fn(*buffers,
    *scalars), the scalars 0-dim float32 tensors (docs/SUBJECTS.md, Quantization subjects).

    contract: "eager", "fp32" or "fma", or a quantization op's ("vllm-ref", ...), as the op has them (default:
    fn.fuseproof_contract, else eager, or the quantization op's first). dtype: "bf16", "fp16" or "all".
    device: "cuda" (the CUDA eager model) or "cpu" (the emulated model); default cuda when available. report / json /
    junit: paths of the Markdown (report_format "markdown" or "github"), JSON and JUnit XML reports. options: the
    audit's option table (seed, only, math_model, domain_biases, max_width, property_cases, stop_after, records,
    shapes, call_timeout, isolate, ...: the command line's --seed ..., with underscores). Raises ValueError (one line) for bad arguments.
    """
    from fuseproof import _engine  # the extension loads with the first audit

    status, report_text = _engine.run_callable(fn, op=op, contract=contract, dtype=dtype, device=device,
                                               report=report, json_path=json, out_arg=out_arg, options=options,
                                               junit=junit, report_format=report_format,
                                               command="fuseproof.audit(%s)" % getattr(fn, "__qualname__", repr(fn)))
    return Verdict(status, _json.loads(report_text) if report_text else {})
