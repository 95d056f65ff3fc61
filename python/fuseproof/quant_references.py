"""quant_references.py: the public torch references of FP8-group and NVFP4 quantization, one function per (op family,
contract), each written as its project writes it, run as eager PyTorch; and the quantization kernels' CUDA arithmetic
(contract rcp-approx), which torch cannot express, as a CuPy kernel.

Every function takes the blocks of one dtype T (bf16 or fp16) as a tensor [N, B] (B = 16 for NVFP4, 128 for FP8
groups) on the device it should run on, and for NVFP4 the global scale of each block as a float32 tensor [N, 1]; it
returns the records of `fuseproof eval` for block ops: codes uint8 [N, B] (E2M1: the code in the low nibble, bit 3 the
sign; E4M3: the byte) and the scale of each block (NVFP4: the E4M3 byte, uint8 [N]; FP8 groups: the float32 scale
[N]). A project's reference computes every block on its own (block max, block scale, elementwise steps), so running it
over N blocks with a per-block global scale gives each block what it gives alone: the elementwise kernels compute the
same per element whatever the broadcast.

Where a project's reference returns E2M1 values (vLLM's and FlashInfer's cast_to_fp4 return float32 values, not
codes), the code is read off the value: the magnitude's index in {0, 0.5, 1, 1.5, 2, 3, 4, 6} and the sign bit of the
float32 value (so a -0.0 result is 0x8). A NaN value has no E2M1 code: it is written as kE2m1NanValue (0xFF), a byte
no code can be. Values outside the table are a defect of the reference and raise.

torch.float8_e4m3fn exists from torch 2.1; the module imports without it (torch 1.13 here) and the functions that
need it raise Unsupported from e4m3_cast, the one place a reference meets float8 (a CPU test may put an emulation of
the eager cast there). The E2M1 tables run on any torch, on the CPU too.
"""

import torch

from fuseproof.composition import ACTIVATIONS

NVFP4_BLOCK = 16
FP8_GROUP = 128
E2M1_MAGNITUDES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
kE2m1NanValue = 0xFF  # the byte written for a reference's NaN E2M1 value: outside 0x0..0xF, so never a code


class Unsupported(RuntimeError):
    """A reference that cannot run here (no torch.float8_e4m3fn, no CuPy, no CUDA); str() is one line."""


def has_float8():
    return hasattr(torch, "float8_e4m3fn")


def _need_float8():
    if not has_float8():
        raise Unsupported(f"torch {torch.__version__} has no torch.float8_e4m3fn (torch 2.1 or newer has it)")


E4M3_MAX = 448.0  # torch.finfo(torch.float8_e4m3fn).max, the Python float the references divide and clamp by


def e4m3_cast(t):
    """`t.to(torch.float8_e4m3fn)`, eager's cast (c10 Float8_e4m3fn.h: round to nearest even, NaN above 464, for
    +-Inf and for NaN), as (its bytes uint8, its float32 values `.to(torch.float32)`). Every reference casts through
    this function, by its module-level name."""
    _need_float8()
    f8 = t.to(torch.float8_e4m3fn)
    return f8.view(torch.uint8), f8.to(torch.float32)


# ---- E2M1 tables, as the projects write them ---------------------------------------------------------------------

def get_reciprocal(x):
    """vLLM's and FlashInfer's get_reciprocal (vLLM tests/kernels/quantization/nvfp4_utils.py and test_nvfp4_quant.py;
    FlashInfer tests/test_helpers/utils_fp4.py): 0 for 0, else `1.0 / x`. On a tensor, `1.0 / x` is
    Tensor.__rtruediv__, i.e. x.reciprocal() * 1.0 (one correctly rounded binary32 reciprocal); on a Python number it
    is a binary64 division, which the tensor op it meets rounds to binary32."""
    if isinstance(x, torch.Tensor):
        return torch.where(x == 0, torch.tensor(0.0, dtype=x.dtype), 1.0 / x)
    if isinstance(x, (float, int)):
        return 0.0 if x == 0 else 1.0 / x
    raise TypeError("Input must be a float, int, or a torch.Tensor.")


