"""quant_cross_check_test.py: python/fuseproof/quant_references.py's torch references, run on this machine's CPU torch,
against `fuseproof eval`, byte for byte (pytest; the binary from $FUSEPROOF_BIN).

torch 1.13 has no float8 and the CPU is not CUDA, so two seams model the GPU (fuseproof/quant_emulation.py), and
nothing else is changed:
- quant_references.e4m3_cast, the one place the references cast to float8_e4m3fn, is replaced by c10's
  fp8e4m3fn_from_fp32_value written in numpy (round to nearest even onto E4M3, NaN above 464 and for +-Inf), with a
  NaN input taken as the GPU's positive canonical NaN (0x7F; the CPU's 0/0 NaN is negative, which c10 would code 0xFF);
- the inputs are a Tensor subclass whose `tensor / python_number` is CUDA's div_true_kernel_cuda: a multiply by the
  binary32 reciprocal of the number (the CPU divides); every other op is the CPU's own.
NaN float32 scales are compared as the GPU's canonical 0x7FFFFFFF (the CPU keeps the input NaN's payload).

Covered: nvfp4_quant (vllm-ref, te, flashinfer-exact), fp8_group_quant (fp8-group, fp8-group-ue8m0), and the
silu_and_mul fused ops on their gate = 64 blocks (silu(64) = 64 exactly, so the CPU's expf cannot differ from the
device's; these check the input order gate, up). Not covered here: rcp-approx (PTX rcp.approx, a CuPy kernel: the GPU
only) and bias_gelu_tanh_nvfp4_quant (the CPU's tanh is not CUDA's; the activation is the family op's own proof).
The blocks are scripts/capture_quant.py's: every edge block of the family and 256 random ones, per dtype.
"""

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "capture_quant.py")
sys.path.insert(0, os.path.join(ROOT, "python"))

from fuseproof import quant_records as qr  # noqa: E402
from fuseproof import quant_emulation  # noqa: E402
from fuseproof import quant_references as q  # noqa: E402

_spec = importlib.util.spec_from_file_location("capture_quant", SCRIPT)
cq = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cq)

FUSEPROOF = os.environ.get("FUSEPROOF_BIN", "")
TDTYPE = {"bf16": torch.bfloat16, "fp16": torch.float16}
RANDOM_BLOCKS = 256


# ---- the GPU's semantics on the CPU: fuseproof.quant_emulation --------------------------------------------------

e4m3_bytes_emulated = quant_emulation.e4m3_bytes_emulated
e4m3_cast_emulated = quant_emulation.e4m3_cast_emulated
CudaScalarDivision = quant_emulation.CudaScalarDivision


def reference_on_cpu(op, contract, dt, values, gs):
    inputs = [torch.from_numpy(values[:, i, :].astype(np.int16)).view(TDTYPE[dt]).as_subclass(CudaScalarDivision)
              for i in range(values.shape[1])]
    g = torch.from_numpy(gs.reshape(-1, 1)).as_subclass(CudaScalarDivision) if gs is not None else None
    codes, scales = q.run_op(op, contract, inputs, g)
    codes = codes.as_subclass(torch.Tensor).numpy().astype(np.uint8)
    scales = scales.as_subclass(torch.Tensor).numpy()
    if scales.dtype == np.float32:
        scales = np.where(np.isnan(scales), np.uint32(0x7FFFFFFF).view(np.float32), scales).astype(np.float32)
    return codes, scales


# ---- blocks and eval ----------------------------------------------------------------------------------------------

def blocks(op, dt):
    fam = qr.OP_LAYOUT[op][0]
    b = cq.Blocks(qr.FAMILY_LAYOUT[fam][0], dt, np.random.Generator(np.random.PCG64(0)))
    (cq.nvfp4_edges if fam == "nvfp4" else cq.fp8_edges)(b)
    seed = 0x5EED0035 + 7 * cq.DTYPES.index(dt)
    y, gs, _ = cq.make_blocks(fam, dt, len(b.rows) + RANDOM_BLOCKS, seed)
    values = cq.op_inputs(op, y, dt, np.random.Generator(np.random.PCG64(seed + 1)))
    if values.shape[1] == 2 and op.startswith("silu_and_mul"):
        half = y.shape[0] // 2  # op_inputs gives gate = 64 to the first half only
        values, gs = values[:half], gs[:half]
    return values, (gs if qr.FAMILY_LAYOUT[fam][1] else None)


