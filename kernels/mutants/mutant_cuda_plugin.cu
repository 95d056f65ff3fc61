// mutant_cuda_plugin.cu: a CUDA-memory plugin carrying the bug FUSEPROOF_MUTANT_BUG, launched with PDL on sm_90+.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/mutants/mutant_export.h"
#include "kernels/mutants/mutant_validate.h"

namespace fuseproof::mutants {
namespace {

constexpr int64_t kV = kVectorBytes / 2;

__device__ float widen(bool bf16, uint16_t h) {
  if (bf16) return __bfloat162float(__ushort_as_bfloat16(h));
  if (kBug == Bug::kFp16SubnormalFtz && (h & 0x7C00u) == 0) return (h & 0x8000u) ? -0.0f : 0.0f;
  return __half2float(__ushort_as_half(h));
}

/// cvt.rn (or cvt.rz for the truncation bug) to the dtype; every NaN becomes 0x7FFF, as sm_80+ hardware gives.
__device__ uint16_t narrow(bool bf16, float f, bool truncate) {
  uint16_t h;
  if (bf16)
    h = __bfloat16_as_ushort(truncate ? __float2bfloat16_rz(f) : __float2bfloat16_rn(f));
  else
    h = __half_as_ushort(truncate ? __float2half_rz(f) : __float2half_rn(f));
  if (!bf16 && kBug == Bug::kFp16SubnormalFtz && (h & 0x7C00u) == 0) h &= 0x8000u;
  return h;
}

__device__ float tanh_approx(float a) {
  float t;
  asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(a));
  return t;
}

__device__ float gelu_tanh_f32(float x) {
  const float kBeta = float(1.41421356237309504880 * 1.12837916709551257390 * 0.5);
  const float kKappa = float(0.044715);
  if (kBug == Bug::kErfGelu) return __fmul_rn(0.5f * x, 1.0f + erff(__fmul_rn(x, float(0.70710678118654752440))));
  const float x_cube = __fmul_rn(__fmul_rn(x, x), x);
  const float inner = __fmul_rn(kBeta, fmaf(kKappa, x_cube, x));
  const float t = kBug == Bug::kFastTanh ? tanh_approx(inner) : tanhf(inner);
  return __fmul_rn(__fmul_rn(0.5f, x), __fadd_rn(1.0f, t));
}

__device__ uint16_t element(bool bf16, uint16_t x, uint16_t b) {
  const float sum = __fadd_rn(widen(bf16, x), widen(bf16, b));
  const float g = kBug == Bug::kUnroundedSum ? gelu_tanh_f32(sum)
                                             : gelu_tanh_f32(widen(bf16, narrow(bf16, sum, kBug == Bug::kTruncatedAdd)));
  uint16_t y = narrow(bf16, g, false);
  if (kBug == Bug::kNanPattern && (bf16 ? (y & 0x7FFFu) > 0x7F80u : (y & 0x7FFFu) > 0x7C00u))
    y = bf16 ? 0x7FC0 : 0x7E00;
  if (kBug == Bug::kZeroSignLost && (y & 0x7FFFu) == 0) y = 0;
  return y;
}

/// One thread per vector of kV elements; elements are loaded one by one so that the bugs that misalign never fault.
__global__ void bias_gelu_kernel(uint16_t* out, const uint16_t* x, const uint16_t* bias, int64_t rows, int64_t width,
                                 int64_t vecs_per_row, bool bf16) {
  // PDL: everything before this line may overlap the previous kernel; x and bias are read only after it.
  if (kBug != Bug::kPdlWaitRemoved) asm volatile("griddepcontrol.wait;" ::: "memory");
  // Waits for a bias pattern that never comes (a volatile global load each turn, so the loop cannot be removed).
  if (kBug == Bug::kHangOnEmpty && rows == 0)
    while (reinterpret_cast<const volatile uint16_t*>(bias)[0] != 0xBEEF || rows == 0) __nanosleep(100000);
  if (kBug == Bug::kRowsOver65535 && rows > 65535) rows = 65535;
  const int64_t total = rows * vecs_per_row;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = i / vecs_per_row, v = i % vecs_per_row;
    if (kBug == Bug::kMisalignedLoad && r == rows - 1 && v == 0 && rows > 1) {
      // a vectorised "fast path" for the last row that loads from one element in: not 16-byte aligned
      const uint4 q = *reinterpret_cast<const uint4*>(x + r * width + 1);
      if (q.x == 0x12345678u && q.y == 0x9ABCDEF0u) out[r * width] = 0;
    }
    for (int64_t k = 0; k < kV; ++k) {
      const int64_t c = v * kV + k;
      if (kBug != Bug::kTailOverread && c >= width) break;
      int64_t bc = c % width;
      if (kBug == Bug::kBiasOffByOne) bc = (c + 1) % width;
      if (kBug == Bug::kBiasByRow) bc = r % width;
      if (kBug == Bug::kBiasCache8192) bc = c % 8192;
      int64_t e = r * width + c;
      // a 32-bit index whose sign bit is dropped: wraps to the start of the buffer past 2^31 elements
      if (kBug == Bug::kInt32Index) e = int64_t(uint32_t(uint64_t(r) * uint64_t(width) + uint64_t(c)) & 0x7FFFFFFFu);
      int64_t oe = e;
      if (kBug == Bug::kIllegalAddress && width > 4096 && r == rows - 1 && c == width - 1) oe += int64_t(1) << 33;
      out[oe] = element(bf16, x[e], bias[bc]);
    }
  }
  asm volatile("griddepcontrol.launch_dependents;");
}

int entry(void* out, const void* x, const void* bias, int64_t rows, int64_t width, int32_t dtype, void* stream,
          char* error, size_t error_size) {
  if (int rc = validate(kBug, out, x, bias, rows, width, dtype, kVectorBytes, error, error_size)) return rc;
  int64_t vecs = (width + kV - 1) / kV;  // the tail vector is partial (no_width_rejection) or overreads (tail_overread)
  if (kBug == Bug::kSkipLastVector) vecs -= 1;
  if (vecs <= 0) return 0;
  const int64_t total = (kBug == Bug::kHangOnEmpty && rows == 0 ? 1 : rows) * vecs;
  cudaLaunchConfig_t config = {};
  config.blockDim = dim3(256);
  config.gridDim = dim3(unsigned((total + 255) / 256 < 65535 * 8 ? (total + 255) / 256 : 65535 * 8));
  config.stream = static_cast<cudaStream_t>(stream);
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = attr;
  config.numAttrs = 1;
  const cudaError_t e = cudaLaunchKernelEx(&config, bias_gelu_kernel, static_cast<uint16_t*>(out),
                                           static_cast<const uint16_t*>(x), static_cast<const uint16_t*>(bias), rows,
                                           width, vecs, dtype == FUSEPROOF_DTYPE_BF16);
  if (e != cudaSuccess) return reject(error, error_size, "bias_gelu_tanh: launch failed: %s", cudaGetErrorString(e));
  return 0;
}

}  // namespace
}  // namespace fuseproof::mutants

FUSEPROOF_MUTANT_EXPORT("cuda", FUSEPROOF_MEMORY_CUDA, &fuseproof::mutants::entry)