def cast_to_fp4(x):
    """vLLM's cast_to_fp4 (tests/kernels/quantization/test_nvfp4_quant.py, nvfp4_utils.py; the same in FlashInfer's
    tests/test_helpers/utils_fp4.py): a comparison table on |x| assigned in place, then `* torch.sign(x)`. Each
    closed end sits on the even code's side (0.25 -> 0, 0.75 -> 1, 1.25 -> 1, 1.75 -> 2, 2.5 -> 2, 3.5 -> 4, 5 -> 4),
    so it is round-to-nearest-even onto E2M1 with |x| > 5 going to 6 (callers clamp to +-6 first). A negative input
    that rounds to 0 gives 0 * -1 = -0.0; -0.0 itself gives 0 * sign(-0.0) = 0 * 0 (torch.sign(-0.0) is +0.0 on the
    CPU). NaN: every comparison is false and NaN * sign(NaN) is NaN. float32 in, float32 values out; x is modified."""
    sign = torch.sign(x)
    x = torch.abs(x)
    x[(x >= 0.0) & (x <= 0.25)] = 0.0
    x[(x > 0.25) & (x < 0.75)] = 0.5
    x[(x >= 0.75) & (x <= 1.25)] = 1.0
    x[(x > 1.25) & (x < 1.75)] = 1.5
    x[(x >= 1.75) & (x <= 2.5)] = 2.0
    x[(x > 2.5) & (x < 3.5)] = 3.0
    x[(x >= 3.5) & (x <= 5.0)] = 4.0
    x[x > 5.0] = 6.0
    return x * sign


def cast_to_fp4_codes_te(x):
    """TransformerEngine's cast_to_fp4x2 (transformer_engine/pytorch/custom_recipes/quantization_nvfp4.py; the same in
    FlashInfer's tests/test_helpers/utils_fp4.py) without its last line, which packs two codes per byte: codes
    straight from comparisons, starting from zeros. The positive table takes [0, 0.25] to code 0, so -0.0 gives 0 (not
    0x8); the negative table starts at `(x >= -0.25) & (x < -0.0)`, so -0.1 gives 0x8. NaN matches nothing: code 0."""
    result = torch.zeros_like(x, dtype=torch.uint8)
    result[(x >= 0.0) & (x <= 0.25)] = 0
    result[(x > 0.25) & (x < 0.75)] = 1
    result[(x >= 0.75) & (x <= 1.25)] = 2
    result[(x > 1.25) & (x < 1.75)] = 3
    result[(x >= 1.75) & (x <= 2.5)] = 4
    result[(x > 2.5) & (x < 3.5)] = 5
    result[(x >= 3.5) & (x <= 5.0)] = 6
    result[x > 5.0] = 7

    result[(x >= -0.25) & (x < -0.0)] = 8
    result[(x < -0.25) & (x > -0.75)] = 9
    result[(x <= -0.75) & (x >= -1.25)] = 10
    result[(x < -1.25) & (x > -1.75)] = 11
    result[(x <= -1.75) & (x >= -2.5)] = 12
    result[(x < -2.5) & (x > -3.5)] = 13
    result[(x <= -3.5) & (x >= -5.0)] = 14
    result[x < -5.0] = 15
    return result


def e2m1_codes_of_values(v):
    """The E2M1 codes of float32 values a table reference returned: the magnitude's index in E2M1_MAGNITUDES, bit 3 the
    float32 sign bit (-0.0 -> 0x8); NaN -> kE2m1NanValue. Raises ValueError on a value no code has."""
    table = torch.tensor(E2M1_MAGNITUDES, dtype=torch.float32, device=v.device)
    hit = v.abs().unsqueeze(-1) == table
    nan = torch.isnan(v)
    bad = ~(hit.any(-1) | nan)
    if bool(bad.any()):
        raise ValueError("a table reference returned %s, which is no E2M1 value" % v[bad][:4].tolist())
    idx = hit.to(torch.int32).argmax(-1).to(torch.uint8)
    sign = (v.view(torch.int32) < 0).to(torch.uint8) << 3
    return torch.where(nan, torch.full_like(idx, kE2m1NanValue), idx | sign)


# ---- NVFP4: 16-element blocks, E4M3 block scales, a float32 global scale ------------------------------------------