def eval_outputs(op, contract, dt, values, gs, tmp_path):
    fin, fout = tmp_path / f"{op}_{contract}_{dt}.in", tmp_path / f"{op}_{contract}_{dt}.out"
    fin.write_bytes(qr.pack_inputs(op, values, None if gs is None else gs.reshape(-1, 1)))
    r = subprocess.run([FUSEPROOF, "eval", "--op", op, "--contract", contract, "--dtype", dt, "--in", str(fin),
                        "--out", str(fout)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return qr.unpack_outputs(op, fout.read_bytes())


def mismatches(op, contract, dt, values, gs, got, want, limit=8):
    """TestFloat-style lines for the blocks whose bytes differ, and their count."""
    (gc, gsc), (wc, wsc) = got, want
    gb = np.ascontiguousarray(gsc).view(np.uint8).reshape(len(gsc), -1)
    wb = np.ascontiguousarray(wsc).view(np.uint8).reshape(len(wsc), -1)
    bad = np.flatnonzero(np.any(gc != wc, 1) | np.any(gb != wb, 1))
    lines = []
    for k in bad[:limit]:
        i = int(np.argmax(gc[k] != wc[k])) if np.any(gc[k] != wc[k]) else 0
        ins = " ".join(f"in{j}=0x{int(values[k, j, i]):04X}" for j in range(values.shape[1]))
        g = f" gs=0x{int(np.float32(gs[k]).view(np.uint32)):08X}" if gs is not None else ""
        lines.append(f"{op} {contract} {dt} [block={k},i={i}] {ins}{g} => code 0x{int(wc[k, i]):02X} scale "
                     f"{wb[k].tobytes().hex()} expected code 0x{int(gc[k, i]):02X} scale {gb[k].tobytes().hex()}")
    return lines, len(bad)


# ---- tests --------------------------------------------------------------------------------------------------------

def test_e4m3_emulation_known_bytes():
    f = np.array([448.0, 464.0, 464.00003, 480.0, -0.0, 2.0 ** -9, 2.0 ** -10, 3 * 2.0 ** -10, 1.0, 17.0, -240.0,
                  np.inf, -np.inf, np.nan, -np.nan, 2.0 ** -6, 0.0], np.float32)
    want = [0x7E, 0x7E, 0x7F, 0x7F, 0x80, 0x01, 0x00, 0x02, 0x38, 0x58, 0xF7, 0x7F, 0xFF, 0x7F, 0x7F, 0x08, 0x00]
    assert e4m3_bytes_emulated(f).tolist() == want
    # Negative control: 464 is the tie between 448 (0x7E) and the NaN pattern; one ulp less is 448, one more is NaN.
    assert e4m3_bytes_emulated(np.array([np.nextafter(np.float32(464), np.float32(0))], np.float32))[0] == 0x7E


def test_cuda_scalar_division_multiplies_by_the_reciprocal():
    # Over every finite bf16 value t: the emulated t / 448.0 is t * fl32(1/448) (0x3B124925).
    t = torch.from_numpy((np.arange(0, 0x7F80, dtype=np.uint32) << 16).view(np.float32))
    got = (t.as_subclass(CudaScalarDivision) / 448.0).as_subclass(torch.Tensor)
    assert torch.equal(got, t * float(np.float32(1.0) / np.float32(448.0)))
    assert not torch.equal(t / 448.0, got), "the CPU's true division must differ somewhere (control)"


CASES = [("nvfp4_quant", "vllm-ref", "flashinfer-exact"), ("nvfp4_quant", "flashinfer-exact", "vllm-ref"),
         ("nvfp4_quant", "te", "vllm-ref"), ("fp8_group_quant", "fp8-group", "fp8-group-ue8m0"),
         ("fp8_group_quant", "fp8-group-ue8m0", "fp8-group"), ("silu_and_mul_nvfp4_quant", "vllm-ref", "te"),
         ("silu_and_mul_fp8_group_quant", "fp8-group", "fp8-group-ue8m0")]


@pytest.mark.parametrize("dt", ["bf16", "fp16"])
@pytest.mark.parametrize("op,contract,control", CASES)
def test_torch_reference_on_cpu_equals_eval(op, contract, control, dt, tmp_path, monkeypatch):
    if not FUSEPROOF:
        pytest.skip("FUSEPROOF_BIN is not set (ctest sets it to build/bin/fuseproof)")
    monkeypatch.setattr(q, "e4m3_cast", e4m3_cast_emulated)
    values, gs = blocks(op, dt)
    want = reference_on_cpu(op, contract, dt, values, gs)
    assert len(np.unique(want[0])) > 2, "the reference's codes are trivially constant"
    lines, bad = mismatches(op, contract, dt, values, gs, eval_outputs(op, contract, dt, values, gs, tmp_path), want)
    assert bad == 0, "\n".join(lines + [f"{bad} of {len(values)} blocks differ"])
    print(f"In {len(values)} blocks, no errors found in {op} {contract} {dt} (torch {torch.__version__} CPU, "
          f"emulated float8 cast and CUDA scalar division)")
    # Negative control: eval under another contract must differ from this reference somewhere on the same blocks.
    _, bad = mismatches(op, control, dt, values, gs, eval_outputs(op, control, dt, values, gs, tmp_path), want)
    assert bad > 0, f"{op} {dt}: eval --contract {control} equals the {contract} reference on every block"
    # Negative control for the fused ops: the records with gate and up swapped must differ.
    if values.shape[1] == 2:
        swapped = values[:, ::-1, :].copy()
        _, bad = mismatches(op, contract, dt, values, gs, eval_outputs(op, contract, dt, swapped, gs, tmp_path), want)
        assert bad > 0, f"{op} {dt}: swapping the inputs changes nothing"
