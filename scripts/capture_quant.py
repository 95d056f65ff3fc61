#!/usr/bin/env python3
"""capture_quant.py: the projects' torch references of FP8-group and NVFP4 quantization (python/fuseproof/
quant_references.py) on the GPU, as `fuseproof eval` records, and the check that `fuseproof eval` reproduces them bit
for bit.

Capture (--out DIR, CUDA and torch.float8_e4m3fn needed): for each op and dtype, blocks generated deterministically
(numpy PCG64 seeded with --seed; structured edge blocks first, then random ones; see make_blocks), written as
DIR/<op>_<dtype>_in.bin.gz (the records `fuseproof eval --in` reads); for each contract of the op's family, the
reference's output as DIR/<op>_<contract>_<dtype>_out.bin.gz (`fuseproof eval --out`'s format); and
DIR/capture_quant.json: per file the op, contract, dtype, block count, record size, the SHA-256 of the records and of
the .gz file, the edge-block counts by kind, and the provenance (GPU, driver, torch, CUDA, CuPy, date, command).
The fused ops' activation runs in eager torch (rounded to T) before the quantizer, as the references do. Two
guards run on the capture: a self-check (nvfp4_quant's E2M1-midpoint blocks, whose block scale is exactly 2^k, must
give under each table reference the codes of an independent round-to-nearest-even and the scale byte of 2^k; no
reference may give one code for every block), and the count of blocks on which each pair of contracts differs
(printed, and kept in the JSON as contract_differences).

Check (--check-with FUSEPROOF, after a capture, or --check-only DIR on any machine, no torch needed): runs
`FUSEPROOF eval --op OP --contract C --dtype D --in IN --out OUT` on every input file and compares OUT with the
reference's bytes, block by block. A mismatch is one line, TestFloat-style:
    nvfp4_quant vllm-ref bf16 [block=17,i=3] x=0x3F80 amax=0x4040 gs=0x3F800000 => code 0x6 scale 0x7E expected ...
(the first differing element of the block, its inputs, the block's amax input and scalars, got then expected); after
--show lines only the count goes on; the last line gives the total. A clean run says how many blocks it compared.

Exit: 0 every output equal (or a capture without --check-with), 1 a mismatch or a failed self-check, 2 bad arguments
or a failing eval,
3 the capture cannot run here (no CUDA, no float8, no CuPy for rcp-approx: one line on stderr), 4 a capture whose
files do not match its JSON.
"""
import argparse
import datetime
import gzip
import hashlib
import json
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from fuseproof import quant_records as qr  # noqa: E402
from fuseproof._output import OutputError, write_file_atomically  # noqa: E402

DTYPES = ("bf16", "fp16")
CONTRACTS = {"nvfp4": ("vllm-ref", "rcp-approx", "te", "flashinfer-exact"), "fp8": ("fp8-group", "fp8-group-ue8m0")}
DEFAULT_BLOCKS = {"nvfp4": 4096, "fp8": 1024}
DEFAULT_SEED = 0x5EED0035
JSON_NAME = "capture_quant.json"


class Incomplete(Exception):
    """The capture cannot run here (exit 3)."""


class Usage(Exception):
    """Bad arguments or a failing tool (exit 2)."""


class Corrupt(Exception):
    """A capture whose files do not match its JSON (exit 4)."""


# ---- half-precision bit patterns ----------------------------------------------------------------------------------

MANT = {"bf16": 7, "fp16": 10}
BIAS = {"bf16": 127, "fp16": 15}
QNAN = {"bf16": 0x7FC0, "fp16": 0x7E00}
INF = {"bf16": 0x7F80, "fp16": 0x7C00}


def tbits(values, dt):
    """float values -> T bit patterns (uint16), rounding to nearest even (binary32 first for bf16)."""
    v = np.asarray(values, dtype=np.float64)
    if dt == "fp16":
        with np.errstate(over="ignore"):
            return v.astype(np.float16).view(np.uint16)
    u = v.astype(np.float32).view(np.uint32).astype(np.uint64)
    nan = np.isnan(v)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(nan, ((u >> 16) | 0x40).astype(np.uint16), r)


