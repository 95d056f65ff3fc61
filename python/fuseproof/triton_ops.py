"""triton_ops.py: every op of the family as a Triton kernel that rounds to the dtype where eager PyTorch rounds.

bias ops: out = act(round_T(x + bias)); *_and_mul ops on the packed [rows, 2d] input: out = round_T(round_T(act(gate))
* up) under the eager contract. The DiT ops on [groups, group_rows, d] tensors with [groups, 1, d] gate, scale and
shift: gated_residual round_T(x + round_T(gate * y)), modulate round_T(round_T(x * round_T(1 + scale)) + shift), each
step rounded by an explicit cast, compiled with enable_fp_fusion=False. The cast alone does not keep the product and
the sum apart: LLVM's InstCombine turns fptrunc(fmul(fpext a, fpext b)) into a half-precision fmul (binary32 has
enough digits for the double rounding to be innocuous), and with Triton's default enable_fp_fusion=True the backend
then fuses that fmul and the next fadd into one fma.rn.f16: one rounding, not eager's two (bf16 too where Triton
lowers its cast as fptrunc, not as inline PTX). Subject
triton-fp-fusion keeps that default, a known-bad kernel written the natural way (docs/SUBJECTS.md). And their fma
contract (subject triton-fma): one tl.fma in binary32 rounded once, fma(gate, y, x) and
fma(x, 1 + scale, shift) with 1 + scale in binary32. The activations are CUDA eager's formulas in binary32 with libdevice's tanhf, erff and
expf; the result is rounded to T once (round to nearest even; every NaN becomes 0x7FFF, as cvt.rn gives). These are
subjects to measure (docs/SUBJECTS.md), not references: Triton's code generation decides their last bits.
"""

import torch
import triton
import triton.language as tl

try:  # Triton 3.x
    from triton.language.extra import libdevice
except ImportError:  # Triton 2.x
    from triton.language.extra.cuda import libdevice

_BLOCK = 1024
_ACTS = {"gelu_tanh": 0, "gelu_erf": 1, "silu": 2}
# The DiT ops' kernel: MODULATE selects modulate's arithmetic (scale, shift) over gated_residual's (gate, y).


@triton.jit
def _act(s, ACT: tl.constexpr):
    if ACT == 0:
        inner = 0.7978845608028654 * (s + 0.044715 * (s * s * s))
        return 0.5 * s * (1.0 + libdevice.tanh(inner))
    elif ACT == 1:
        return s * 0.5 * (1.0 + libdevice.erf(s * 0.7071067811865476))
    else:
        return s / (1.0 + libdevice.exp(-s))


