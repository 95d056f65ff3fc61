"""triton_bias_gelu.py: bias + GELU(tanh) as a Triton kernel that rounds the sum to the dtype, as eager PyTorch does.

out = gelu_tanh(round_T(x + bias)) with eager's binary32 arithmetic: the sum is rounded to T (bf16 or fp16) before
GELU, the GELU is CUDA eager's formula 0.5 * s * (1 + tanh(kBeta * (s + kKappa * s^3))) with libdevice tanhf, and
the result is rounded to T once (round to nearest even; every NaN becomes 0x7FFF, as cvt.rn gives).
"""

import torch
import triton
import triton.language as tl

try:  # Triton 3.x
    from triton.language.extra import libdevice
except ImportError:  # Triton 2.x
    from triton.language.extra.cuda import libdevice

_BLOCK = 1024


@triton.jit
def _bias_gelu_tanh_kernel(x_ptr, bias_ptr, out_ptr, n_elements, width, BLOCK: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    b = tl.load(bias_ptr + offsets % width, mask=mask)
    # The eager add: binary32 sum, rounded to the dtype; that rounding is what torch.compile leaves out.
    s = (x.to(tl.float32) + b.to(tl.float32)).to(x.dtype).to(tl.float32)
    inner = 0.7978845608028654 * (s + 0.044715 * (s * s * s))
    y = 0.5 * s * (1.0 + libdevice.tanh(inner))
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


def bias_gelu_tanh(x, bias):
    """x: [rows, width] bf16/fp16 CUDA, bias: [width] of the same dtype and device; returns a new tensor."""
    if x.dim() != 2 or bias.dim() != 1:
        raise ValueError("bias_gelu_tanh: x must be 2-D and bias 1-D, got %d-D and %d-D" % (x.dim(), bias.dim()))
    if x.dtype not in (torch.bfloat16, torch.float16) or bias.dtype != x.dtype:
        raise ValueError("bias_gelu_tanh: dtypes must be one of bfloat16, float16 and equal, got %s and %s"
                         % (x.dtype, bias.dtype))
    if not x.is_cuda or bias.device != x.device:
        raise ValueError("bias_gelu_tanh: x and bias must be on one CUDA device, got %s and %s"
                         % (x.device, bias.device))
    if bias.shape[0] != x.shape[1]:
        raise ValueError("bias_gelu_tanh: bias length must equal width (%d), got %d" % (x.shape[1], bias.shape[0]))
    x, bias = x.contiguous(), bias.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    if n:
        grid = (triton.cdiv(n, _BLOCK),)
        _bias_gelu_tanh_kernel[grid](x, bias, out, n, x.shape[1], BLOCK=_BLOCK)
    return out