def tval(bits, dt):
    """T bit patterns -> float64 values (exact)."""
    b = np.asarray(bits, dtype=np.uint16)
    if dt == "fp16":
        return b.view(np.float16).astype(np.float64)
    with np.errstate(invalid="ignore"):  # signalling NaN patterns widen to quiet ones
        return (b.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def exact(values, dt):
    """T patterns of values that T holds exactly and finitely, else None."""
    b = tbits(values, dt)
    v = np.asarray(values, dtype=np.float64)
    return b if np.all(np.isfinite(tval(b, dt))) and np.array_equal(tval(b, dt), v) else None


def ulp_step(bits, k):
    """The pattern k steps away in magnitude (same sign), for finite nonzero patterns."""
    return (bits.astype(np.int32) + k).astype(np.uint16)


# ---- blocks -------------------------------------------------------------------------------------------------------

class Blocks:
    """The quantizer-input blocks of one family and dtype: T patterns [N, B], a float32 global scale per block
    (NVFP4), and the kind of each."""

    def __init__(self, block, dt, rng):
        self.block, self.dt, self.rng = block, dt, rng
        self.rows, self.gs, self.kinds = [], [], []

    def add(self, kind, bits, gs=1.0):
        bits = np.asarray(bits).astype(np.uint16)
        if bits.shape != (self.block,):
            raise ValueError(f"a {kind} block of shape {bits.shape}, expected ({self.block},)")
        self.rows.append(bits)
        self.gs.append(np.float32(gs))
        self.kinds.append(kind)

    def moderate(self, n, lo=-8, hi=4):
        """n finite patterns: random sign, exponent in [2^lo, 2^hi), random mantissa."""
        dt, rng = self.dt, self.rng
        e = rng.integers(lo, hi, size=n) + BIAS[dt]
        e = np.clip(e, 1, 2 * BIAS[dt])
        m = rng.integers(0, 1 << MANT[dt], size=n)
        s = rng.integers(0, 2, size=n)
        return ((s << 15) | (e << MANT[dt]) | m).astype(np.uint16)

    def below(self, amax_bits, n):
        """n patterns of magnitude at most the value of amax_bits (finite, random sign)."""
        a = tval(np.array([amax_bits]), self.dt)[0]
        v = self.rng.uniform(-1.0, 1.0, size=n) * a
        return tbits(np.clip(v, -a, a), self.dt)


def e4m3_values(subnormals=True):
    """Every positive finite E4M3 value, ascending."""
    vals = [(8 + m) * 2.0 ** (e - 10) for e in range(1, 16) for m in range(8) if not (e == 15 and m == 7)]
    if subnormals:
        vals = [m * 2.0 ** -9 for m in range(1, 8)] + vals
    return np.array(vals)


E2M1_MIDPOINTS = np.array([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0])


def common_edges(b):
    """Kinds both families share: zeros, signed zeros, subnormal-only, NaN and Inf members."""
    dt, rng, n = b.dt, b.rng, b.block
    big = [1.0, 2.0 ** 20, 2.0 ** 60, 2.0 ** 100, 2.0 ** 126]
    for gs in (1.0, 2.0 ** -20, 2.0 ** 20, 448.0 * 6 / 3.0):
        b.add("all-zero", np.zeros(n, np.uint16), gs)
        b.add("signed-zeros", (rng.integers(0, 2, size=n) << 15).astype(np.uint16), gs)
    b.add("signed-zeros", np.full(n, 0x8000, np.uint16))
    sub_max = (1 << MANT[dt]) - 1
    for gs in big:
        b.add("subnormal-only", ((rng.integers(0, 2, size=n) << 15) | rng.integers(1, sub_max + 1, size=n)), gs)
        b.add("subnormal-only", np.full(n, 0x0001, np.uint16), gs)
        b.add("subnormal-only", np.full(n, sub_max | 0x8000, np.uint16), gs)
    for pat in (QNAN[dt], QNAN[dt] | 0x8000, INF[dt], INF[dt] | 0x8000):
        for pos in (0, n // 2 - 1, n - 1, int(rng.integers(0, n))):
            row = b.moderate(n)
            row[pos] = pat
            b.add("nan-inf-member", row)
        b.add("nan-inf-member", np.full(n, pat, np.uint16))
    row = b.moderate(n)
    row[0], row[n - 1] = QNAN[dt], INF[dt]
    b.add("nan-inf-member", row)


def nvfp4_edges(b):
    dt, rng, n = b.dt, b.rng, b.block
    common_edges(b)
    # E2M1 midpoints after scaling: amax = 6 * 2^(k - j) with gs = 2^j makes the block scale exactly 2^k and the
    # output scale exactly 2^(j - k), so m * 2^(k - j) scales to the midpoint m itself; neighbours one T ulp away.
    for k in (-9, -6, -3, 0, 3, 6, 8):
        for j in (0, -8, 8, 30):
            unit = 2.0 ** (k - j)
            amax = exact([6.0 * unit], dt)
            mids = exact(E2M1_MIDPOINTS * unit, dt)
            if amax is None or mids is None:
                continue
            for step in (0, -1, 1):
                vals = mids if step == 0 else ulp_step(mids, step)
                row = rng.choice(vals, size=n - 1)
                row = row | (rng.integers(0, 2, size=n - 1) << 15).astype(np.uint16)
                b.add("e2m1-midpoints", np.concatenate([amax, row]).astype(np.uint16)[rng.permutation(n)], 2.0 ** j)
    # E4M3 midpoints of the block scale: amax = 6 * midpoint (gs 1 and 2^-8), and one T ulp either side.
    ev = e4m3_values()
    mids = (ev[:-1] + ev[1:]) / 2
    for mid in mids[:: max(1, len(mids) // 40)]:
        for j in (0, -8):
            a = exact([6.0 * mid * 2.0 ** -j], dt)
            if a is None:
                continue
            for step in (0, -1, 1):
                amax = a if step == 0 else ulp_step(a, step)
                row = np.concatenate([amax, b.below(amax[0], n - 1)])
                b.add("e4m3-scale-midpoints", row[rng.permutation(n)], 2.0 ** j)
    # The scale's overflow: block scales at and around 448, 464 and 480, from the amax (gs 1, 2^-4, 2^10) and from
    # the global scale (neighbouring binary32 values of 6 * S / amax).
    for target in (448.0, 464.0, 480.0):
        for j in (0, -4, 10):
            a = tbits([6.0 * target * 2.0 ** -j], dt)
            if not np.isfinite(tval(a, dt)[0]):
                continue
            for step in (-2, -1, 0, 1, 2):
                amax = ulp_step(a, step)
                b.add("scale-overflow", np.concatenate([amax, b.below(amax[0], n - 1)])[rng.permutation(n)], 2.0 ** j)
        amax = b.moderate(1, 0, 3)[0] & 0x7FFF
        gs = np.float32(target * 6.0 / tval([amax], dt)[0])
        for step in (-2, -1, 0, 1, 2):
            g = (np.array([gs], np.float32).view(np.int32) + step).view(np.float32)[0]
            b.add("scale-overflow", np.concatenate([[amax], b.below(amax, n - 1)]), g)
    # Every position of the maximum, both signs.
    for pos in range(n):
        for sign in (0, 0x8000):
            row = b.moderate(n, -4, 0)
            row[pos] = tbits([3.75], dt)[0] | sign
            b.add("max-position", row, 448.0 * 6 / 3.75)
    # Global scales over every binade (and subnormal, zero, the largest): random moderate blocks.
    for e in range(-126, 128):
        b.add("global-scale-binade", b.moderate(n), np.float32(2.0 ** e * (1 + rng.random())))
    for g in (0.0, 2.0 ** -149, 2.0 ** -140, 2.0 ** -127, float(np.finfo(np.float32).max)):
        b.add("global-scale-special", b.moderate(n), g)


def fp8_edges(b):
    dt, rng, n = b.dt, b.rng, b.block
    common_edges(b)
    # amax / 448 on and around powers of two (where UE8M0 rounds up or not) and binary32 boundaries.
    for k in range(-20, 16, 2):
        for base in (448.0 * 2.0 ** k, 2.0 ** k):
            a = tbits([base], dt)
            if not np.isfinite(tval(a, dt)[0]) or tval(a, dt)[0] == 0:
                continue
            for step in (-2, -1, 0, 1, 2):
                amax = ulp_step(a, step)
                b.add("scale-boundary", np.concatenate([amax, b.below(amax[0], n - 1)])[rng.permutation(n)])
    # E4M3 midpoints after scaling: amax = 448 * 2^k, so x_s is 2^k within a binary32 ulp; members m * 2^k for E4M3
    # midpoints m (subnormal ones included) and one T ulp either side.
    ev = e4m3_values()
    mids = np.concatenate([(ev[:-1] + ev[1:]) / 2, [464.0]])
    for k in (-12, -4, 0, 4, 8):
        amax = exact([448.0 * 2.0 ** k], dt)
        ok = [x for x in mids * 2.0 ** k if exact([x], dt) is not None]
        if amax is None or not ok:
            continue
        m = tbits(ok, dt)
        for step in (0, -1, 1):
            vals = m if step == 0 else ulp_step(m, step)
            row = rng.choice(vals, size=n - 1) | (rng.integers(0, 2, size=n - 1) << 15).astype(np.uint16)
            b.add("e4m3-midpoints", np.concatenate([amax, row]).astype(np.uint16)[rng.permutation(n)])
    # Every position of the maximum, alternating signs.
    for pos in range(n):
        row = b.moderate(n, -4, 0)
        row[pos] = tbits([3.75], dt)[0] | (0x8000 if pos % 2 else 0)
        b.add("max-position", row)


def make_blocks(family, dt, total, seed):
    """Edge blocks of the family, then random ones up to `total`: 5/8 moderate values with a typical global scale
    (448 * 6 / block amax, times 2^-3..2^0), 2/8 a wide range inside the block (2^-16..2^8), 1/8 any bit pattern."""
    rng = np.random.Generator(np.random.PCG64(seed))
    b = Blocks(qr.FAMILY_LAYOUT[family][0], dt, rng)
    (nvfp4_edges if family == "nvfp4" else fp8_edges)(b)
    edges = len(b.rows)
    if edges > total:
        raise Usage(f"capture_quant: --blocks-{family} must be at least {edges} (the edge blocks), got {total}")
    for i in range(total - edges):
        r = i % 8
        row = (rng.integers(0, 65536, size=b.block).astype(np.uint16) if r == 7 else
               b.moderate(b.block, -16, 8) if r >= 5 else b.moderate(b.block))
        mags = np.abs(tval(row, dt))
        amax = mags[~np.isnan(mags)].max() if not np.all(np.isnan(mags)) else np.nan
        gs = 448.0 * 6 / amax * 2.0 ** -int(rng.integers(0, 4)) if np.isfinite(amax) and amax > 0 else 1.0
        b.add("random", row, np.float32(gs))
    return np.stack(b.rows), np.array(b.gs, np.float32), b.kinds


def op_inputs(op, y, dt, rng):
    """The op's inputs [N, n, B] whose activation gives (nearly) the quantizer-input blocks y: y itself for a
    quantizer; silu_and_mul: gate = 64 (silu(64) is 64 in T) and up = y / 64 rounded to T, except the random blocks'
    second half, whose gate and up are independent moderate values; bias_gelu_tanh: x = y, bias = +0, then
    gelu_tanh(y)."""
    fam, n_in = qr.OP_LAYOUT[op]
    if n_in == 1:
        return y[:, None, :]
    if op.startswith("silu_and_mul"):
        gate = np.full_like(y, tbits([64.0], dt)[0])
        with np.errstate(invalid="ignore"):
            up = tbits(tval(y, dt) / 64.0, dt)
        half = y.shape[0] // 2
        gate[half:] = tbits(rng.uniform(-8.0, 8.0, size=gate[half:].shape), dt)
        return np.stack([gate, np.where(np.arange(y.shape[0])[:, None] >= half, y, up)], axis=1)
    return np.stack([y, np.zeros_like(y)], axis=1)


# ---- the references on the device ---------------------------------------------------------------------------------

def device_or_incomplete():
    try:
        import torch
    except ImportError as e:
        raise Incomplete(f"no torch ({e}): the references are torch code")
    if not hasattr(torch, "float8_e4m3fn"):
        raise Incomplete(f"torch {torch.__version__} has no torch.float8_e4m3fn: the references cannot run here "
                         f"(torch 2.1 or newer has it)")
    if not torch.cuda.is_available():
        raise Incomplete(f"no CUDA device (torch {torch.__version__}): the references are captured on the GPU")
    return torch


def run_reference(torch, op, contract, dt, values, gs):
    from fuseproof import quant_references as q
    from fuseproof.quant_references import Unsupported
    tdt = {"bf16": torch.bfloat16, "fp16": torch.float16}[dt]
    dev = "cuda"
    inputs = [torch.from_numpy(values[:, i, :].astype(np.int16)).to(dev).view(tdt) for i in range(values.shape[1])]
    g = torch.from_numpy(gs.reshape(-1, 1)).to(dev) if gs is not None else None
    try:
        codes, scales = q.run_op(op, contract, inputs, g)
    except Unsupported as e:
        raise Incomplete(f"{op} {contract}: {e}")
    torch.cuda.synchronize()
    return codes.cpu().numpy().astype(np.uint8), scales.cpu().numpy()


def provenance():
    import torch
    p = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
         "host": platform.node(), "python": platform.python_version(), "command": " ".join(sys.argv),
         "torch": torch.__version__, "cuda": torch.version.cuda, "gpu": torch.cuda.get_device_name(0),
         "capability": "sm_%d%d" % torch.cuda.get_device_capability(0)}
    try:
        p["driver"] = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                     capture_output=True, text=True, timeout=30).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        p["driver"] = "unknown (nvidia-smi failed)"
    try:
        import cupy
        p["cupy"] = cupy.__version__
    except ImportError:
        p["cupy"] = None
    return p


def sha(data):
    return hashlib.sha256(data).hexdigest()


def write_gz(path, data):
    gz = gzip.compress(data, compresslevel=9, mtime=0)
    write_file_atomically(path, gz)
    return gz


def rne_e2m1_codes(x):
    """An E2M1 rounding independent of every reference (numpy, binary64 distances): the nearest magnitude, ties to
    the even code, |x| > 6 saturating; bit 3 set for a negative value. The table references take the sign as
    torch.sign(x), which is +0 for -0.0: a -0.0 member codes 0x0 there (a negative value rounded to zero, -0.0 * -1,
    still codes 0x8)."""
    mags = np.array((0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0))
    x = np.asarray(x, dtype=np.float64)
    d = np.abs(np.minimum(np.abs(x), 6.0)[..., None] - mags)
    cand = d == d.min(-1, keepdims=True)
    idx = np.where(cand.sum(-1) > 1, np.argmax(cand & (np.arange(8) % 2 == 0), -1), np.argmax(cand, -1))
    return (idx | ((x < 0) << 3)).astype(np.uint8)


# The table references whose e2m1-midpoint blocks have an exact block scale 2^k and exact scaled values (the
# rcp-approx arithmetic rounds its reciprocals, so it is left out).
SELF_CHECKED = ("vllm-ref", "te", "flashinfer-exact")


def self_check(op, c, dt, y, gs, kinds, codes, scales):
    """nvfp4_quant's e2m1-midpoint blocks under the table references: each code must be the independent RNE of the
    member over amax / 6, and the scale byte the E4M3 code of 2^k (gs * amax / 6 = 2^k). Returns failure lines."""
    if op != "nvfp4_quant" or c not in SELF_CHECKED:
        return []
    bad = []
    for r in np.nonzero(np.array(kinds) == "e2m1-midpoints")[0]:
        v = tval(y[r], dt)
        unit = np.abs(v).max() / 6.0
        k = int(np.round(np.log2(unit * float(gs[r]))))
        want_scale = (k + 7) << 3 if k >= -6 else 1 << (k + 9)
        want = rne_e2m1_codes(v / unit)
        if not np.array_equal(codes[r], want) or int(scales[r]) != want_scale:
            bad.append(f"self-check: {op} {c} {dt} [block={r}] codes {codes[r].tolist()} scale 0x{int(scales[r]):02X} "
                       f"expected {want.tolist()} scale 0x{want_scale:02X}")
    return bad


def contract_differences(outs):
    """{(a, b): blocks whose codes or scale bytes differ} for every pair of one op and dtype's contracts."""
    diff = {}
    names = list(outs)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            (ca, sa), (cb, sb) = outs[a], outs[b]
            sa_b = np.ascontiguousarray(sa).view(np.uint8).reshape(len(sa), -1)
            sb_b = np.ascontiguousarray(sb).view(np.uint8).reshape(len(sb), -1)
            diff[f"{a} vs {b}"] = {"codes": int(np.any(ca != cb, 1).sum()), "scales": int(np.any(sa_b != sb_b, 1).sum())}
    return diff


def capture(args):
    torch = device_or_incomplete()
    doc = {"format": qr.__doc__.split("\n\n")[1].replace("\n", " "), "seed": args.seed, "files": {}, "kinds": {},
           "contract_differences": {}, "provenance": provenance()}
    failures = []
    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        raise Usage(f"capture_quant: --out {args.out} cannot be made a folder: {e.strerror}")
    for op in args.ops:
        fam = qr.OP_LAYOUT[op][0]
        for dt in args.dtypes:
            # One seed per (family, dtype, op): the same blocks for every contract of the op.
            seed = args.seed + 1000 * sorted(qr.OP_LAYOUT).index(op) + DTYPES.index(dt)
            y, gs, kinds = make_blocks(fam, dt, args.blocks[fam], seed)
            values = op_inputs(op, y, dt, np.random.Generator(np.random.PCG64(seed + 500)))
            scal = gs.reshape(-1, 1) if qr.FAMILY_LAYOUT[fam][1] else None
            data = qr.pack_inputs(op, values, scal)
            name = f"{op}_{dt}_in.bin.gz"
            gz = write_gz(os.path.join(args.out, name), data)
            doc["files"][name] = {"op": op, "dtype": dt, "role": "input", "blocks": len(y),
                                  "record_bytes": qr.input_dtype(op).itemsize, "sha256": sha(data),
                                  "gz_sha256": sha(gz)}
            doc["kinds"][f"{op}_{dt}"] = {k: kinds.count(k) for k in dict.fromkeys(kinds)}
            outs = {}
            for c in args.contracts[fam]:
                codes, scales = run_reference(torch, op, c, dt, values, gs if scal is not None else None)
                outs[c] = (codes, scales)
                failures += self_check(op, c, dt, y, gs, kinds, codes, scales)
                out = qr.pack_outputs(op, codes, scales)
                oname = f"{op}_{c}_{dt}_out.bin.gz"
                ogz = write_gz(os.path.join(args.out, oname), out)
                doc["files"][oname] = {"op": op, "contract": c, "dtype": dt, "role": "output", "input": name,
                                       "blocks": len(y), "record_bytes": qr.output_dtype(op).itemsize,
                                       "sha256": sha(out), "gz_sha256": sha(ogz)}
                if len(np.unique(codes)) < 2:
                    failures.append(f"self-check: {op} {c} {dt}: every code is 0x{int(codes.flat[0]):02X}")
                print(f"{op} {c} {dt}: {len(y)} blocks captured", flush=True)
            doc["contract_differences"][f"{op}_{dt}"] = d = contract_differences(outs)
            for pair, n in d.items():
                print(f"{op} {dt} {pair}: {n['codes']} blocks differ in codes, {n['scales']} in scales")
    doc["self_check"] = failures or "passed"
    write_file_atomically(os.path.join(args.out, JSON_NAME), (json.dumps(doc, indent=1) + "\n").encode())
    for line in failures[:20]:
        print(line)
    print(f"self-check: {len(failures)} failures" if failures else "self-check: passed")
    return doc, bool(failures)


# ---- the check ----------------------------------------------------------------------------------------------------

def load_capture(folder):
    path = os.path.join(folder, JSON_NAME)
    try:
        doc = json.load(open(path))
    except OSError as e:
        raise Usage(f"capture_quant: --check-only {folder} must hold {JSON_NAME}: {e.strerror}")
    except ValueError as e:
        raise Corrupt(f"capture_quant: {path} is not JSON: {e}")
    return doc


def read_checked(folder, name, meta):
    try:
        data = gzip.decompress(open(os.path.join(folder, name), "rb").read())
    except OSError as e:
        raise Corrupt(f"capture_quant: {os.path.join(folder, name)} cannot be read as gzip: {e}")
    if sha(data) != meta["sha256"]:
        raise Corrupt(f"capture_quant: {name} has SHA-256 {sha(data)}, its JSON says {meta['sha256']}")
    return data


def mismatch_line(op, c, dt, k, values, scal, got, want):
    """One TestFloat-style line for block k: the first differing element (or the scale), its inputs, got, expected."""
    fam, _ = qr.OP_LAYOUT[op]
    names = ("gate", "up") if op.startswith("silu") else ("x", "bias") if op.startswith("bias") else ("x",)
    gc, gsc = got
    wc, wsc = want
    diff = np.nonzero(gc[k] != wc[k])[0]
    i = int(diff[0]) if len(diff) else None
    ins = " ".join(f"{nm}=0x{int(values[k, j, i if i is not None else 0]):04X}" for j, nm in enumerate(names))
    # the block's largest-magnitude pattern of the first input (NaN counts above Inf)
    amax = "max=0x%04X" % int(values[k, 0][np.argmax(values[k, 0] & 0x7FFF)])
    gs = (" gs=0x%08X" % int(np.asarray(scal[k, 0], np.float32).view(np.uint32))) if scal is not None else ""
    fmt_s = (lambda s: "0x%02X" % int(s)) if fam == "nvfp4" else \
        (lambda s: "0x%08X" % int(np.asarray(s, np.float32).view(np.uint32)))
    where = f"[block={k},i={i}]" if i is not None else f"[block={k},scale]"
    more = f" (+{len(diff) - 1} more codes)" if len(diff) > 1 else ""
    g = f"code 0x{int(gc[k, i]):02X} scale {fmt_s(gsc[k])}" if i is not None else f"scale {fmt_s(gsc[k])}"
    w = f"code 0x{int(wc[k, i]):02X} scale {fmt_s(wsc[k])}" if i is not None else f"scale {fmt_s(wsc[k])}"
    return f"{op} {c} {dt} {where} {ins} {amax}{gs} => {g} expected {w}{more}"


def compare(op, c, dt, inp, got_bytes, want_bytes, shown, show):
    values, scal = qr.unpack_inputs(op, inp)
    want = qr.unpack_outputs(op, want_bytes)
    try:
        got = qr.unpack_outputs(op, got_bytes)
    except qr.RecordError as e:
        raise Usage(f"capture_quant: fuseproof eval's output of {op} {c} {dt}: {e}")
    if len(got[0]) != len(want[0]):
        raise Usage(f"capture_quant: fuseproof eval wrote {len(got[0])} records of {op} {c} {dt}, "
                    f"expected {len(want[0])}")
    # Compare encodings: the scale's bytes, never its value (NaN != NaN, -0 == +0).
    bad_codes = np.any(got[0] != want[0], axis=1)
    gs_b = np.ascontiguousarray(got[1]).view(np.uint8).reshape(len(got[1]), -1)
    ws_b = np.ascontiguousarray(want[1]).view(np.uint8).reshape(len(want[1]), -1)
    bad = bad_codes | np.any(gs_b != ws_b, axis=1)
    for k in np.nonzero(bad)[0]:
        if shown[0] < show:
            print(mismatch_line(op, c, dt, int(k), values, scal, got, want))
        shown[0] += 1
    return int(bad.sum()), len(bad)


def check(folder, doc, fuseproof, show, select=None):
    """Evaluates every selected output file's input with `fuseproof eval` and compares; select = a set of
    (op, contract, dtype)."""
    total_bad = total = 0
    shown = [0]
    with tempfile.TemporaryDirectory(prefix="capture_quant_") as tmp:
        for name, meta in sorted(doc["files"].items()):
            if meta["role"] != "output" or (select and (meta["op"], meta["contract"], meta["dtype"]) not in select):
                continue
            op, c, dt = meta["op"], meta["contract"], meta["dtype"]
            inp = read_checked(folder, meta["input"], doc["files"][meta["input"]])
            want = read_checked(folder, name, meta)
            ipath, opath = os.path.join(tmp, "in.bin"), os.path.join(tmp, "out.bin")
            open(ipath, "wb").write(inp)
            cmd = [fuseproof, "eval", "--op", op, "--contract", c, "--dtype", dt, "--in", ipath, "--out", opath]
            try:
                r = subprocess.run(cmd, capture_output=True, text=True)
            except OSError as e:
                raise Usage(f"capture_quant: --check-with {fuseproof} cannot be run: {e.strerror}")
            if r.returncode != 0:
                last = (r.stderr.strip().splitlines() or ["(no message)"])[-1]
                raise Usage(f"capture_quant: fuseproof eval --op {op} --contract {c} --dtype {dt} exited "
                            f"{r.returncode}: {last}")
            bad, n = compare(op, c, dt, inp, open(opath, "rb").read(), want, shown, show)
            print(f"In {n} blocks, {'no errors found' if not bad else f'{bad} blocks differ'} in {op} {c} {dt}.",
                  flush=True)
            total_bad += bad
            total += n
    if shown[0] > show:
        print(f"({shown[0] - show} more mismatching blocks not shown)")
    print(f"total: {total_bad} of {total} blocks differ" if total_bad else
          f"total: in {total} blocks, no errors found")
    return 1 if total_bad else 0


# ---- command line -------------------------------------------------------------------------------------------------

def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", help="capture into this folder (CUDA needed)")
    ap.add_argument("--check-only", metavar="DIR", help="check an existing capture (needs --check-with)")
    ap.add_argument("--check-with", metavar="FUSEPROOF", help="the fuseproof binary whose eval is compared")
    ap.add_argument("--ops", default=",".join(qr.OP_LAYOUT), help="comma-separated ops")
    ap.add_argument("--dtypes", default=",".join(DTYPES))
    ap.add_argument("--contracts", default="", help="comma-separated contracts (default: all of each op's family)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED)
    ap.add_argument("--blocks-nvfp4", type=int, default=DEFAULT_BLOCKS["nvfp4"])
    ap.add_argument("--blocks-fp8", type=int, default=DEFAULT_BLOCKS["fp8"])
    ap.add_argument("--show", type=int, default=20, help="mismatch lines printed before only counting")
    args = ap.parse_args(argv)
    if bool(args.out) == bool(args.check_only):
        raise Usage(f"capture_quant: exactly one of --out and --check-only is required, got "
                    f"{'both' if args.out else 'neither'}")
    if args.check_only and not args.check_with:
        raise Usage("capture_quant: --check-only needs --check-with FUSEPROOF")
    args.ops = args.ops.split(",")
    for op in args.ops:
        if op not in qr.OP_LAYOUT:
            raise Usage(f"capture_quant: --ops entries must be among {', '.join(qr.OP_LAYOUT)}, got {op}")
    args.dtypes = args.dtypes.split(",")
    for dt in args.dtypes:
        if dt not in DTYPES:
            raise Usage(f"capture_quant: --dtypes entries must be bf16 or fp16, got {dt}")
    chosen = [c for c in args.contracts.split(",") if c]
    known = [c for cs in CONTRACTS.values() for c in cs]
    for c in chosen:
        if c not in known:
            raise Usage(f"capture_quant: --contracts entries must be among {', '.join(known)}, got {c}")
    args.contracts = {f: tuple(c for c in cs if not chosen or c in chosen) for f, cs in CONTRACTS.items()}
    args.blocks = {"nvfp4": args.blocks_nvfp4, "fp8": args.blocks_fp8}
    for f, n in args.blocks.items():
        if not 1 <= n <= 4096:
            raise Usage(f"capture_quant: --blocks-{f} must be in 1..4096, got {n}")
    return args


def main(argv=None):
    try:
        args = parse(argv)
        failed = False
        if args.out:
            doc, failed = capture(args)
            folder = args.out
        else:
            folder = args.check_only
            doc = load_capture(folder)
        if not args.check_with:
            return 1 if failed else 0
        select = {(op, c, dt) for op in args.ops for c in args.contracts[qr.OP_LAYOUT[op][0]] for dt in args.dtypes}
        return max(check(folder, doc, args.check_with, args.show, select), 1 if failed else 0)
    except Incomplete as e:
        print(f"capture_quant: {e}", file=sys.stderr)
        return 3
    except Usage as e:
        print(str(e), file=sys.stderr)
        return 2
    except OutputError as e:
        print(f"capture_quant: --out: {e}", file=sys.stderr)
        return 2
    except Corrupt as e:
        print(str(e), file=sys.stderr)
        return 4


if __name__ == "__main__":
    sys.exit(main())