@triton.jit
def _bias_act_kernel(x_ptr, bias_ptr, out_ptr, n_elements, width, ACT: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    b = tl.load(bias_ptr + offsets % width, mask=mask)
    # The eager add: binary32 sum, rounded to the dtype; that rounding is what torch.compile leaves out.
    s = (x.to(tl.float32) + b.to(tl.float32)).to(x.dtype).to(tl.float32)
    tl.store(out_ptr + offsets, _act(s, ACT).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _act_mul_kernel(x_ptr, out_ptr, n_elements, d, ACT: tl.constexpr, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    row = offsets // d
    col = offsets % d
    gate = tl.load(x_ptr + row * 2 * d + col, mask=mask)
    up = tl.load(x_ptr + row * 2 * d + d + col, mask=mask)
    # The eager activation tensor: rounded to the dtype before the product.
    a = _act(gate.to(tl.float32), ACT).to(gate.dtype).to(tl.float32)
    tl.store(out_ptr + offsets, (a * up.to(tl.float32)).to(out_ptr.dtype.element_ty), mask=mask)


def _check(x, what):
    if x.dtype not in (torch.bfloat16, torch.float16):
        raise ValueError("%s: dtype must be bfloat16 or float16, got %s" % (what, x.dtype))
    if not x.is_cuda:
        raise ValueError("%s: tensors must be on a CUDA device, got %s" % (what, x.device))


@triton.jit
def _dit_kernel(x_ptr, g_ptr, y_ptr, out_ptr, n_elements, width, group_elems, MODULATE: tl.constexpr,
                FMA: tl.constexpr, BLOCK: tl.constexpr):
    # x, y, out: [groups * group_rows * width] contiguous; g (gate, or scale) and y (y, or shift) of a group-broadcast
    # input: [groups * width], element (r, c) at (r / group_rows) * width + c.
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    grouped = (offsets // group_elems) * width + offsets % width
    x = tl.load(x_ptr + offsets, mask=mask)
    g = tl.load(g_ptr + grouped, mask=mask).to(tl.float32)
    if MODULATE:
        shift = tl.load(y_ptr + grouped, mask=mask).to(tl.float32)
        s = 1.0 + g
        if FMA:
            r = tl.fma(x.to(tl.float32), s, shift)
        else:
            s = s.to(x.dtype).to(tl.float32)
            m = (x.to(tl.float32) * s).to(x.dtype).to(tl.float32)
            r = m + shift
    else:
        y = tl.load(y_ptr + offsets, mask=mask).to(tl.float32)
        if FMA:
            r = tl.fma(g, y, x.to(tl.float32))
        else:
            r = x.to(tl.float32) + (g * y).to(x.dtype).to(tl.float32)
    tl.store(out_ptr + offsets, r.to(out_ptr.dtype.element_ty), mask=mask)


def _dit_subject(op, contract, fp_fusion=False):
    """fn(x, gate, y) or fn(x, scale, shift) on [groups, group_rows, d] / [groups, 1, d] tensors; fp_fusion: the eager
    kernel compiled with Triton's default enable_fp_fusion=True (the fma contract's kernel is one explicit tl.fma
    either way, compiled with Triton's defaults)."""
    name = op["name"]
    names = [i["name"] for i in op["inputs"]]
    grouped = [i["layout"] == "group-broadcast" for i in op["inputs"]]
    # The kernel's two shapes, told apart by the spec: modulate's eager composition has the constant of 1 + scale.
    modulate = any(n["op"] == "const" for c in op["contracts"] if c["name"] == "eager" for n in c["nodes"])

    def dit_op(a, b, c):
        _check(a, name)
        ins = (a, b, c)
        want = [[a.shape[0], 1, a.shape[2]] if g else list(a.shape) for g in grouped] if a.dim() == 3 else None
        if want is None or any(list(t.shape) != w or t.dtype != a.dtype or t.device != a.device
                               for t, w in zip(ins, want)):
            raise ValueError("%s: %s must be [groups, group_rows, d] and %s [groups, 1, d] of one dtype and device, "
                             "got %s" % (name, ", ".join(n for n, g in zip(names, grouped) if not g),
                                         ", ".join(n for n, g in zip(names, grouped) if g),
                                         ", ".join("%s %s" % (n, list(t.shape)) for n, t in zip(names, ins))))
        a, b, c = (t.contiguous() for t in ins)
        out = torch.empty_like(a)
        n = a.numel()
        if n:
            _dit_kernel[(triton.cdiv(n, _BLOCK),)](a, b, c, out, n, a.shape[2], a.shape[1] * a.shape[2],
                                                   MODULATE=modulate, FMA=fma, BLOCK=_BLOCK, **options)
        return out

    fma = contract == "fma"
    options = {} if fma or fp_fusion else {"enable_fp_fusion": False}
    dit_op.__qualname__ = "triton_%s%s" % (name, "_fma" if fma else "_fp_fusion" if fp_fusion else "")
    dit_op.fuseproof_contract = contract
    return dit_op


def subject(op, contract="eager", fp_fusion=False):
    """A callable of the op's buffers (fn(x, bias), fn(x), fn(x, gate, y), fn(x, scale, shift)) running its Triton
    kernel of `contract` (eager; fma for the ops that have it); fp_fusion: the DiT ops' eager kernel with Triton's
    default enable_fp_fusion=True (ValueError for the other ops, whose kernels have no product and sum to fuse)."""
    if any(i["layout"] == "group-broadcast" for i in op["inputs"]):
        return _dit_subject(op, contract, fp_fusion)
    if fp_fusion:
        raise ValueError("triton: op %s has no kernel variant with fp fusion (only the DiT ops' eager kernels have a "
                         "product and a sum to fuse)" % op["name"])
    if contract != "eager":
        raise ValueError("triton: op %s has no Triton kernel of contract %s" % (op["name"], contract))
    acts = [n["act"] for c in op["contracts"] if c["name"] == "eager" for n in c["nodes"] if n["op"] == "activation"]
    act = _ACTS[acts[0]]
    name = op["name"]
    if op["inputs"][0]["layout"] == "packed-first":
        def packed(x):
            _check(x, name)
            if x.dim() != 2 or x.shape[1] % 2:
                raise ValueError("%s: x must be [rows, 2 * d], got %s" % (name, list(x.shape)))
            x = x.contiguous()
            out = torch.empty((x.shape[0], x.shape[1] // 2), dtype=x.dtype, device=x.device)
            n = out.numel()
            if n:
                _act_mul_kernel[(triton.cdiv(n, _BLOCK),)](x, out, n, out.shape[1], ACT=act, BLOCK=_BLOCK)
            return out
        packed.__qualname__ = "triton_" + name
        return packed

    def bias_op(x, bias):
        _check(x, name)
        if x.dim() != 2 or bias.dim() != 1 or bias.shape[0] != x.shape[1] or bias.dtype != x.dtype:
            raise ValueError("%s: x must be [rows, width] and bias [width] of its dtype, got %s and %s"
                             % (name, list(x.shape), list(bias.shape)))
        x, bias = x.contiguous(), bias.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        if n:
            _bias_act_kernel[(triton.cdiv(n, _BLOCK),)](x, bias, out, n, x.shape[1], ACT=act, BLOCK=_BLOCK)
        return out
    bias_op.__qualname__ = "triton_" + name
    return bias_op
