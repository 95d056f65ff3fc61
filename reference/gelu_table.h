// gelu_table.h: eager GELU(tanh) tabulated over all 65,536 input patterns of a dtype.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gelu_tanh_eager.h"

namespace fuseproof::ref {

inline constexpr size_t kPatterns = 65536;

/// table[i] = gelu_tanh_eager(d, i, cfg): the whole function, since its input is one of 65,536 patterns.
std::vector<uint16_t> gelu_tanh_table(Dtype d, const GeluConfig& cfg);

/// Reads a table file (65,536 little-endian uint16); throws std::runtime_error (one line) on a missing or short file.
std::vector<uint16_t> read_u16_table(const std::string& path);

/// The bytes of a table file: each entry little-endian (the caller writes them, atomically).
std::string u16_table_bytes(const std::vector<uint16_t>& table);

}  // namespace fuseproof::ref
