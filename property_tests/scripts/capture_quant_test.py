"""capture_quant_test.py: scripts/capture_quant.py and python/fuseproof/quant_references.py on the CPU (pytest).

What runs on torch 1.13 without float8: the record files (layout bytes, round trips, refusals), the block generator
(determinism, every edge kind present, the maximum at every position), the projects' E2M1 tables (vLLM's
cast_to_fp4, TransformerEngine's cast_to_fp4x2) against known codes and an independent round-to-nearest-even, the
script's exit 3 without CUDA, and --check-only against a stub `fuseproof` (equal, one flipped code, a corrupt file, a
failing eval). Each check has its negative control. The references against `fuseproof eval` on the CPU:
quant_cross_check_test.py.
"""

import gzip
import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "capture_quant.py")
sys.path.insert(0, os.path.join(ROOT, "python"))

from fuseproof import quant_records as qr  # noqa: E402
from fuseproof import quant_references as q  # noqa: E402

_spec = importlib.util.spec_from_file_location("capture_quant", SCRIPT)
cq = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cq)


# ---- records ------------------------------------------------------------------------------------------------------

def test_record_bytes_are_the_eval_format():
    # nvfp4_quant: 16 little-endian uint16, then the float32 global scale; output 16 code bytes then the E4M3 byte.
    values = np.arange(0x3F80, 0x3F90, dtype=np.uint16).reshape(1, 1, 16)
    data = qr.pack_inputs("nvfp4_quant", values, np.array([[1.0]], np.float32))
    assert data == b"".join(int(v).to_bytes(2, "little") for v in values.ravel()) + b"\x00\x00\x80\x3f"
    out = qr.pack_outputs("nvfp4_quant", np.arange(16, dtype=np.uint8).reshape(1, 16), np.array([0x7E], np.uint8))
    assert out == bytes(range(16)) + b"\x7e"
    # A 2-input op: the first input's block, then the second's, then the scalar.
    two = np.stack([np.full(16, 0x1111, np.uint16), np.full(16, 0x2222, np.uint16)])[None]
    data = qr.pack_inputs("silu_and_mul_nvfp4_quant", two, np.array([[2.0]], np.float32))
    assert data == b"\x11\x11" * 16 + b"\x22\x22" * 16 + b"\x00\x00\x00\x40"
    # FP8 groups: 128 values, no scalar; the output scale is a little-endian float32.
    data = qr.pack_inputs("fp8_group_quant", np.full((1, 1, 128), 0xABCD, np.uint16))
    assert data == b"\xcd\xab" * 128
    out = qr.pack_outputs("fp8_group_quant", np.zeros((1, 128), np.uint8), np.array([0.5], np.float32))
    assert out == bytes(128) + b"\x00\x00\x00\x3f"


@pytest.mark.parametrize("op", list(qr.OP_LAYOUT))
def test_records_round_trip(op):
    rng = np.random.Generator(np.random.PCG64(7))
    fam, n = qr.OP_LAYOUT[op]
    block = qr.FAMILY_LAYOUT[fam][0]
    values = rng.integers(0, 65536, size=(5, n, block)).astype(np.uint16)
    scal = rng.random((5, 1)).astype(np.float32) if fam == "nvfp4" else None
    data = qr.pack_inputs(op, values, scal)
    got_v, got_s = qr.unpack_inputs(op, data)
    assert np.array_equal(got_v, values)
    assert (got_s is None) == (scal is None) and (scal is None or np.array_equal(got_s, scal))
    codes = rng.integers(0, 256, size=(5, block)).astype(np.uint8)
    scales = rng.integers(0, 256, size=5).astype(np.uint8) if fam == "nvfp4" else rng.random(5).astype(np.float32)
    c, s = qr.unpack_outputs(op, qr.pack_outputs(op, codes, scales))
    assert np.array_equal(c, codes) and np.array_equal(s, scales)
    # Negative control: one byte changed is seen, and a partial record is refused.
    spoiled = bytearray(data)
    spoiled[3] ^= 1
    assert not np.array_equal(qr.unpack_inputs(op, bytes(spoiled))[0], values)
    with pytest.raises(qr.RecordError, match="not a whole number"):
        qr.unpack_inputs(op, data[:-1])


