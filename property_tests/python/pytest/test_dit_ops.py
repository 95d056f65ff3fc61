"""Tests of the Python front end's DiT ops (gated_residual, modulate; docs/OPS.md) on the CPU: the bridge's 3-D calling
convention, the composition's const and fma nodes, the built-in subjects' refusals; each check with a negative
control. The audits of these ops through the C++ engine are ctest cases (property_tests/python/CMakeLists.txt)."""

import json

import pytest
import torch

import cpu_subjects
from fuseproof import Unavailable, subjects
from fuseproof._bridge import Bridge
from fuseproof._environment import extension
from fuseproof.composition import NotEager, composition_fn, find_contract, find_op, logical_inputs

SPEC = json.loads(extension().op_spec())
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
DIT_OPS = ("gated_residual", "modulate")


def random_half(shape, dtype, gen):
    return torch.randint(-32768, 32768, shape, generator=gen, dtype=torch.int32).to(torch.int16).view(dtype)


def bits(t):
    return t.contiguous().view(torch.int16).to(torch.int32) & 0xFFFF


def nan_canonical(t):
    """Bit patterns with every NaN as 0x7FFF (what CUDA writes; torch's CPU narrowing writes others)."""
    return torch.where(torch.isnan(t.float()), torch.full_like(bits(t), 0x7FFF), bits(t))


def step_reference(op, x, a, b):
    """The eager composition written out step by step: each binary32 step rounded to T by .to()."""
    t = x.dtype
    if op == "gated_residual":
        p = (a.float() * b.float()).to(t)
        return (x.float() + p.float()).to(t)
    s = (1.0 + a.float()).to(t)
    m = (x.float() * s.float()).to(t)
    return (m.float() + b.float()).to(t)


def dit_inputs(op, dtype, groups, group_rows, d, seed=0):
    """(x, second, third) in the bridge's 3-D shapes: x [groups, group_rows, d]; group-broadcast inputs
    [groups, 1, d]."""
    g = torch.Generator().manual_seed(seed)
    spec = find_op(SPEC, op)
    shapes = [[groups, 1, d] if i["layout"] == "group-broadcast" else [groups, group_rows, d] for i in spec["inputs"]]
    return [random_half(s, dtype, g) for s in shapes]


@pytest.mark.parametrize("op", DIT_OPS)
@pytest.mark.parametrize("dtype", DTYPES)
def test_eager_composition_rounds_at_every_step(op, dtype):
    ins = dit_inputs(op, DTYPES[dtype], 16, 8, 512, seed=1)
    fn = composition_fn(find_contract(find_op(SPEC, op), "eager"))
    got = fn(*ins)
    assert list(got.shape) == [16, 8, 512] and got.dtype == DTYPES[dtype]
    want = step_reference(op, *ins)
    assert torch.equal(nan_canonical(got), nan_canonical(want))
    # The negative control: the composition is not the binary32 formula rounded once.
    x, a, b = (t.float() for t in ins)
    once = (x + a * b).to(DTYPES[dtype]) if op == "gated_residual" else (x * (1.0 + a) + b).to(DTYPES[dtype])
    assert not torch.equal(nan_canonical(got), nan_canonical(once))


@pytest.mark.parametrize("dtype", DTYPES)
def test_const_node_rounds_one_plus_scale_to_the_dtype(dtype):
    """modulate's const: 1 + scale on a T tensor rounds to T, as eager does (every scale pattern, random x)."""
    t = DTYPES[dtype]
    scale = torch.arange(65536, dtype=torch.int32).to(torch.int16).view(t).reshape(1, 1, 65536)
    x = random_half([1, 4, 65536], t, torch.Generator().manual_seed(5))
    shift = torch.full_like(scale, -0.0)  # -0: the sum passes m through, +0 and -0 included
    out = composition_fn(find_contract(find_op(SPEC, "modulate"), "eager"))(x, scale, shift)
    assert torch.equal(nan_canonical(out), nan_canonical(step_reference("modulate", x, scale, shift)))
    # The negative control: 1 + scale left in binary32.
    unrounded = (x.float() * (1.0 + scale.float())).to(t)
    assert not torch.equal(nan_canonical(out), nan_canonical(unrounded))


