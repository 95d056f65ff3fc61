"""fuseproof.testing: bitwise assertions and the audit inside a kernel author's own test suite.

    from fuseproof.testing import assert_bitwise_equal, assert_exact

    def test_my_kernel_is_bitwise():
        assert_bitwise_equal(my_kernel(x), reference(x))          # not torch.equal: NaN patterns and -0 count

    def test_my_kernel_is_eager_exact():
        assert_exact(my_silu_and_mul, op="silu_and_mul", dtype="bf16")   # the audit's battery, quick scope

`torch.equal` says NaN != NaN and -0 == +0, so it is not the bitwise check its name suggests; assert_bitwise_equal
compares bit patterns.
"""

from fuseproof._environment import require_torch

torch = require_torch()

__all__ = ["assert_bitwise_equal", "assert_exact", "SCOPES", "DEFAULT_SCOPE"]

# Integer views of the same width, for the bit patterns.
_BITS = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
# (sign bit, exponent mask, mantissa mask) of the floating dtypes whose ULP distance is reported.
_FORMATS = {torch.bfloat16: (16, 0x7F80, 0x007F), torch.float16: (16, 0x7C00, 0x03FF),
            torch.float32: (32, 0x7F800000, 0x007FFFFF), torch.float64: (64, 0x7FF0000000000000, (1 << 52) - 1)}


def _bits(t):
    """The tensor's bit patterns as non-negative Python-comparable int64 values, on the CPU, flattened."""
    t = t.detach().contiguous().cpu()
    size = t.element_size()
    if size not in _BITS:
        raise TypeError("assert_bitwise_equal: no integer view for %s (%d-byte elements)" % (t.dtype, size))
    u = t.view(_BITS[size]).reshape(-1).to(torch.int64)
    if size < 8:
        u = u & ((1 << (8 * size)) - 1)
    return u


def _is_nan(dtype, bits):
    fmt = _FORMATS.get(dtype)
    if fmt is None:
        return False
    _, exp, man = fmt
    return (bits & exp) == exp and (bits & man) != 0


def _distance(dtype, got, want):
    """'N ulp', 'sign of zero' or 'NaN pattern', on the sign-magnitude line of the format."""
    fmt = _FORMATS.get(dtype)
    if fmt is None:
        return "differs"
    width = fmt[0]
    if _is_nan(dtype, got) or _is_nan(dtype, want):
        return "NaN pattern" if _is_nan(dtype, got) and _is_nan(dtype, want) else "NaN against a number"
    sign = 1 << (width - 1)

    def line(b):
        return -(b & (sign - 1)) if b & sign else b

    d = abs(line(got) - line(want))
    return "sign of zero" if d == 0 else "%d ulp" % d


def _hex(dtype, bits, size):
    return "0x%0*X" % (2 * size, bits)


def assert_bitwise_equal(actual, expected, nan_policy="pattern", inputs=None, records=8, msg=None):
    """Raises AssertionError unless `actual` and `expected` hold the same bit patterns, element by element.

    Shapes and dtypes must be equal. -0 and +0 differ. nan_policy: "pattern" (default: a NaN equals only a NaN of
    the same bits) or "any" (every NaN equals every NaN: for a contract that leaves the NaN payload open). inputs: an
    optional dict name -> tensor (each broadcastable to the shape) whose bits each record shows. The message gives
    the count and the first `records` mismatches, TestFloat style:
    `[r=0,c=5] x=0x7FC1 => 0x7FFF expected 0x7FC1 (NaN pattern)` (1-D: `[i=5]`).
    """
    if nan_policy not in ("pattern", "any"):
        raise ValueError("assert_bitwise_equal: nan_policy must be 'pattern' or 'any', got %r" % (nan_policy,))
    if not isinstance(actual, torch.Tensor) or not isinstance(expected, torch.Tensor):
        raise TypeError("assert_bitwise_equal: compares torch tensors, got %s and %s"
                        % (type(actual).__name__, type(expected).__name__))
    head = (msg + ": ") if msg else ""
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        raise AssertionError("%sshape or dtype differ: actual %s %s, expected %s %s" % (
            head, list(actual.shape), actual.dtype, list(expected.shape), expected.dtype))
    a, e = _bits(actual), _bits(expected)
    differ = a != e
    if nan_policy == "any" and actual.dtype in _FORMATS:
        differ &= ~(_is_nan(actual.dtype, a) & _is_nan(actual.dtype, e))
    n = int(differ.sum())
    if n == 0:
        return
    where = torch.nonzero(differ).reshape(-1)[:records].tolist()
    shape = list(actual.shape)
    ins = {}
    for name, t in (inputs or {}).items():
        ins[name] = (_bits(t.expand(actual.shape)), t.element_size())
    size = actual.element_size()
    lines = []
    for i in where:
        idx, rest = [], i
        for dim in reversed(shape):
            idx.append(rest % dim)
            rest //= dim
        idx.reverse()
        names = "i" if len(idx) == 1 else "rc" if len(idx) == 2 else ["d%d" % k for k in range(len(idx))]
        pos = ",".join("%s=%d" % (k, v) for k, v in zip(names, idx))
        what = "".join(" %s=%s" % (name, _hex(actual.dtype, int(b[i]), s)) for name, (b, s) in ins.items())
        got, want = int(a[i]), int(e[i])
        lines.append("[%s]%s => %s expected %s (%s)" % (pos, what, _hex(actual.dtype, got, size),
                                                        _hex(actual.dtype, want, size),
                                                        _distance(actual.dtype, got, want)))
    more = "\n  ... and %d more" % (n - len(where)) if n > len(where) else ""
    raise AssertionError("%s%d of %d elements differ bitwise (%s, nan_policy=%s)\n  %s%s" % (
        head, n, a.numel(), actual.dtype, nan_policy, "\n  ".join(lines), more))


# The audit's scopes: "quick" fits a unit test (about 15-30 s for one dtype on a 2-core machine, CPU tensors),
# "full" is the whole battery with the audit's defaults.
SCOPES = {
    "quick": dict(domain_biases=16, max_width=256, property_cases=50, stop_after=100),
    "full": {},
}


# assert_exact's scope when none is given (the pytest plugin's --fuseproof-scope sets it).
DEFAULT_SCOPE = "quick"


def assert_exact(fn, op, dtype="bf16", device=None, scope=None, contract=None, **options):
    """Runs the audit on `fn` (fuseproof.audit, same arguments) and raises AssertionError with the verdict table and
    the first records unless it passes. scope: "quick" (SCOPES["quick"]: a subset of the domain, widths to 256) or
    "full" (every class at the audit's defaults); default DEFAULT_SCOPE. options override the scope's."""
    scope = DEFAULT_SCOPE if scope is None else scope
    if scope not in SCOPES:
        raise ValueError("assert_exact: scope must be one of %s, got %r" % (", ".join(SCOPES), scope))
    import fuseproof
    verdict = fuseproof.audit(fn, op=op, dtype=dtype, device=device, contract=contract,
                              **dict(SCOPES[scope], **options))
    if verdict:
        return verdict
    failed = verdict.failed_checks()
    records = [r for c in failed for r in c.get("records", [])[:4]]
    reproduce = [c["reproduce"] for c in failed if c.get("reproduce")][:1]
    raise AssertionError("fuseproof audit of %s (op %s, %s, scope %s): %s\n%s%s%s" % (
        getattr(fn, "__qualname__", repr(fn)), op, dtype, scope, verdict.verdict.upper(), verdict.summary(),
        ("\nfirst records:\n  " + "\n  ".join(records)) if records else "",
        ("\nreproduce: " + reproduce[0]) if reproduce else ""))
