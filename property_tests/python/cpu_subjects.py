"""cpu_subjects.py: CPU callables on torch tensors that the Python front end's tests audit (emulated model)."""

import time

import torch
import torch.nn.functional as F

_K_BETA = 0.7978845608028654  # sqrt(2) * 2/sqrt(pi) * 0.5, rounded to binary32 by torch as opmath
_K_KAPPA = 0.044715


def _gelu_f32(s):
    """CUDA eager's GELU(tanh) in binary32, op by op. tanh is taken in binary64 and rounded once to binary32: torch's
    CPU tanhf (Sleef) differs from the reference's at 4 bf16 and 26 fp16 inputs of GELU; this one at none (bf16)."""
    inner = _K_BETA * (s + _K_KAPPA * (s * s * s))
    t = torch.tanh(inner.double()).float()
    return 0.5 * s * (1.0 + t)


def _narrow(y, dtype):
    """Rounds to dtype once; every NaN becomes 0x7FFF, as the GPU writes it (the CPU conversion writes 0x7FC0)."""
    out = y.to(dtype)
    out.view(torch.int16)[torch.isnan(y)] = 0x7FFF
    return out


def correct(x, bias):
    """The op as eager CUDA computes it: the sum rounded to the dtype, then GELU in binary32, rounded once."""
    return _narrow(_gelu_f32((x + bias).float()), x.dtype)


def correct_out(x, bias, out):
    """correct() in the out-argument form."""
    out.copy_(correct(x, bias))


def unrounded(x, bias):
    """The fusion mistake: gelu(float(x) + float(bias)) rounded once, the sum never rounded to the dtype."""
    return _narrow(_gelu_f32(x.float() + bias.float()), x.dtype)


def wrong_dtype(x, bias):
    """Right values, returned as float32."""
    return correct(x, bias).float()


def wrong_shape(x, bias):
    """Right values, returned flattened."""
    return correct(x, bias).reshape(-1)


def raises(x, bias):
    """Refuses every call, valid or not."""
    raise RuntimeError("cpu_subjects.raises refuses every call")


def writes_input(x, bias):
    """Right values, computed in place over x."""
    x.copy_(correct(x, bias))
    return x.clone()


def eager_cpu(x, bias):
    """PyTorch's own CPU op (libtorch 1.13 computes bf16 GELU in bf16 arithmetic; it has no fp16 CPU GELU)."""
    return F.gelu(x + bias, approximate="tanh")


def writes_past_out(x, bias, out):
    """Right values, and 8 more elements written just past the end of out (into the audit's guard)."""
    out.copy_(correct(x, bias))
    flat = out.view(-1)
    torch.as_strided(flat, (flat.numel() + 8,), (1,))[flat.numel():] = 0


def aborts(x, bias):
    """Ends the process (SIGABRT) on any call with more than one row: the fault isolation's subject."""
    if x.shape[0] > 1:
        import os
        os.abort()
    return correct(x, bias)


def hangs(x, bias):
    """Never returns on a call with more than one row: the call time limit's subject."""
    if x.shape[0] > 1:
        import time
        time.sleep(3600)
    return correct(x, bias)


# silu_and_mul (the packed [rows, 2 * width] input: gate, then up), CPU forms of the two contracts the family ships.
def _silu_f32(g):
    """SiLU in binary32 as x / (1 + e), e = exp(-x) from binary64 rounded once (the reference's exact expf model)."""
    e = torch.exp((-g).double()).float()
    return g / (1.0 + e)


def _halves(packed):
    w = packed.shape[-1] // 2
    return packed[..., :w].float(), packed[..., w:].float()


def silu_and_mul_eager(packed):
    """Eager torch's F.silu(gate) * up: the activation rounded to the dtype before the product."""
    gate, up = _halves(packed)
    act = _narrow(_silu_f32(gate), packed.dtype).float()
    return _narrow(act * up, packed.dtype)


def silu_and_mul_fp32(packed):
    """vLLM's and FlashInfer's form: the activation kept in binary32, one rounding of the product."""
    gate, up = _halves(packed)
    return _narrow(_silu_f32(gate) * up, packed.dtype)


silu_and_mul_fp32.fuseproof_contract = "fp32"


# The other ops, faithful to the CUDA eager formulas in binary32 (the reference's exact math model: each special
# function from binary64, rounded once to binary32; every other step in binary32, as eager's opmath does).
_SQRT1_2_F32 = torch.tensor(0.7071067811865476, dtype=torch.float32)  # M_SQRT1_2 narrowed: 0x3F3504F3


def _gelu_erf_f32(s):
    e = torch.erf((s * _SQRT1_2_F32).double()).float()
    return (s * 0.5) * (1.0 + e)


def bias_gelu_erf_correct(x, bias):
    """F.gelu(x + bias) as eager CUDA computes it: the sum rounded to the dtype, exact GELU in binary32."""
    return _narrow(_gelu_erf_f32((x + bias).float()), x.dtype)


def _act_and_mul_eager(act):
    def fn(packed):
        gate, up = _halves(packed)
        return _narrow(_narrow(act(gate), packed.dtype).float() * up, packed.dtype)
    return fn


gelu_tanh_and_mul_eager = _act_and_mul_eager(_gelu_f32)
gelu_tanh_and_mul_eager.__qualname__ = "gelu_tanh_and_mul_eager"
gelu_and_mul_eager = _act_and_mul_eager(_gelu_erf_f32)
gelu_and_mul_eager.__qualname__ = "gelu_and_mul_eager"


_first_dtype = []