@pytest.mark.parametrize("op", DIT_OPS)
def test_fma_contract_has_no_eager_form(op):
    c = find_contract(find_op(SPEC, op), "fma")
    with pytest.raises(NotEager, match=r"^composition: contract fma is one binary32 fma rounded once, which eager "
                                       r"PyTorch cannot express \(torch has no fmaf"):
        composition_fn(c)
    composition_fn(find_contract(find_op(SPEC, op), "eager"))  # the control: the eager contract has one


@pytest.mark.parametrize("op", DIT_OPS)
def test_eager_subjects_refuse_the_fma_contract(op):
    spec = find_op(SPEC, op)
    for name in ("eager", "torch-cuda-graph"):
        with pytest.raises(subjects.Refused) as e:
            subjects.builtin(name, spec, "fma")
        assert "cannot be judged against contract fma of %s" % op in str(e.value) and "\n" not in str(e.value)
    description, fn = subjects.builtin("eager", spec, "eager")  # the control
    assert callable(fn)


def test_triton_subjects_unavailable_or_refused_here():
    try:
        import triton  # noqa: F401
        pytest.skip("Triton is installed here")
    except ImportError:
        pass
    for op in DIT_OPS:
        for name in ("triton", "triton-fma", "triton-fp-fusion"):
            with pytest.raises(Unavailable, match="Triton is not installed"):
                subjects.builtin(name, find_op(SPEC, op))
    with pytest.raises(subjects.Refused, match="op silu_and_mul has no contract fma"):
        subjects.builtin("triton-fma", find_op(SPEC, "silu_and_mul"))
    with pytest.raises(subjects.Refused, match="op silu_and_mul has no product and sum to fuse"):
        subjects.builtin("triton-fp-fusion", find_op(SPEC, "silu_and_mul"))


def test_cpu_fma_callables_differ_from_eager():
    """The fma contract's CPU callables are one rounding: they differ from eager where the product's rounding matters
    (x near -gate * y), and agree elsewhere."""
    t = torch.bfloat16
    x, gate, y = dit_inputs("gated_residual", t, 4, 4, 256, seed=2)
    x = (-(gate.float() * y.float())).to(t) * 1  # ties and cancellations: x = -round(gate * y)
    e = cpu_subjects.gated_residual_eager(x, gate, y)
    f = cpu_subjects.gated_residual_fma(x, gate, y)
    assert not torch.equal(bits(e), bits(f))


# The bridge: what the C++ runner hands over (guarded images as memoryviews, data offsets, shapes), done by hand.
GUARD = 64


def image(values):
    """A guarded host image of int16 values: GUARD elements of 0x5A5A either side; (bytearray, data offset)."""
    raw = torch.full((len(values) + 2 * GUARD,), 0x5A5A, dtype=torch.int16)
    raw[GUARD:GUARD + len(values)] = values
    return bytearray(raw.numpy().tobytes()), GUARD


def bridge_call(fn, op, dtype, groups, group_rows, d, out_arg=False, seed=3):
    """Calls fn through the Bridge as the runner does; (rc, message, fault, inputs, out tensor, out guards intact)."""
    ins = dit_inputs(op, DTYPES[dtype], groups, group_rows, d, seed)
    buffers = []
    for t in ins:
        buf, off = image(t.reshape(-1).view(torch.int16))
        buffers.append((memoryview(buf), off, tuple(t.shape)))
    out_buf, out_off = image(torch.full((groups * group_rows * d,), 0x7FA5, dtype=torch.int16))
    oshape = (groups, group_rows, d)
    rc, message, fault = Bridge(fn, "cpu", out_arg).call(buffers, (memoryview(out_buf), out_off, oshape), dtype)
    raw = torch.frombuffer(out_buf, dtype=torch.int16)
    out = raw[out_off:out_off + groups * group_rows * d].view(DTYPES[dtype]).view(*oshape).clone()
    guards = bool((raw[:out_off] == 0x5A5A).all() and (raw[out_off + out.numel():] == 0x5A5A).all())
    return rc, message, fault, ins, out, guards