def nvfp4_vllm_ref(x, global_scale):
    """Contract vllm-ref: vLLM's ref_nvfp4_quant with its +-448 clamp
    (vllm/model_executor/layers/quantization/utils/nvfp4_emulation_utils.py; the test copy in
    tests/kernels/quantization/test_nvfp4_quant.py lacks the clamp). Arithmetic, binary32 throughout:
      vec_max = max |x| over the block in T (NaN propagates), widened;  scale = gs * (vec_max * fl(1/6));
      scale = clamp(scale, -448, 448) -> E4M3 (eager cast: NaN stays NaN, 0x7F) -> float32;
      output_scale = get_reciprocal(scale * get_reciprocal(gs))  (0 where a factor is 0);
      element = cast_to_fp4(clamp(x * output_scale, -6, 6)).
    Returns (codes uint8 [N, 16], E4M3 scale bytes uint8 [N])."""
    vec_max = torch.max(torch.abs(x), dim=-1, keepdim=True)[0].to(torch.float32)
    scale = global_scale * (vec_max * get_reciprocal(6.0))
    scale = torch.clamp(scale, max=448, min=-448)
    scale_bytes, scale = e4m3_cast(scale)
    output_scale = get_reciprocal(scale * get_reciprocal(global_scale))
    scaled_x = x.to(torch.float32) * output_scale
    clipped_x = torch.clamp(scaled_x, -6.0, 6.0)
    return e2m1_codes_of_values(cast_to_fp4(clipped_x)), scale_bytes[:, 0]


def nvfp4_flashinfer_ref(x, global_scale):
    """Contract flashinfer-exact: FlashInfer's ref_fp4_quant with sf_use_ue8m0=False, block 16
    (tests/test_helpers/utils_fp4.py, used by tests/utils/test_fp4_quantize.py; FlashInfer's kernels match it bit for
    bit only with their fast math off). vLLM's arithmetic without the +-448 clamp: a block scale of 464 or more casts
    to E4M3 NaN (0x7F), whose NaN then reaches every element (NaN value, kE2m1NanValue); 464 itself ties to 448."""
    vec_max = torch.max(torch.abs(x), dim=-1, keepdim=True)[0].to(torch.float32)
    scale = global_scale * (vec_max * get_reciprocal(6.0))
    scale_bytes, scale = e4m3_cast(scale)
    output_scale = get_reciprocal(scale * get_reciprocal(global_scale))
    scaled_x = x.to(torch.float32) * output_scale
    clipped_x = torch.clamp(scaled_x, -6.0, 6.0)
    return e2m1_codes_of_values(cast_to_fp4(clipped_x)), scale_bytes[:, 0]


def nvfp4_te_ref(x, global_scale):
    """Contract te: TransformerEngine's NVFP4QuantizerRef._quantize_blockwise_reference, 1x16 tiles, no RHT, no pow2
    scales (transformer_engine/pytorch/custom_recipes/quantization_nvfp4.py; FlashInfer's copy is ref_fp4_quant_te in
    tests/test_helpers/utils_fp4.py). TE derives its global encode scale from a tensor amax, (448 * 6) / amax; here the
    record's global scale IS that encode scale, and TE's steps after it run unchanged (its min with FLT_MAX and 0 -> 1
    are identities on a positive finite scale). Arithmetic, binary32:
      ges = gs;  gds = 1 / ges;  mult = ges * reciprocal(6);  decode = min(vec_max * mult, FLT_MAX)
      (the factors in TE's order: vLLM rounds vec_max * (1/6) first);  clamp +-448 -> E4M3 (eager cast);
      encode = min(1 / (float(decode) * gds), FLT_MAX)  (a zero decode scale gives FLT_MAX, not 0);
      code = cast_to_fp4x2's table on clamp(x * encode, -6, 6)."""
    dev = x.device
    vec_max = torch.amax(torch.abs(x), dim=-1, keepdim=True).to(torch.float32)
    FLOAT4_E2M1_MAX = torch.tensor(6.0, device=dev, dtype=torch.float32)
    FLOAT8_E4M3_MAX = torch.tensor(448.0, device=dev, dtype=torch.float32)
    flt_max = torch.tensor(torch.finfo(torch.float32).max, device=dev, dtype=torch.float32)
    global_encode_scale = torch.min(global_scale, flt_max)
    global_encode_scale = torch.where(global_encode_scale == 0.0, torch.ones_like(global_encode_scale),
                                      global_encode_scale)
    global_decode_scale = torch.div(1.0, global_encode_scale)
    global_encode_scale_multiplier = global_encode_scale * torch.reciprocal(FLOAT4_E2M1_MAX)
    decode_scale = vec_max * global_encode_scale_multiplier
    decode_scale = torch.min(decode_scale, flt_max)
    decode_scale = torch.clamp(decode_scale, min=-FLOAT8_E4M3_MAX, max=FLOAT8_E4M3_MAX)
    decode_bytes, decode_scale = e4m3_cast(decode_scale)
    encode_scale = torch.min(torch.div(1.0, decode_scale * global_decode_scale), flt_max)
    scaled_x = x.to(torch.float32) * encode_scale
    clipped_x = torch.clamp(scaled_x, -FLOAT4_E2M1_MAX, FLOAT4_E2M1_MAX)
    return cast_to_fp4_codes_te(clipped_x), decode_bytes[:, 0]


