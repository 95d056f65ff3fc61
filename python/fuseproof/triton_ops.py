"""triton_ops.py: every op of the family as a Triton kernel that rounds to the dtype where eager PyTorch rounds.

bias ops: out = act(round_T(x + bias)); *_and_mul ops on the packed [rows, 2d] input: out = round_T(round_T(act(gate))
* up) under the eager contract. The activations are CUDA eager's formulas in binary32 with libdevice's tanhf, erff and
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


def subject(op):
    """A callable of the op's buffers (fn(x, bias) or fn(x)) running its Triton kernel."""
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
