// activation_table.h: an activation tabulated over all 65,536 input patterns of a dtype, and table files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "activation.h"
#include "dtype.h"

namespace fuseproof::ref {

inline constexpr size_t kPatterns = 65536;

/// table[p] = round_T(activation_f32(a, widen(p))) under cfg (cfg.nan for NaN): eager F.act on a T tensor, the whole
/// function, since its input is one of 65,536 patterns.
std::vector<uint16_t> activation_table(Activation a, Dtype d, const MathConfig& cfg);

/// table[p] = bits of activation_f32(a, widen(p)): F.act(x.float()) on the T patterns, in binary32 (the fp32
/// contract's first step).
std::vector<uint32_t> activation_table_f32(Activation a, Dtype d, const MathConfig& cfg);

/// Reads a table file (65,536 little-endian uint16); throws std::runtime_error (one line) on a missing or short file.
std::vector<uint16_t> read_u16_table(const std::string& path);
/// Reads a binary32 table file (65,536 little-endian uint32); the same errors.
std::vector<uint32_t> read_u32_table(const std::string& path);

/// The bytes of a table file: each entry little-endian (the caller writes them, atomically).
std::string u16_table_bytes(const std::vector<uint16_t>& table);
std::string u32_table_bytes(const std::vector<uint32_t>& table);

}  // namespace fuseproof::ref
