"""quant_emulation.py: the two seams through which quant_references.py's torch references compute on a CPU torch
without float8 (torch 1.13) what they compute on CUDA with it; nothing else of a reference is changed.

- e4m3_cast_emulated stands in for quant_references.e4m3_cast, the one place the references cast to float8_e4m3fn:
  c10's fp8e4m3fn_from_fp32_value written in numpy (round to nearest even onto E4M3, NaN above 464 and for +-Inf),
  a NaN input taken as the GPU's positive canonical NaN (0x7F; the CPU's 0/0 NaN is negative, which c10 would code
  0xFF). install() puts it there.
- CudaScalarDivision: a Tensor subclass whose `tensor / python_number` is CUDA's div_true_kernel_cuda, a multiply by
  the binary32 reciprocal of the number (the CPU divides); silu and gelu (and torch 1.13's missing fp16 clamp) run
  in float32 and round back to T once, as CUDA's kernels compute in their float32 opmath type (torch 1.13's CPU has
  no fp16 silu or gelu and computes bf16 gelu in bf16 steps). The CPU's expf and tanhf stay the CPU's.
Used by property_tests/scripts/quant_cross_check_test.py (the references against `fuseproof eval`) and by the CPU
quantization subjects of property_tests/python (the references through the audit).
"""

import numpy as np
import torch

from fuseproof import quant_references as q


def e4m3_bytes_emulated(f):
    """c10 fp8e4m3fn_from_fp32_value on float32 values (numpy), NaN as the GPU's positive NaN: the E4M3FN bytes.
      | S |EEEE|MMM|  bias 7; |x| >= 480 (0x43F00000), Inf and NaN -> 0x7F | S; below 2^-6 onto the subnormal grid by
      adding 2^14 (one binary32 rounding); otherwise rebias and round the low 20 bits to nearest even."""
    u = np.ascontiguousarray(f, dtype=np.float32).view(np.uint32).copy()
    nan = np.isnan(f)
    sign = np.where(nan, 0, u & 0x80000000).astype(np.uint32)
    a = u ^ (u & 0x80000000)
    denorm_mask = np.uint32(141 << 23)
    with np.errstate(over="ignore"):
        sub = ((a.view(np.float32) + denorm_mask.view(np.float32)).view(np.uint32) - denorm_mask).astype(np.uint32)
        odd = (a >> 20) & 1
        norm = ((a + np.uint32(((7 - 127) << 23) & 0xFFFFFFFF) + 0x7FFFF + odd) & 0xFFFFFFFF) >> 20
    r = np.where(a >= 0x43F00000, 0x7F, np.where(a < (121 << 23), sub, norm)).astype(np.uint32)
    return ((r | (sign >> 24)) & 0xFF).astype(np.uint8)


_E4M3_VALUES = None


def e4m3_cast_emulated(t):
    """Stands in for quant_references.e4m3_cast: (bytes uint8, float32 values) of t.to(float8_e4m3fn), of t's type."""
    global _E4M3_VALUES
    if _E4M3_VALUES is None:
        codes = np.arange(256, dtype=np.uint32)
        e, m = (codes >> 3) & 0xF, codes & 7
        mag = np.where(e == 0, m / 8.0 * 2.0 ** -6, (1 + m / 8.0) * 2.0 ** (e.astype(np.float64) - 7))
        v = np.where(codes & 0x80, -mag, mag)
        v[(codes & 0x7F) == 0x7F] = np.nan
        _E4M3_VALUES = v.astype(np.float32)
    b = e4m3_bytes_emulated(t.detach().as_subclass(torch.Tensor).cpu().numpy())
    return (torch.from_numpy(b).as_subclass(type(t)),
            torch.from_numpy(_E4M3_VALUES[b.astype(np.intp)]).as_subclass(type(t)))


def install():
    """Puts e4m3_cast_emulated in quant_references.e4m3_cast (for this process)."""
    q.e4m3_cast = e4m3_cast_emulated


def installed():
    return q.e4m3_cast is e4m3_cast_emulated


_HALF = (torch.float16, torch.bfloat16)


class CudaScalarDivision(torch.Tensor):
    """A CPU tensor whose `t / number` (t.div, torch.div, torch.true_divide) is CUDA's: t * fl32(1 / fl32(number)).
    torch 1.13's CPU has no fp16 clamp, silu or gelu, and computes bf16 gelu in bf16 steps: clamp (fp16), silu and
    gelu (fp16, bf16) run in float32 and round back to T once, as CUDA's kernels compute in their float32 opmath type
    (the clamp's result is a member or the bound rounded to fp16)."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if (func in (torch.Tensor.__truediv__, torch.Tensor.div, torch.div, torch.true_divide) and len(args) == 2
                and isinstance(args[0], torch.Tensor) and isinstance(args[1], (int, float)) and not kwargs):
            inv = float(np.float32(1.0) / np.float32(args[1]))
            return super().__torch_function__(torch.Tensor.__mul__, types, (args[0], inv), {})
        if args and isinstance(args[0], torch.Tensor) and (
                (func in (torch.Tensor.clamp, torch.clamp) and args[0].dtype == torch.float16) or
                (func in (torch.nn.functional.silu, torch.nn.functional.gelu) and args[0].dtype in _HALF)):
            wide = super().__torch_function__(torch.Tensor.float, types, (args[0],), {})
            out = super().__torch_function__(func, types, (wide,) + tuple(args[1:]), kwargs)
            return super().__torch_function__(torch.Tensor.to, types, (out, args[0].dtype), {})
        return super().__torch_function__(func, types, args, kwargs)