# ---- the block generator ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("family", ["nvfp4", "fp8"])
@pytest.mark.parametrize("dt", ["bf16", "fp16"])
def test_blocks_deterministic_and_cover_the_edges(family, dt):
    y, gs, kinds = cq.make_blocks(family, dt, cq.DEFAULT_BLOCKS[family], cq.DEFAULT_SEED)
    y2, gs2, _ = cq.make_blocks(family, dt, cq.DEFAULT_BLOCKS[family], cq.DEFAULT_SEED)
    assert np.array_equal(y, y2) and np.array_equal(gs.view(np.uint32), gs2.view(np.uint32))
    y3, _, _ = cq.make_blocks(family, dt, cq.DEFAULT_BLOCKS[family], cq.DEFAULT_SEED + 1)
    assert not np.array_equal(y, y3)  # the seed reaches the blocks
    assert len(y) == cq.DEFAULT_BLOCKS[family]
    want = {"all-zero", "signed-zeros", "subnormal-only", "nan-inf-member", "max-position", "random"}
    want |= ({"e2m1-midpoints", "e4m3-scale-midpoints", "scale-overflow", "global-scale-binade"} if family == "nvfp4"
             else {"scale-boundary", "e4m3-midpoints"})
    assert want <= set(kinds)
    # The maximum sits at every position.
    pos = {int(np.argmax(y[i] & 0x7FFF)) for i, k in enumerate(kinds) if k == "max-position"}
    assert pos == set(range(y.shape[1]))
    if family == "nvfp4":  # every binade of the global scale
        exps = {int((g.view(np.uint32) >> 23) & 0xFF) for g, k in zip(gs, kinds) if k == "global-scale-binade"}
        assert exps == set(range(1, 255))


def test_midpoint_blocks_scale_onto_the_midpoints():
    # gs = 2^j and amax = 6 * 2^(k-j): every member divided by 2^(k-j) is an E2M1 midpoint (step-0 blocks).
    y, gs, kinds = cq.make_blocks("nvfp4", "bf16", 4096, cq.DEFAULT_SEED)
    found = 0
    for row, g, k in zip(y, gs, kinds):
        if k != "e2m1-midpoints":
            continue
        v = np.abs(cq.tval(row, "bf16"))
        unit = v.max() / 6.0
        m = np.sort(v / unit)[:-1]
        if np.all(np.isin(m, cq.E2M1_MIDPOINTS)):
            found += 1
    assert found >= 10


# ---- the projects' E2M1 tables ------------------------------------------------------------------------------------

# (input, vLLM code, TE code): ties go to the even code; vLLM's -0.0 is +0 (torch.sign(-0.0) is +0 on the CPU),
# a negative that rounds to 0 is -0 (0x8) in both; TE's NaN is code 0, vLLM's NaN value has no code.
KNOWN = [(0.0, 0x0, 0x0), (-0.0, 0x0, 0x0), (0.25, 0x0, 0x0), (0.2500001, 0x1, 0x1), (-0.1, 0x8, 0x8),
         (0.75, 0x2, 0x2), (-0.75, 0xA, 0xA), (1.25, 0x2, 0x2), (1.2500001, 0x3, 0x3), (1.75, 0x4, 0x4),
         (2.5, 0x4, 0x4), (2.5000002, 0x5, 0x5), (3.5, 0x6, 0x6), (5.0, 0x6, 0x6), (5.0000005, 0x7, 0x7),
         (6.0, 0x7, 0x7), (-6.0, 0xF, 0xF), (-2.9, 0xD, 0xD), (float("nan"), q.kE2m1NanValue, 0x0)]


def vllm_codes(cast):
    x = torch.tensor([k[0] for k in KNOWN], dtype=torch.float32)
    return q.e2m1_codes_of_values(cast(x.clone())).tolist()


def test_vllm_cast_to_fp4_known_codes():
    assert vllm_codes(q.cast_to_fp4) == [k[1] for k in KNOWN]


def test_te_cast_to_fp4x2_known_codes():
    x = torch.tensor([k[0] for k in KNOWN], dtype=torch.float32)
    assert q.cast_to_fp4_codes_te(x).tolist() == [k[2] for k in KNOWN]


def test_known_codes_catch_a_wrong_tie_rule():
    # Negative control: the same table with ties away from zero ([0.25 -> 0.5), ...) fails the known codes.
    def ties_away(x):
        sign = torch.sign(x)
        x = torch.abs(x)
        edges = [(0.25, 0.0), (0.75, 0.5), (1.25, 1.0), (1.75, 1.5), (2.5, 2.0), (3.5, 3.0), (5.0, 4.0)]
        out = torch.full_like(x, 6.0)
        for hi, v in reversed(edges):
            out[x < hi] = v
        out[torch.isnan(x)] = float("nan")
        return out * sign
    assert vllm_codes(ties_away) != [k[1] for k in KNOWN]


rne_e2m1_codes = cq.rne_e2m1_codes


