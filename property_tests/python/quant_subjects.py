"""quant_subjects.py: the projects' torch references of the quantization ops (fuseproof/quant_references.py) as CPU
quantization subjects for the audit on torch 1.13, and broken ones for the negative controls.

Each subject is subjects.quant_reference_subject (the built-in eager subject) with the two seams of
fuseproof/quant_emulation.py, so that the CPU computes what CUDA does: float8_e4m3fn's cast emulated (torch 1.13 has
no float8) and `tensor / number` as CUDA's multiply by the binary32 reciprocal; a NaN float32 scale is returned as
the GPU's canonical 0x7FFFFFFF (the CPU keeps the payload of the NaN it met). Nothing else of a reference changes.
"""

import torch

from fuseproof import _engine, quant_emulation, subjects
from fuseproof.quant_emulation import CudaScalarDivision

quant_emulation.install()

_GPU_NAN = torch.tensor([0x7FFFFFFF], dtype=torch.int32).view(torch.float32)[0]


def _on_cpu_as_cuda(op, contract, name):
    reference = subjects.quant_reference_subject(_engine.find_op(op), contract)

    def subject(*args, **kwargs):
        codes, scales = reference(*[a.as_subclass(CudaScalarDivision) for a in args], **kwargs)
        codes, scales = codes.as_subclass(torch.Tensor), scales.as_subclass(torch.Tensor)
        if scales.dtype == torch.float32:
            scales = torch.where(torch.isnan(scales), _GPU_NAN, scales)
        return codes, scales

    subject.__name__ = subject.__qualname__ = name
    subject.__module__ = __name__
    subject.fuseproof_contract = contract
    subject.fuseproof_scale_layouts = reference.fuseproof_scale_layouts
    return subject


# One per op, the contracts spread over them.
nvfp4_quant_vllm_ref = _on_cpu_as_cuda("nvfp4_quant", "vllm-ref", "nvfp4_quant_vllm_ref")
nvfp4_quant_te = _on_cpu_as_cuda("nvfp4_quant", "te", "nvfp4_quant_te")
nvfp4_quant_flashinfer_exact = _on_cpu_as_cuda("nvfp4_quant", "flashinfer-exact", "nvfp4_quant_flashinfer_exact")
fp8_group_quant_fp8_group = _on_cpu_as_cuda("fp8_group_quant", "fp8-group", "fp8_group_quant_fp8_group")
fp8_group_quant_ue8m0 = _on_cpu_as_cuda("fp8_group_quant", "fp8-group-ue8m0", "fp8_group_quant_ue8m0")
silu_and_mul_fp8_group_quant_fp8_group = _on_cpu_as_cuda("silu_and_mul_fp8_group_quant", "fp8-group",
                                                         "silu_and_mul_fp8_group_quant_fp8_group")
silu_and_mul_nvfp4_quant_vllm_ref = _on_cpu_as_cuda("silu_and_mul_nvfp4_quant", "vllm-ref",
                                                    "silu_and_mul_nvfp4_quant_vllm_ref")
silu_and_mul_nvfp4_quant_te = _on_cpu_as_cuda("silu_and_mul_nvfp4_quant", "te", "silu_and_mul_nvfp4_quant_te")
bias_gelu_tanh_nvfp4_quant_vllm_ref = _on_cpu_as_cuda("bias_gelu_tanh_nvfp4_quant", "vllm-ref",
                                                      "bias_gelu_tanh_nvfp4_quant_vllm_ref")


# ---- negative controls ---------------------------------------------------------------------------------------------

def nvfp4_quant_scale_off_by_one(x, global_scale, scale_layout="linear"):
    """vllm-ref with every nonzero E4M3 scale byte one code higher (its codes unchanged)."""
    codes, scales = nvfp4_quant_vllm_ref(x, global_scale, scale_layout=scale_layout)
    return codes, torch.where((scales & 0x7F) != 0, scales + 1, scales)


nvfp4_quant_scale_off_by_one.fuseproof_contract = "vllm-ref"
nvfp4_quant_scale_off_by_one.fuseproof_scale_layouts = ("linear", "swizzled-128x4")


def fp8_group_quant_negative_zero_flipped(x):
    """fp8-group with every -0 code (0x80) written as +0 (0x00)."""
    codes, scales = fp8_group_quant_fp8_group(x)
    return torch.where(codes == 0x80, torch.zeros_like(codes), codes), scales


fp8_group_quant_negative_zero_flipped.fuseproof_contract = "fp8-group"
