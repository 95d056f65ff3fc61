// seeded_generator.h: the project's own deterministic generator (SplitMix64 streams keyed by seed and name) for weights and latents.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace fuseproof::e2e {

/// SplitMix64 stream whose state starts from seed ^ FNV-1a(stream name), so each tensor is independent of creation order.
class SeededGenerator {
 public:
  SeededGenerator(uint64_t seed, std::string_view stream);

  /// Next 64 raw bits (SplitMix64, Steele et al. 2014).
  uint64_t next_u64();
  /// Approximately standard normal: Irwin-Hall sum of four 16-bit uniforms, centred in integers, then one float multiply.
  /// Integer arithmetic and one IEEE multiply: the same bits on every machine, compiler and libtorch version.
  float next_normal();
  /// Uniform on [-1, 1) with 24 significant bits (exact in float).
  float next_uniform();

 private:
  uint64_t state_;
};

/// FNV-1a 64-bit hash of a stream name.
uint64_t fnv1a64(std::string_view text);

/// `count` values of next_normal() * scale from the named stream (the product is one IEEE float multiply).
std::vector<float> seeded_normal(uint64_t seed, std::string_view stream, size_t count, float scale);

}  // namespace fuseproof::e2e
