// bench_shapes.h: the benchmark's shapes (Wan2.2 FFN activations and smaller ones) and ROWSxWIDTH parsing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fuseproof::bench {

struct Shape {
  std::string name;
  int64_t rows, width;
};

/// Wan2.2-A14B 720p 81 frames (75,600 tokens) through the FFN width, then smaller ones.
const std::vector<Shape>& bench_shapes();

/// Shapes at or below this many rows are also timed under CUDA-graph replay.
inline constexpr int64_t kGraphMaxRows = 4096;

/// The shapes `names` selects (known names or ROWSxWIDTH; empty: all); throws std::runtime_error (one line) on an
/// entry that is neither.
std::vector<Shape> select_shapes(const std::vector<std::string>& names);

}  // namespace fuseproof::bench
