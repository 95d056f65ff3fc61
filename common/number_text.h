// number_text.h: counts written for people in reports and listings.
#pragma once

#include <cstdint>
#include <string>

namespace fuseproof {

/// "4,294,967,296": digits in groups of three.
inline std::string grouped(uint64_t v) {
  std::string s = std::to_string(v);
  for (int k = int(s.size()) - 3; k > 0; k -= 3) s.insert(size_t(k), ",");
  return s;
}

}  // namespace fuseproof
