// nvfp4.h: NVFP4 weight quantisation (FP4 E2M1 values, FP8 E4M3 scale per 16-element block, FP32 tensor scale) and dequantisation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fuseproof::e2e {

/// Elements per NVFP4 scale block, along the reduction (input) dimension.
inline constexpr int kNvfp4BlockSize = 16;
/// Largest FP4 E2M1 magnitude, and largest finite FP8 E4M3 magnitude (OCP "FN" variant: no infinities).
inline constexpr float kE2m1Max = 6.0f;
inline constexpr float kE4m3Max = 448.0f;

/// FP4 E2M1 code to value. Code bits: | S | E E | M |, bias 1; magnitudes 0, 0.5, 1, 1.5, 2, 3, 4, 6.
float e2m1_to_f32(uint8_t code);
/// Nearest E2M1 code, ties to even mantissa, saturating at +-6; NaN is not expected (weights are finite).
uint8_t f32_to_e2m1(float v);

/// FP8 E4M3 (FN) byte to value. Bits: | S | E E E E | M M M |, bias 7; 0x7F/0xFF are NaN, no infinities.
float e4m3_to_f32(uint8_t code);
/// Nearest E4M3 byte, ties to even, saturating at +-448 (the "satfinite" conversion NVFP4 recipes use).
uint8_t f32_to_e4m3(float v);

/// A row-major [rows, cols] matrix in NVFP4: one E2M1 code per element, one E4M3 scale per 16 consecutive elements of a row.
struct Nvfp4Matrix {
  int64_t rows = 0;
  int64_t cols = 0;                 ///< multiple of kNvfp4BlockSize
  std::vector<uint8_t> codes;       ///< rows * cols E2M1 codes (one per byte, unpacked for clarity)
  std::vector<uint8_t> block_scales;  ///< rows * cols / 16 E4M3 bytes
  float tensor_scale = 1.0f;        ///< FP32 decode scale: value = e2m1 * e4m3 * tensor_scale
};

/// Quantises with the two-level recipe: tensor_scale = amax / (448 * 6); block scale = e4m3(block_amax / 6 / tensor_scale);
/// code = e2m1(w / (block_scale * tensor_scale)). Rejects cols not a multiple of 16 with std::invalid_argument.
Nvfp4Matrix quantize_nvfp4(const float* w, int64_t rows, int64_t cols);

/// e2m1 * e4m3 for every element, without the tensor scale: at most 6 significant bits, so exact in bf16 and in float.
/// The GEMM multiplies its FP32 accumulator by tensor_scale, as NVFP4 GEMMs apply the global scale in the epilogue.
std::vector<float> dequantize_nvfp4_unscaled(const Nvfp4Matrix& m);

}  // namespace fuseproof::e2e