# The quantization kernels' arithmetic (vLLM csrc/quantization/fp4/nvfp4_utils.cuh, cvt_warp_fp16_to_fp4, which
# FlashInfer and TensorRT-LLM share): NOT a torch reference, the CUDA arithmetic itself, one thread per block.
_RCP_APPROX_SOURCE = r"""
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_fp4.h>

// CuPy compiles every kernel with -ftz=true (appended after the caller's options), which would flush the f32
// products' subnormal operands and results; the kernel's products are plain mul.rn.f32, so they are written in PTX.
__device__ __forceinline__ float mul_rn(float a, float b) {
  float c;
  asm volatile("mul.rn.f32 %0, %1, %2;\n" : "=f"(c) : "f"(a), "f"(b));
  return c;
}

__device__ __forceinline__ float rcp_approx_ftz(float a) {
  float b;
  asm volatile("rcp.approx.ftz.f32 %0, %1;\n" : "=f"(b) : "f"(a));
  return b;
}

template <class T> __device__ T from_bits(unsigned short u);
template <> __device__ __half from_bits<__half>(unsigned short u) { return __ushort_as_half(u); }
template <> __device__ __nv_bfloat16 from_bits<__nv_bfloat16>(unsigned short u) { return __ushort_as_bfloat16(u); }
__device__ float widen(__half h) { return __half2float(h); }
__device__ float widen(__nv_bfloat16 h) { return __bfloat162float(h); }

template <class T>
__device__ void quant_block(const unsigned short* x, float sf_scale, unsigned char* codes, unsigned char* sf) {
  // The kernel's amax: two threads of 8 elements; lane x of a thread's __hmax2 sees the even positions, lane y the
  // odd ones; then the partner thread's pair (shfl_xor 1), then x against y. __hmax returns the other operand where
  // one is NaN.
  T lx[2], ly[2];
  for (int t = 0; t < 2; ++t) {
    lx[t] = __habs(from_bits<T>(x[8 * t + 0]));
    ly[t] = __habs(from_bits<T>(x[8 * t + 1]));
    for (int i = 1; i < 4; ++i) {
      lx[t] = __hmax(lx[t], __habs(from_bits<T>(x[8 * t + 2 * i])));
      ly[t] = __hmax(ly[t], __habs(from_bits<T>(x[8 * t + 2 * i + 1])));
    }
  }
  const T mx = __hmax(lx[1], lx[0]);
  const T my = __hmax(ly[1], ly[0]);
  const float vec_max = widen(__hmax(mx, my));
  float sf_value = mul_rn(sf_scale, mul_rn(vec_max, rcp_approx_ftz(6.0f)));
  const __nv_fp8_e4m3 tmp = __nv_fp8_e4m3(sf_value);  // __nv_cvt_float_to_fp8(.., __NV_SATFINITE, __NV_E4M3)
  *sf = tmp.__x;
  sf_value = static_cast<float>(tmp);
  const float output_scale = sf_value != 0 ? rcp_approx_ftz(mul_rn(sf_value, rcp_approx_ftz(sf_scale))) : 0.0f;
  for (int i = 0; i < 16; ++i) {
    const float v = mul_rn(widen(from_bits<T>(x[i])), output_scale);
    codes[i] = __nv_cvt_float_to_fp4(v, __NV_E2M1, cudaRoundNearest) & 0xF;
  }
}

extern "C" __global__ void nvfp4_rcp_approx(const unsigned short* x, const float* gs, unsigned long long n, int bf16,
                                            unsigned char* codes, unsigned char* sf) {
  const unsigned long long b = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (b >= n) return;
  if (bf16) quant_block<__nv_bfloat16>(x + 16 * b, gs[b], codes + 16 * b, sf + b);
  else quant_block<__half>(x + 16 * b, gs[b], codes + 16 * b, sf + b);
}
"""
_rcp_kernel = None