def test_vllm_table_is_rne_on_float32():
    # Every 4099th binary32 pattern in [-8, 8] except -0.0 (which the table makes +0): the table, after the +-6 clamp
    # the references apply, equals the independent RNE.
    u = np.arange(0, 0x41000000, 4099, dtype=np.uint32)
    x = np.concatenate([u.view(np.float32), (u | 0x80000000).view(np.float32)])
    got = q.e2m1_codes_of_values(q.cast_to_fp4(torch.clamp(torch.from_numpy(x.copy()), -6.0, 6.0))).numpy()
    want = rne_e2m1_codes(x)
    # A negative that rounds to zero: the table gives 0 * -1 = -0.0 (0x8), and so does the RNE; -0.0 itself: the
    # table gives 0 * sign(-0.0) = +0 (0x0), and so does the RNE (the H100 capture's midpoint blocks hold such members).
    assert np.array_equal(got, want), np.nonzero(got != want)[0][:5]
    assert rne_e2m1_codes(np.float32(-0.0)) == 0 and rne_e2m1_codes(np.float32(-0.1)) == 8
    assert not np.array_equal(got, rne_e2m1_codes(x * np.float32(1.0001)))  # negative control: other inputs


def test_self_check_of_the_midpoint_blocks():
    # The capture's guard: the RNE codes and the E4M3 byte of 2^k pass; one code off (negative control) fails.
    y, gs, kinds = cq.make_blocks("nvfp4", "bf16", 4096, cq.DEFAULT_SEED)
    codes = np.zeros(y.shape, np.uint8)
    scales = np.zeros(len(y), np.uint8)
    rows = [r for r, k in enumerate(kinds) if k == "e2m1-midpoints"]
    for r in rows:
        v = cq.tval(y[r], "bf16")
        codes[r] = cq.rne_e2m1_codes(v / (np.abs(v).max() / 6.0))
        k = int(np.round(np.log2(np.abs(v).max() / 6.0 * float(gs[r]))))
        scales[r] = (k + 7) << 3 if k >= -6 else 1 << (k + 9)
    assert scales[rows].min() >= 0x01 and 0x38 in scales[rows]  # 2^-9 .. 2^8; 1.0 is 0x38
    assert cq.self_check("nvfp4_quant", "vllm-ref", "bf16", y, gs, kinds, codes, scales) == []
    codes[rows[3], 5] ^= 1
    bad = cq.self_check("nvfp4_quant", "te", "bf16", y, gs, kinds, codes, scales)
    assert len(bad) == 1 and bad[0].startswith(f"self-check: nvfp4_quant te bf16 [block={rows[3]}]")
    assert cq.self_check("nvfp4_quant", "rcp-approx", "bf16", y, gs, kinds, codes, scales) == []  # not checked


# ---- float8 ------------------------------------------------------------------------------------------------------

def test_float8_references_refuse_cleanly_without_float8():
    if q.has_float8():
        pytest.skip(f"torch {torch.__version__} has float8_e4m3fn")
    x = torch.zeros(1, 16, dtype=torch.bfloat16)
    for fn in (q.nvfp4_vllm_ref, q.nvfp4_te_ref, q.nvfp4_flashinfer_ref):
        with pytest.raises(q.Unsupported, match="has no torch.float8_e4m3fn"):
            fn(x, torch.ones(1, 1))
    for fn in (q.fp8_group_sglang, q.fp8_group_ue8m0):
        with pytest.raises(q.Unsupported):
            fn(torch.zeros(1, 128, dtype=torch.bfloat16))


# ---- the script ---------------------------------------------------------------------------------------------------

def run(*args, env=None):
    return subprocess.run([sys.executable, SCRIPT, *args], capture_output=True, text=True,
                          env=dict(os.environ, **(env or {})))


def test_capture_without_cuda_exits_3_with_one_line(tmp_path):
    if q.has_float8() and torch.cuda.is_available():
        pytest.skip("CUDA and float8 here: the capture would run")
    r = run("--out", str(tmp_path / "cap"))
    assert r.returncode == 3, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("capture_quant: ") and not lines[0].endswith(".")
    assert not (tmp_path / "cap" / cq.JSON_NAME).exists()


def test_bad_arguments_exit_2_with_one_line(tmp_path):
    for args, text in ((["--out", str(tmp_path), "--ops", "softmax"], "--ops entries must be among"),
                       (["--check-only", str(tmp_path)], "--check-only needs --check-with"),
                       ([], "exactly one of --out and --check-only is required, got neither"),
                       (["--out", str(tmp_path), "--blocks-fp8", "5000"], "--blocks-fp8 must be in 1..4096, got 5000")):
        r = run(*args)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and text in r.stderr, (args, r.stderr)


