// input_element.h: the benchmark's input generators, one element at a time from (seed, stream, index), compiled for
// the host (emulated backend, tests) and the device (bench/input_fill.cu): the same formula fills both.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define FUSEPROOF_BENCH_HD __host__ __device__ __forceinline__
#else
#define FUSEPROOF_BENCH_HD inline
#endif

namespace fuseproof::bench {

/// A counter-based hash: splitmix64's finalizer over seed, stream and index, so element i of any tensor is known
/// without generating the ones before it (any thread, any order, host or device).
FUSEPROOF_BENCH_HD uint64_t input_hash(uint64_t seed, uint64_t stream, uint64_t i) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + stream * 0xC2B2AE3D27D4EB4Full + (i + 1) * 0xD1B54A32D192ED03ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Any 16-bit pattern with equal probability: NaNs, infinities, subnormals and both zeros included.
FUSEPROOF_BENCH_HD uint16_t uniform16_element(uint64_t seed, uint64_t stream, uint64_t i) {
  return uint16_t(input_hash(seed, stream, i) >> 24);
}

/// N(0, sigma) in binary32 by Box-Muller: u1 in (0, 1] from the high 32 bits, u2 in [0, 1) from 24 low bits;
/// |z| <= sigma * sqrt(2 ln 2^32) = 6.66 sigma. The device's logf/cosf may differ from the host's in the last place.
FUSEPROOF_BENCH_HD float normal_element(uint64_t seed, uint64_t stream, uint64_t i, float sigma) {
  const uint64_t h = input_hash(seed, stream, i);
  const float u1 = (float(uint32_t(h >> 32)) + 1.0f) * 2.3283064365386963e-10f;  // 2^-32
  const float u2 = float(uint32_t(h) >> 8) * 5.9604644775390625e-8f;              // 2^-24
  const float r = sqrtf(-2.0f * logf(u1 < 1.0f ? u1 : 1.0f));
  return sigma * r * cosf(6.28318530717958647692f * u2);
}

}  // namespace fuseproof::bench
