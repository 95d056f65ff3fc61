"""The quantization ops through the Python front end and the C++ engine, on the CPU (torch 1.13 in CI): the projects'
torch references (quant_subjects.py: the built-in reference subjects with quant_emulation's float8 cast and CUDA
scalar division) pass every class of the emulated backend's quick scope, each class with cases (streams and graph
skipped: the Python quantization runner has neither); the negative
controls (a scale one E4M3 code off, -0 codes written as +0) fail with records; a built-in subject that torch cannot
run here is reported unavailable (exit 3), never a pass."""

import json
import os
import subprocess
import sys

import pytest
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
SUBJECTS = os.path.dirname(HERE)  # quant_subjects.py


def audit(tmp_path, *args):
    """(exit status, JSON report, stdout + stderr) of python3 -m fuseproof audit ARGS --json."""
    report = tmp_path / "audit.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([SUBJECTS, os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, "-m", "fuseproof", "audit", *args, "--backend", "emulated", "--scope", "quick",
                        "--json", str(report)], capture_output=True, text=True, env=env, cwd=SUBJECTS)
    data = json.loads(report.read_text()) if report.exists() else {}
    return r.returncode, data, r.stdout + r.stderr


# (op, subject, dtype, --only or None for every class, isolated). The fused ops' activation runs on the CPU's torch
# (silu and gelu in float32, rounded to T once, as CUDA computes them), so its expf and tanhf are the CPU's:
# silu_and_mul meets no input where they differ from the CUDA model, while the CPU's tanhf gives exactly -1 far left
# (gelu -0.0, code +0) where CUDA's gives -0.99999994 (gelu -tiny, vLLM's code 0x8): the random-pattern classes of
# bias_gelu_tanh_nvfp4_quant measure libm, so it runs the classes whose inputs make the activation exact or
# representative of the quantizer (stages, blocks). nvfp4_quant runs as a user runs it, each class in a child process
# of its own; the others with --no-isolation, every class in one child: each child imports torch again, which tripled the
# test's time on a loaded 2-core machine (48.8 s against 17.7 s for fp8_group_quant) and proves nothing more here.
PASSING = [("nvfp4_quant", "nvfp4_quant_vllm_ref", "bf16", None, True),
           ("fp8_group_quant", "fp8_group_quant_fp8_group", "fp16", None, False),
           ("silu_and_mul_fp8_group_quant", "silu_and_mul_fp8_group_quant_fp8_group", "bf16", None, False),
           ("silu_and_mul_nvfp4_quant", "silu_and_mul_nvfp4_quant_te", "bf16", None, False),
           ("bias_gelu_tanh_nvfp4_quant", "bias_gelu_tanh_nvfp4_quant_vllm_ref", "bf16", "stages", True),
           ("bias_gelu_tanh_nvfp4_quant", "bias_gelu_tanh_nvfp4_quant_vllm_ref", "bf16", "blocks", True)]
# The other contracts' torch references (te, flashinfer-exact, fp8-group-ue8m0) are held to eval's records on blocks
# by Scripts_CaptureQuant.CrossCheckWithEvalOnCpu; auditing each here too would add a minute of CI for little.


@pytest.mark.parametrize("op,fn,dtype,only,isolated", PASSING)
def test_torch_reference_passes(op, fn, dtype, only, isolated, tmp_path):
    rc, report, out = audit(tmp_path, "--callable", "quant_subjects:" + fn, "--op", op, "--dtype", dtype,
                            *(["--only", only] if only else []), *([] if isolated else ["--no-isolation"]))
    assert rc == 0, out[-4000:]
    assert "VERDICT: PASS" in out
    assert report["isolation"].startswith("each check class in a child process" if isolated else
                                          "every check class in one child process"), report["isolation"]
    checks = report["checks"]
    assert len(checks) == (1 if only else 11), [c["class"] for c in checks]
    for c in checks:
        if c["class"] in ("streams", "graph"):
            # The Python quantization runner has no lanes or graphs: skipped with the reason, never a pass.
            assert c["status"] == "skipped" and c.get("note"), c
            continue
        assert c["status"] == "pass" and c["cases"] > 0, c


@pytest.mark.parametrize("op,fn", [("nvfp4_quant", "nvfp4_quant_scale_off_by_one"),
                                   ("fp8_group_quant", "fp8_group_quant_negative_zero_flipped")])
def test_negative_control_fails(op, fn, tmp_path):
    rc, report, out = audit(tmp_path, "--callable", "quant_subjects:" + fn, "--op", op, "--dtype", "bf16",
                            "--only", "blocks")
    assert rc == 1, out[-4000:]
    assert "VERDICT: FAIL" in out
    assert any(c["status"] == "fail" and c["mismatches"] > 0 and c.get("records") for c in report["checks"])


def test_compiled_reference_unavailable_without_torch_compile(tmp_path):
    if hasattr(torch, "compile"):
        pytest.skip("torch %s has torch.compile" % torch.__version__)
    rc, _, out = audit(tmp_path, "--subject", "torch-compile", "--op", "nvfp4_quant", "--contract", "te",
                       "--dtype", "bf16")
    assert rc == 3 and "subject torch-compile unavailable: torch" in out and "has no torch.compile" in out, out