STUB = """#!{python}
# A stand-in for `fuseproof eval`: copies $STUB_OUT to --out, flipping byte $STUB_FLIP, or exits $STUB_EXIT.
import os, sys
a = sys.argv
if os.environ.get("STUB_EXIT"):
    print("eval: unknown op " + a[a.index("--op") + 1], file=sys.stderr)
    sys.exit(int(os.environ["STUB_EXIT"]))
data = bytearray(open(os.environ["STUB_OUT"], "rb").read())
if os.environ.get("STUB_FLIP"):
    data[int(os.environ["STUB_FLIP"])] ^= int(os.environ.get("STUB_XOR", "1"))
open(a[a.index("--out") + 1], "wb").write(bytes(data))
"""


@pytest.fixture
def fake_capture(tmp_path):
    """A capture of nvfp4_quant vllm-ref bf16 (3 blocks) written by hand, and a stub fuseproof."""
    cap = tmp_path / "cap"
    cap.mkdir()
    values = np.arange(3 * 16, dtype=np.uint16).reshape(3, 1, 16) + 0x3F00
    inp = qr.pack_inputs("nvfp4_quant", values, np.array([[1.0], [2.0], [0.5]], np.float32))
    out = qr.pack_outputs("nvfp4_quant", np.tile(np.arange(16, dtype=np.uint8), (3, 1)),
                          np.array([0x38, 0x40, 0x7E], np.uint8))
    (cap / "nvfp4_quant_bf16_in.bin.gz").write_bytes(gzip.compress(inp, mtime=0))
    (cap / "nvfp4_quant_vllm-ref_bf16_out.bin.gz").write_bytes(gzip.compress(out, mtime=0))
    sha = lambda d: hashlib.sha256(d).hexdigest()  # noqa: E731
    doc = {"files": {
        "nvfp4_quant_bf16_in.bin.gz": {"op": "nvfp4_quant", "dtype": "bf16", "role": "input", "sha256": sha(inp)},
        "nvfp4_quant_vllm-ref_bf16_out.bin.gz": {"op": "nvfp4_quant", "contract": "vllm-ref", "dtype": "bf16",
                                                 "role": "output", "input": "nvfp4_quant_bf16_in.bin.gz",
                                                 "sha256": sha(out)}}}
    (cap / cq.JSON_NAME).write_text(json.dumps(doc))
    raw = tmp_path / "expected.bin"
    raw.write_bytes(out)
    stub = tmp_path / "fuseproof"
    stub.write_text(STUB.format(python=sys.executable))
    stub.chmod(0o755)
    return cap, stub, raw


def test_check_only_equal_outputs_pass(fake_capture):
    cap, stub, raw = fake_capture
    r = run("--check-only", str(cap), "--check-with", str(stub), env={"STUB_OUT": str(raw)})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "In 3 blocks, no errors found in nvfp4_quant vllm-ref bf16." in r.stdout


def test_check_only_flipped_code_fails_testfloat_style(fake_capture):
    cap, stub, raw = fake_capture
    # Byte 17 + 5 is block 1's code 5.
    r = run("--check-only", str(cap), "--check-with", str(stub), env={"STUB_OUT": str(raw), "STUB_FLIP": "22"})
    assert r.returncode == 1, r.stdout + r.stderr
    assert re.search(r"nvfp4_quant vllm-ref bf16 \[block=1,i=5\] x=0x3F15 max=0x3F1F gs=0x40000000 "
                     r"=> code 0x04 scale 0x40 expected code 0x05 scale 0x40", r.stdout), r.stdout
    assert "total: 1 of 3 blocks differ" in r.stdout
    # The scale byte alone (block 2's, byte 50): a scale record.
    r = run("--check-only", str(cap), "--check-with", str(stub), env={"STUB_OUT": str(raw), "STUB_FLIP": "50"})
    assert r.returncode == 1 and "[block=2,scale]" in r.stdout and "=> scale 0x7F expected scale 0x7E" in r.stdout


def test_check_only_refuses_a_corrupt_capture_and_a_failing_eval(fake_capture):
    cap, stub, raw = fake_capture
    f = cap / "nvfp4_quant_vllm-ref_bf16_out.bin.gz"
    good = f.read_bytes()
    f.write_bytes(gzip.compress(b"\x00" * 51, mtime=0))
    r = run("--check-only", str(cap), "--check-with", str(stub), env={"STUB_OUT": str(raw)})
    assert r.returncode == 4 and "its JSON says" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    f.write_bytes(good)
    r = run("--check-only", str(cap), "--check-with", str(stub), env={"STUB_OUT": str(raw), "STUB_EXIT": "2"})
    assert r.returncode == 2 and "exited 2: eval: unknown op nvfp4_quant" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