def nvfp4_rcp_approx_cuda(x, global_scale):
    """Contract rcp-approx: the NVFP4 kernels' CUDA arithmetic (vLLM csrc/quantization/fp4/nvfp4_utils.cuh,
    cvt_warp_fp16_to_fp4), run as a CuPy kernel because torch cannot express rcp.approx. Not a torch reference:
      vec_max = __hmax over __habs in T (NaN members ignored; NaN only when all 16 are), widened;
      sf = gs * (vec_max * rcp.approx.ftz(6));  E4M3 byte = __nv_cvt_float_to_fp8(sf, __NV_SATFINITE, __NV_E4M3)
      (+-448 above 464, NaN -> 0x7F);  sf = float(byte);
      out = sf != 0 ? rcp.approx.ftz(sf * rcp.approx.ftz(gs)) : 0;  code = __nv_cvt_float_to_fp4(x * out, E2M1,
      round-nearest) (RNE, satfinite; NaN -> +6; cvt.rn.satfinite.e2m1x2.f32 on sm_100, CUDA's software path on
      sm_90). No step fuses: every product stands alone, mul.rn.f32 without flush to zero (CuPy's forced -ftz=true
      would flush bf16-subnormal amaxes; only rcp.approx.ftz flushes, as in the kernel).
    x is a CUDA tensor [N, 16] of bf16 or fp16, global_scale float32 [N, 1]."""
    global _rcp_kernel
    try:
        import cupy
    except ImportError as e:
        raise Unsupported(f"no CuPy ({e}): the rcp-approx arithmetic runs as a CuPy kernel")
    if x.device.type != "cuda":
        raise Unsupported(f"rcp-approx is CUDA arithmetic: it needs a CUDA tensor, got one on {x.device}")
    if _rcp_kernel is None:
        _rcp_kernel = cupy.RawKernel(_RCP_APPROX_SOURCE, "nvfp4_rcp_approx", options=("--std=c++17",))
    n = x.shape[0]
    bits = cupy.asarray(x.contiguous().view(torch.int16)).view(cupy.uint16)
    gs = cupy.asarray(global_scale.to(torch.float32).contiguous().reshape(n))
    codes = cupy.empty((n, NVFP4_BLOCK), dtype=cupy.uint8)
    sf = cupy.empty(n, dtype=cupy.uint8)
    threads = 128
    _rcp_kernel(((n + threads - 1) // threads,), (threads,),
                (bits, gs, cupy.uint64(n), cupy.int32(x.dtype == torch.bfloat16), codes, sf))
    return torch.as_tensor(codes, device=x.device), torch.as_tensor(sf, device=x.device)


def swizzle_blockscale(scale):
    """vLLM's swizzle_blockscale (vllm/model_executor/layers/quantization/utils/nvfp4_utils.py; the same permutation in
    FlashInfer's and CUTLASS's tests): the [M, K] block scales padded with zeros to [round_up(M, 128), round_up(K, 4)]
    and laid out in the 128x4 tiles of cuBLAS / tcgen05 block scaling,
        reshape(M_padded // 128, 4, 32, K_padded // 4, 4).permute(0, 3, 2, 1, 4)
    so block k of row r sits at ((r / 128) * (K_padded / 4) + k / 4) * 512 + (r % 32) * 16 + ((r / 32) % 4) * 4 + k % 4
    (kernels/fuseproof_kernel_abi.h, FUSEPROOF_SCALE_SWIZZLED_128X4). Any 1-byte dtype (vLLM's is float8_e4m3fn)."""
    M, K = scale.shape
    m_padded, k_padded = (M + 127) // 128 * 128, (K + 3) // 4 * 4
    padded = torch.zeros((m_padded, k_padded), dtype=scale.dtype, device=scale.device)
    padded[:M, :K] = scale
    padded = padded.reshape(m_padded // 128, 4, 32, k_padded // 4, 4)
    return padded.permute(0, 3, 2, 1, 4).contiguous().reshape(m_padded, k_padded)


# ---- FP8 per-token groups of 128: E4M3 codes, a float32 scale ----------------------------------------------------

def fp8_group_sglang(x, eps=1e-10):
    """Contract fp8-group: sglang's native_per_token_group_quant_fp8 (sglang python/sglang/test/test_block_fp8.py,
    formerly test/srt/test_block_fp8.py; copies in vLLM's tests/kernels/quantization/test_block_fp8.py), group 128,
    torch.float8_e4m3fn:
      amax = x_.abs().max(-1)[0].clamp(min=eps) in T (fp16: eps rounds to 0; NaN propagates) -> float32;
      x_s = amax / 448.0 (on CUDA: amax * fl32(1/448));  x_q = (x_ / x_s).clamp(-448, 448).to(float8_e4m3fn)
      (x_ widened, one binary32 division; the eager cast: NaN stays NaN).
    All-zero group: bf16 x_s = bf16(1e-10) * fl32(1/448), codes 0x00; fp16 x_s = 0, 0 / 0 = NaN, codes 0x7F.
    Returns (E4M3 codes uint8 [N, 128], scales float32 [N])."""
    amax = x.abs().max(dim=-1, keepdim=True)[0].clamp(min=eps).to(torch.float32)
    x_s = amax / E4M3_MAX
    x_q, _ = e4m3_cast((x / x_s).clamp(min=-E4M3_MAX, max=E4M3_MAX))
    return x_q, x_s[:, 0]


FP8_MIN_SCALING_FACTOR = 1.0 / (E4M3_MAX * 512.0)  # vLLM's _FP8_MIN_SCALING_FACTOR


def fp8_group_ue8m0(x):
    """Contract fp8-group-ue8m0: vLLM's QuantFP8._quantize_group_native with use_ue8m0 (vllm/model_executor/layers/
    quantization/input_quant_fp8.py, the torch path of vLLM's group quantizer), group 128:
      absmax = x.abs().max(-1)[0].float() (NaN propagates; no eps);  scales_raw = absmax / 448.0 (on CUDA:
      absmax * fl32(1/448));  scales_raw = torch.exp2(torch.ceil(torch.log2(scales_raw)));
      scales = scales_raw.clamp(min=1 / (448 * 512));  x_q = (x / scales).clamp(-448, 448).to(float8_e4m3fn).
    log2 rounds to binary32, yet on a bf16 or fp16 amax scales_raw is a power of two or at least 2^-11 (relative)
    from one, so the result is the exact power-of-two ceiling. All-zero group (and any scales_raw <= 2^-18): the floor
    fl32(1/229376) = 4.36e-6, not a power of two, codes 0x00 (-0.0: 0x80). NaN member: scale NaN, codes 0x7F.
    Returns (E4M3 codes uint8 [N, 128], scales float32 [N])."""
    absmax = x.abs().max(dim=-1, keepdim=True)[0].float()
    scales_raw = absmax / E4M3_MAX
    scales_raw = torch.exp2(torch.ceil(torch.log2(scales_raw)))
    scales = scales_raw.clamp(min=FP8_MIN_SCALING_FACTOR)
    x_q, _ = e4m3_cast((x / scales).clamp(-E4M3_MAX, E4M3_MAX))
    return x_q, scales[:, 0]


# ---- the ops: activation (eager, rounded to T), then the family's quantizer --------------------------------------

def silu_and_mul_eager(gate, up):
    """F.silu(gate) * up in T, as eager torch writes it (vLLM SiluAndMul.forward_native)."""
    return ACTIVATIONS["silu"](gate) * up


def bias_gelu_tanh_eager(x, bias):
    """F.gelu(x + bias, approximate='tanh') in T."""
    return ACTIVATIONS["gelu_tanh"](x + bias)


FAMILIES = {
    "nvfp4": {"block": NVFP4_BLOCK, "scalar": True, "scale_bytes": 1,
              "contracts": {"vllm-ref": nvfp4_vllm_ref, "rcp-approx": nvfp4_rcp_approx_cuda,
                            "te": nvfp4_te_ref, "flashinfer-exact": nvfp4_flashinfer_ref}},
    "fp8": {"block": FP8_GROUP, "scalar": False, "scale_bytes": 4,
            "contracts": {"fp8-group": fp8_group_sglang, "fp8-group-ue8m0": fp8_group_ue8m0}},
}

# op -> (family, input names in declared order, activation or None)
OPS = {
    "fp8_group_quant": ("fp8", ("x",), None),
    "nvfp4_quant": ("nvfp4", ("x",), None),
    "silu_and_mul_fp8_group_quant": ("fp8", ("gate", "up"), silu_and_mul_eager),
    "silu_and_mul_nvfp4_quant": ("nvfp4", ("gate", "up"), silu_and_mul_eager),
    "bias_gelu_tanh_nvfp4_quant": ("nvfp4", ("x", "bias"), bias_gelu_tanh_eager),
}


def run_op(op, contract, inputs, global_scale=None):
    """The reference of (op, contract) on blocks: inputs = tensors [N, B] in T in declared order; global_scale float32
    [N, 1] for NVFP4. The activation (if any) runs in eager torch and rounds to T; then the contract's quantizer."""
    family, names, activation = OPS[op]
    fn = FAMILIES[family]["contracts"][contract]
    y = activation(*inputs) if activation else inputs[0]
    return fn(y, global_scale) if FAMILIES[family]["scalar"] else fn(y)