def silu_and_mul_first_dtype(packed):
    """silu_and_mul_eager on the bits of every call read as the dtype of its first call: a callable that remembers
    (one dtype per process passes every class; the history class interleaves both dtypes in one process)."""
    if not _first_dtype:
        _first_dtype.append(packed.dtype)
    return silu_and_mul_eager(packed.view(_first_dtype[0])).view(packed.dtype)


def silu_and_mul_bf16_only(packed):
    """silu_and_mul_eager for bf16; every fp16 result wrong (its sign flipped): right for --dtype bf16, which must
    never call it with fp16."""
    if packed.dtype == torch.float16:
        return -silu_and_mul_eager(packed)
    return silu_and_mul_eager(packed)


# Callables that are right one call at a time and wrong as models run them (docs/AUDIT.md, Calls as models make them),
# on any device. On the GPU the streams class kills the first and the graph class the second; on the CPU those classes
# are skipped and both pass.
_workspace = {}


def _silu_and_mul_any(packed):
    """Eager torch itself on a CUDA device (F.silu(gate) * up, which the cuda math model predicts); on the CPU the
    binary32 form above (torch's CPU kernels are not the contract)."""
    if packed.is_cuda:
        w = packed.shape[-1] // 2
        return F.silu(packed[..., :w]) * packed[..., w:]
    return silu_and_mul_eager(packed)


def silu_and_mul_static_workspace(packed):
    """Eager silu_and_mul whose binary32 product is staged in one workspace per device (grown when a call needs more)
    and rounded from there: two calls at once, on two streams or two threads, write the same memory."""
    w = packed.shape[-1] // 2
    if packed.is_cuda:
        act, up = F.silu(packed[..., :w]).float(), packed[..., w:].float()
    else:
        gate, up = _halves(packed)
        act = _narrow(_silu_f32(gate), packed.dtype).float()
    n = act.numel()
    ws = _workspace.get(packed.device)
    if ws is None or ws.numel() < n:
        ws = _workspace[packed.device] = torch.empty(n, dtype=torch.float32, device=packed.device)
    staged = ws[:n].view(act.shape)
    torch.mul(act, up, out=staged)
    time.sleep(0.001)  # other host work before the rounding: the window in which another call writes the workspace
    return staged.to(packed.dtype) if packed.is_cuda else _narrow(staged, packed.dtype)


def silu_and_mul_host_sync(packed):
    """silu_and_mul_eager after an input check that reads a flag back to the host (.item()): right in every eager call,
    and a synchronisation that a CUDA graph capture refuses."""
    if packed.numel() > 0 and bool(torch.isinf(packed).all().item()):
        return _silu_and_mul_any(packed)
    return _silu_and_mul_any(packed)


# The DiT ops (docs/OPS.md, The 3-input ops) on DiT's 3-D tensors: x, y [groups, group_rows, d]; gate, scale, shift
# [groups, 1, d]. torch's CPU kernels compute a bf16 or fp16 add or mul in binary32 and round once, as CUDA's do (all
# 65,536 `1 + scale` and 2^22 random products and sums agree with `(a.float() op b.float()).to(T)`); only their NaN
# encodings differ (0x7FC0 / 0xFFFF, 0x7E00 / 0xFE00 where CUDA writes 0x7FFF), which _narrow's rule fixes at the
# output.
def _canonical_nan(out):
    out = out.clone()
    out.view(torch.int16)[torch.isnan(out)] = 0x7FFF
    return out


def gated_residual_eager(x, gate, y):
    """Eager torch's `x + gate * y`: the product rounded to the dtype, then the sum."""
    return _canonical_nan(x + gate * y)


def modulate_eager(x, scale, shift):
    """Eager torch's `x * (1 + scale) + shift`: 1 + scale, the product and the sum each rounded to the dtype."""
    return _canonical_nan(x * (1 + scale) + shift)


def gated_residual_addcmul(x, gate, y):
    """The fusion mistake of a binary32 kernel: torch.addcmul in binary32 (the product never rounded to the dtype),
    rounded once at the end."""
    return _narrow(torch.addcmul(x.float(), gate.float(), y.float()), x.dtype)


def modulate_scale_unrounded(x, scale, shift):
    """1 + scale kept in binary32 (not rounded to the dtype); the product and the sum rounded as eager."""
    m = _narrow(x.float() * (1.0 + scale.float()), x.dtype)
    return _canonical_nan(m + shift)


def modulate_wrong_group(x, scale, shift):
    """Eager modulate with the scale row of the next group (right whenever there is one group)."""
    return modulate_eager(x, scale.roll(1, 0), shift)


def _fmaf(a, b, c):
    """fmaf(a, b, c) of binary32 tensors whose product is exact in binary64 (halves times binary32): the sum rounded
    to odd in binary64 (TwoSum's error sets the sticky bit), so that narrowing to binary32 rounds once."""
    p, c = a.double() * b.double(), c.double()
    s = p + c
    bb = s - p
    err = (p - (s - bb)) + (c - bb)
    inexact = (err != 0) & torch.isfinite(s)
    bits = s.view(torch.int64)
    bits = bits - (inexact & ((err < 0) != (s < 0))).long()  # toward zero first
    bits = bits | inexact.long()
    return bits.view(torch.float64).float()


def gated_residual_fma(x, gate, y):
    """The fma contract: to_T(fmaf(gate, y, x))."""
    return _narrow(_fmaf(gate.float(), y.float(), x.float()), x.dtype)


gated_residual_fma.fuseproof_contract = "fma"


def modulate_fma(x, scale, shift):
    """The fma contract: to_T(fmaf(x, 1 + scale, shift)) with 1 + scale in binary32."""
    return _narrow(_fmaf(x.float(), 1.0 + scale.float(), shift.float()), x.dtype)


modulate_fma.fuseproof_contract = "fma"
