"""Tests of the quantization bridge (fuseproof/_quant_bridge.py) on the CPU: the conversion of a subject's (codes,
scales) into the kernel ABI's bytes (kernels/fuseproof_kernel_abi.h, version 4: E2M1 element 2j in the low nibble of
byte j, E4M3 codes one byte each, scales as E4M3 bytes or little-endian binary32 in the linear or 128x4 swizzled
layout, checked cell by cell against reference/quant_spec.h's scale_offset through the extension), the calling
convention of QuantBridge.call, and the built-in reference subjects against quant_references.run_op on blocks; each
check with a negative control. The audits through the C++ engine are test_quant_audit.py."""

import struct

import pytest
import torch

from fuseproof import Unavailable, _engine, quant_references as q, subjects
from fuseproof._environment import extension
from fuseproof._quant_bridge import QuantBridge, Rejected, convert, pack_e2m1, scale_bytes, scale_cells

EXT = extension()


def swizzled_index(rows, blocks, device=None):
    """The ABI's cell of block (r, k) in the 128x4 tiles, [rows, blocks] int64 (kernels/fuseproof_kernel_abi.h):
    ((r / 128) * ceil(blocks / 4) + k / 4) * 512 + (r % 32) * 16 + ((r / 32) % 4) * 4 + k % 4."""
    r = torch.arange(rows, dtype=torch.int64, device=device).unsqueeze(1)
    k = torch.arange(blocks, dtype=torch.int64, device=device).unsqueeze(0)
    return ((r // 128) * ((blocks + 3) // 4) + k // 4) * 512 + (r % 32) * 16 + ((r // 32) % 4) * 4 + k % 4


def test_e2m1_packing_puts_element_2j_in_the_low_nibble():
    codes = torch.tensor([[0x1, 0x2, 0xF, 0x8], [0x0, 0x7, 0x9, 0x3]], dtype=torch.uint8)
    assert pack_e2m1(codes, 2, 4).tolist() == [[0x21, 0x8F], [0x70, 0x39]]
    # Control: the other nibble order gives other bytes on these codes.
    assert pack_e2m1(codes, 2, 4).tolist() != [[0x12, 0xF8], [0x07, 0x93]]


def test_e2m1_packed_codes_pass_through_and_no_code_is_its_low_nibble():
    packed = torch.tensor([[0x21, 0x8F]], dtype=torch.uint8)
    assert pack_e2m1(packed, 1, 4).tolist() == [[0x21, 0x8F]]
    # A reference's NaN without a code (0xFF) goes out as 0xF; any other byte above 0xF is refused.
    assert pack_e2m1(torch.tensor([[0xFF, 0x1]], dtype=torch.uint8), 1, 2).tolist() == [[0x1F]]
    with pytest.raises(Rejected, match=r"E2M1 code 0x23 at \[r=0,c=1\], which is no code"):
        pack_e2m1(torch.tensor([[0x1, 0x23]], dtype=torch.uint8), 1, 2)
    with pytest.raises(Rejected, match=r"expected \[2, 4\] codes or \[2, 2\] packed bytes"):
        pack_e2m1(torch.zeros(2, 3, dtype=torch.uint8), 2, 4)
    with pytest.raises(Rejected, match="expected uint8"):
        pack_e2m1(torch.zeros(2, 4, dtype=torch.float32), 2, 4)


@pytest.mark.parametrize("rows,blocks", [(1, 1), (3, 5), (130, 4), (257, 9)])
def test_the_abi_formula_is_the_reference_scale_offset(rows, blocks):
    idx = swizzled_index(rows, blocks)
    want = [[EXT.scale_offset("swizzled-128x4", r, k, rows, blocks) for k in range(blocks)] for r in range(rows)]
    assert idx.tolist() == want
    cells = scale_cells("swizzled-128x4", rows, blocks)
    assert cells == (rows + 127) // 128 * 128 * ((blocks + 3) // 4 * 4)
    assert len(set(idx.reshape(-1).tolist())) == rows * blocks and int(idx.max()) < cells
    # Control: the linear layout's cells are another order wherever a tile has more than one row or block.
    linear = [[EXT.scale_offset("linear", r, k, rows, blocks) for k in range(blocks)] for r in range(rows)]
    assert linear == [[r * blocks + k for k in range(blocks)] for r in range(rows)]
    if rows > 1 and blocks > 1:
        assert idx.tolist() != linear


def test_scale_bytes_e4m3_and_binary32():
    e4m3 = torch.tensor([[0x38, 0x7F], [0x00, 0xFE]], dtype=torch.uint8)
    assert scale_bytes(e4m3, "e4m3", "linear", 2, 2).tolist() == [0x38, 0x7F, 0x00, 0xFE]
    # (a NaN with a payload and its sign: written as given)
    words = [0x3F800000, 0x80000000, 0xFFC00001, 0x36800000]
    f = torch.tensor([w - (1 << 32) if w >= 1 << 31 else w for w in words], dtype=torch.int32)
    f = f.view(torch.float32).reshape(2, 2)
    got = bytes(scale_bytes(f, "fp32", "linear", 2, 2).tolist())
    assert got == struct.pack("<IIII", 0x3F800000, 0x80000000, 0xFFC00001, 0x36800000)
    with pytest.raises(Rejected, match="expected float32"):
        scale_bytes(f.double(), "fp32", "linear", 2, 2)
    with pytest.raises(Rejected, match=r"expected 6 cells \(linear layout, 2 rows of 3 blocks\)"):
        scale_bytes(e4m3, "e4m3", "linear", 2, 3)
    with pytest.raises(Rejected, match=r"expected 512 cells \(swizzled-128x4 layout"):
        scale_bytes(e4m3, "e4m3", "swizzled-128x4", 2, 2)


def test_float8_codes_and_scales_are_read_as_their_bytes():
    if not q.has_float8():
        pytest.skip("torch %s has no torch.float8_e4m3fn" % torch.__version__)
    v = torch.tensor([[1.0, -0.0, 448.0, -2.0 ** -9]])
    call = {"rows": 1, "width": 4, "block": 4, "element": "e4m3", "scale": "e4m3", "layout": "linear"}
    codes, scales = convert((v.to(torch.float8_e4m3fn), torch.tensor([[1.0]]).to(torch.float8_e4m3fn)), call)
    assert list(codes) == [0x38, 0x80, 0x7E, 0x81] and list(scales) == [0x38]


def _call_view(t):
    return memoryview(t.view(torch.int16).numpy()).cast("B")


def test_bridge_call_passes_buffers_and_scalars_and_converts():
    seen = {}

    def fn(x, bias, global_scale):
        seen.update(x=x.clone(), bias=bias.clone(), gs=global_scale)
        codes = torch.arange(x.numel(), dtype=torch.int64).remainder(16).to(torch.uint8).reshape(x.shape)
        return codes, torch.full((x.shape[0], x.shape[1] // 16), 0x38, dtype=torch.uint8)

    x = torch.arange(2 * 32, dtype=torch.int16).reshape(2, 32)
    bias = torch.arange(32, dtype=torch.int16) + 1000
    call = {"rows": 2, "width": 32, "block": 16, "dtype": "bf16", "element": "e2m1", "scale": "e4m3",
            "layout": "linear"}
    rc, message, fault, codes, scales = QuantBridge(fn, "cpu").call(
        [(_call_view(x), (2, 32)), (_call_view(bias), (32,))], [1.5], call)
    assert (rc, message, fault) == (0, "", "")
    assert seen["x"].dtype == torch.bfloat16 and seen["x"].shape == (2, 32)
    assert torch.equal(seen["x"].view(torch.int16), x) and torch.equal(seen["bias"].view(torch.int16), bias)
    assert seen["gs"].dim() == 0 and seen["gs"].dtype == torch.float32 and float(seen["gs"]) == 1.5
    assert len(codes) == 32 and codes[:2] == bytes([0x10, 0x32]) and scales == bytes([0x38] * 4)


def test_bridge_call_rejections_and_input_writes():
    def writes(x):
        x.view(torch.int16)[0, 0] = 7
        return torch.zeros(1, 128, dtype=torch.uint8), torch.zeros(1, dtype=torch.float32)

    x = torch.zeros(1, 128, dtype=torch.int16)
    call = {"rows": 1, "width": 128, "block": 128, "dtype": "fp16", "element": "e4m3", "scale": "fp32",
            "layout": "linear"}
    rc, _, fault, codes, scales = QuantBridge(writes, "cpu").call([(_call_view(x), (1, 128))], [], call)
    assert rc == 0 and fault == "" and int(x[0, 0]) == 7  # the runner sees the write in its own buffer
    assert codes == bytes(128) and scales == bytes(4)

    def raises(x):
        raise RuntimeError("refused")

    assert QuantBridge(raises, "cpu").call([(_call_view(x), (1, 128))], [], call)[:2] == (1, "RuntimeError: refused")
    rc, message = QuantBridge(lambda x: x, "cpu").call([(_call_view(x), (1, 128))], [], call)[:2]
    assert rc == 1 and message == "subject returned Tensor, expected (codes, scales)"


def test_layouts_a_subject_declares():
    assert QuantBridge(lambda x: x, "cpu").writes_layout("linear")
    assert not QuantBridge(lambda x: x, "cpu").writes_layout("swizzled-128x4")
    assert QuantBridge(lambda x: x, "cpu", ("linear", "swizzled-128x4")).writes_layout("swizzled-128x4")


def test_swizzled_subject_gets_the_layout_by_name():
    def fn(x, global_scale, scale_layout):
        rows, blocks = x.shape[0], x.shape[1] // 16
        s = torch.zeros(scale_cells(scale_layout, rows, blocks), dtype=torch.uint8)
        s[swizzled_index(rows, blocks).reshape(-1)] = torch.arange(1, rows * blocks + 1, dtype=torch.uint8)
        return torch.zeros(x.shape, dtype=torch.uint8), s

    x = torch.zeros(3, 32, dtype=torch.int16)
    call = {"rows": 3, "width": 32, "block": 16, "dtype": "bf16", "element": "e2m1", "scale": "e4m3",
            "layout": "swizzled-128x4"}
    rc, _, _, _, scales = QuantBridge(fn, "cpu", ("linear", "swizzled-128x4")).call([(_call_view(x), (3, 32))],
                                                                                       [1.0], call)
    assert rc == 0 and len(scales) == 512
    for r in range(3):
        for k in range(2):
            assert scales[EXT.scale_offset("swizzled-128x4", r, k, 3, 2)] == 1 + r * 2 + k
    assert sum(1 for b in scales if b) == 6  # padding cells 0x00


def _blocks_reference(op, contract, inputs, gs):
    """run_op on the blocks of the op's logical inputs, the activation on blocks (elementwise, so the same)."""
    family, names, _ = q.OPS[op]
    block = q.FAMILIES[family]["block"]
    blocks = [t.reshape(-1, block) for t in inputs]
    g = None if gs is None else torch.full((blocks[0].shape[0], 1), gs, dtype=torch.float32)
    return q.run_op(op, contract, blocks, g)


@pytest.mark.parametrize("op,contract", [("nvfp4_quant", "vllm-ref"), ("nvfp4_quant", "te"),
                                         ("fp8_group_quant", "fp8-group-ue8m0"),
                                         ("silu_and_mul_nvfp4_quant", "flashinfer-exact"),
                                         ("silu_and_mul_fp8_group_quant", "fp8-group")])
def test_reference_subject_is_run_op_on_the_blocks(op, contract, monkeypatch):
    from fuseproof import quant_emulation
    if not q.has_float8():
        monkeypatch.setattr(q, "e4m3_cast", quant_emulation.e4m3_cast_emulated)
    spec = _engine.find_op(op)
    fn = subjects.quant_reference_subject(spec, contract)
    g = torch.Generator().manual_seed(5)
    rows, width = 3, 256
    packed = spec["inputs"][0]["layout"] == "packed-first"
    x = (torch.randn(rows, 2 * width if packed else width, generator=g) * 4).to(torch.bfloat16)
    gs = 3.0 if q.OPS[op][0] == "nvfp4" else None
    codes, scales = fn(x, *([torch.tensor(gs)] if gs is not None else []))
    inputs = [x[:, :width], x[:, width:]] if packed else [x]
    want_codes, want_scales = _blocks_reference(op, contract, inputs, gs)
    assert codes.shape == (rows, width) and scales.shape[0] == rows
    assert torch.equal(codes.reshape(-1), want_codes.reshape(-1))
    assert torch.equal(scales.reshape(-1).view(torch.uint8), want_scales.reshape(-1).view(torch.uint8))
    assert len(torch.unique(codes)) > 2
    if packed:  # control: the halves in the other order give other codes
        swapped = _blocks_reference(op, contract, inputs[::-1], gs)[0]
        assert not torch.equal(codes.reshape(-1), swapped.reshape(-1))


def test_reference_subject_unavailable_without_float8():
    if q.has_float8():
        pytest.skip("torch %s has torch.float8_e4m3fn" % torch.__version__)
    with pytest.raises(Unavailable, match="has no torch.float8_e4m3fn, which the te reference casts to"):
        subjects.quant_reference_subject(_engine.find_op("nvfp4_quant"), "te")
    with pytest.raises(subjects.Refused, match="op fp8_group_quant has no torch reference of contract te"):
        subjects.quant_reference_subject(_engine.find_op("fp8_group_quant"), "te")


def test_compiled_subject_skipped_without_torch_compile():
    if hasattr(torch, "compile"):
        pytest.skip("torch %s has torch.compile" % torch.__version__)
    with pytest.raises(Unavailable, match="has no torch.compile"):
        subjects.builtin("torch-compile", _engine.find_op("nvfp4_quant"), "vllm-ref")
    with pytest.raises(subjects.Refused, match="subject triton has no form for quantization op nvfp4_quant"):
        subjects.builtin("triton", _engine.find_op("nvfp4_quant"), "vllm-ref")


def test_swizzle_blockscale_is_the_abi_layout():
    rows, blocks = 130, 5
    s = (torch.arange(rows * blocks, dtype=torch.int64) % 251 + 1).to(torch.uint8).reshape(rows, blocks)
    out = q.swizzle_blockscale(s).reshape(-1)
    assert out.numel() == scale_cells("swizzled-128x4", rows, blocks)
    want = torch.zeros_like(out)
    want[swizzled_index(rows, blocks).reshape(-1)] = s.reshape(-1)
    assert torch.equal(out, want)  # padding cells 0x00 included
    assert not torch.equal(out[:rows * blocks], s.reshape(-1))  # control: not the linear order
