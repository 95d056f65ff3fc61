// dtype.cpp: dtype names, bit casts and ULP distance.
#include "dtype.h"

#include <cstdlib>

namespace fuseproof::ref {

std::optional<Dtype> parse_dtype(std::string_view s) {
  if (s == "bf16") return Dtype::kBf16;
  if (s == "fp16") return Dtype::kFp16;
  return std::nullopt;
}

uint32_t ulp_distance(uint16_t a, uint16_t b) {
  // Map sign-magnitude to a monotone integer line: -0 and +0 both land on 0.
  auto line = [](uint16_t h) -> int32_t { return (h & 0x8000u) ? -int32_t(h & 0x7FFFu) : int32_t(h); };
  return uint32_t(std::abs(line(a) - line(b)));
}

}  // namespace fuseproof::ref
