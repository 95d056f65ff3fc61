// seeded_generator.cpp: SplitMix64 streams and the Irwin-Hall normal approximation.
#include "seeded_generator.h"

namespace fuseproof::e2e {
namespace {
// Sum of four uniform integers on [0, 65535]: mean 4 * 32767.5, variance 4 * (65536^2 - 1) / 12.
constexpr int64_t kIrwinHallMean = 131070;
// 1 / sqrt((65536^2 - 1) / 3), rounded to float; a literal so no libm call decides the bits.
constexpr float kIrwinHallInvStd = 2.6428997921303014e-05f;
}  // namespace

uint64_t fnv1a64(std::string_view text) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

SeededGenerator::SeededGenerator(uint64_t seed, std::string_view stream) : state_(seed ^ fnv1a64(stream)) {}

uint64_t SeededGenerator::next_u64() {
  uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

float SeededGenerator::next_normal() {
  const uint64_t r = next_u64();
  const int64_t sum = static_cast<int64_t>(r & 0xFFFF) + static_cast<int64_t>((r >> 16) & 0xFFFF) +
                      static_cast<int64_t>((r >> 32) & 0xFFFF) + static_cast<int64_t>(r >> 48);
  // |sum - mean| < 2^18: exact in float, so the only rounding is the multiply.
  return static_cast<float>(sum - kIrwinHallMean) * kIrwinHallInvStd;
}

float SeededGenerator::next_uniform() {
  const int64_t u = static_cast<int64_t>(next_u64() >> 40);  // 24 bits
  return static_cast<float>(u - (int64_t{1} << 23)) * 0x1p-23f;
}

std::vector<float> seeded_normal(uint64_t seed, std::string_view stream, size_t count, float scale) {
  SeededGenerator gen(seed, stream);
  std::vector<float> out(count);
  for (float& v : out) v = gen.next_normal() * scale;
  return out;
}

}  // namespace fuseproof::e2e
