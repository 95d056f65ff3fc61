// bench_shapes.cpp: shape table and parsing.
#include "bench/bench_shapes.h"

#include <algorithm>
#include <stdexcept>

namespace fuseproof::bench {

const std::vector<Shape>& bench_shapes() {
  static const std::vector<Shape> shapes = {
      {"wan720p81f", 75600, 13824}, {"32760x13824", 32760, 13824}, {"32760x5120", 32760, 5120},
      {"4096x13824", 4096, 13824},  {"256x13824", 256, 13824},
  };
  return shapes;
}

std::vector<Shape> select_shapes(const std::vector<std::string>& names) {
  if (names.empty()) return bench_shapes();
  std::vector<Shape> out;
  for (const std::string& s : names) {
    const auto& known = bench_shapes();
    const auto it = std::find_if(known.begin(), known.end(), [&](const Shape& k) { return k.name == s; });
    if (it != known.end()) {
      out.push_back(*it);
      continue;
    }
    const size_t x = s.find('x');
    try {
      size_t used_r = 0, used_w = 0;
      if (x == std::string::npos) throw std::invalid_argument(s);
      const int64_t r = std::stoll(s.substr(0, x), &used_r);
      const int64_t w = std::stoll(s.substr(x + 1), &used_w);
      if (r <= 0 || w <= 0 || used_r != x || used_w != s.size() - x - 1) throw std::invalid_argument(s);
      out.push_back({s, r, w});
    } catch (const std::exception&) {
      throw std::runtime_error("bench: --shapes entries must be a known name or ROWSxWIDTH, got " + s);
    }
  }
  return out;
}

}  // namespace fuseproof::bench