@pytest.mark.parametrize("op", DIT_OPS)
def test_bridge_passes_dit_shapes(op):
    seen = []
    ref = getattr(cpu_subjects, op + "_eager")

    def spy(*args):
        seen.append([list(a.shape) for a in args])
        return ref(*args)

    rc, message, fault, ins, out, guards = bridge_call(spy, op, "bf16", 3, 5, 24)
    assert (rc, message, fault) == (0, "", "") and guards
    layouts = [i["layout"] for i in find_op(SPEC, op)["inputs"]]
    assert seen == [[[3, 1, 24] if l == "group-broadcast" else [3, 5, 24] for l in layouts]]
    assert torch.equal(bits(out), bits(ref(*ins)))


def test_bridge_out_argument_form():
    def into(x, gate, y, out):
        out.copy_(cpu_subjects.gated_residual_eager(x, gate, y))

    rc, message, fault, ins, out, guards = bridge_call(into, "gated_residual", "fp16", 2, 4, 8, out_arg=True)
    assert (rc, message, fault) == (0, "", "") and guards
    assert torch.equal(bits(out), bits(cpu_subjects.gated_residual_eager(*ins)))


def test_bridge_rejects_a_2d_result():
    """The negative control of the shape check: a result flattened to [rows, d] is a wrong tensor, with its shape."""
    rc, message, _, _, _, _ = bridge_call(lambda x, g, y: (x + g * y).reshape(-1, x.shape[-1]), "gated_residual",
                                          "bf16", 2, 3, 8)
    assert rc == 1 and message == ("subject returned a tensor of [6, 8] bfloat16 on cpu, expected [2, 3, 8] "
                                   "bfloat16 on cpu")


def test_bridge_keeps_the_2_input_convention():
    """bias_gelu_tanh: fn(x [rows, width], bias [width]) -> [rows, width], the 2-input calling convention."""
    seen = []

    def spy(x, bias):
        seen.append((list(x.shape), list(bias.shape)))
        return x + bias

    x = torch.zeros(6 * 8, dtype=torch.int16)
    bx, ox = image(x)
    bb, ob = image(torch.zeros(8, dtype=torch.int16))
    bo, oo = image(torch.zeros(6 * 8, dtype=torch.int16))
    rc, message, fault = Bridge(spy, "cpu", False).call([(memoryview(bx), ox, (6, 8)), (memoryview(bb), ob, (8,))],
                                                        (memoryview(bo), oo, (6, 8)), "bf16")
    assert (rc, message, fault) == (0, "", "") and seen == [([6, 8], [8])]


def test_wrong_group_callable_needs_more_than_one_group():
    """The scale row of the wrong group is invisible with one group and visible with several (why the audit must call
    these ops with group_rows < rows)."""
    one = dit_inputs("modulate", torch.bfloat16, 1, 8, 64, seed=4)
    assert torch.equal(bits(cpu_subjects.modulate_wrong_group(*one)), bits(cpu_subjects.modulate_eager(*one)))
    many = dit_inputs("modulate", torch.bfloat16, 4, 8, 64, seed=4)
    assert not torch.equal(bits(cpu_subjects.modulate_wrong_group(*many)), bits(cpu_subjects.modulate_eager(*many)))


def test_logical_inputs_of_group_broadcast_ops_are_the_buffers():
    op = find_op(SPEC, "modulate")
    bufs = dit_inputs("modulate", torch.bfloat16, 2, 3, 4)
    views = logical_inputs(op, bufs, 4)
    assert all(v is b for v, b in zip(views, bufs))
