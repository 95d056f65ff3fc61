// quant_differences.h: the --differences file of a quantization op's stages class: every input on which the subject
// and another contract differ, one tab-separated line each.
#pragma once

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace fuseproof::audit {

/// One differing input. A scale difference (a block's stored scale) has no value and no codes.
struct DifferenceLine {
  std::optional<uint16_t> value;   ///< the quantizer's T input (after the activation stage); none for a scale line
  uint16_t amax = 0;               ///< the block's amax (T), as the claimed contract takes it
  uint16_t other_amax = 0;         ///< as the other contract takes it (they differ on NaN members)
  std::vector<uint32_t> scalars;   ///< binary32 bits, in the contract's order
  uint32_t scale = 0;              ///< the subject's stored scale (E4M3 byte or binary32 bits)
  std::optional<uint8_t> code;     ///< the subject's code
  uint32_t other_scale = 0;
  std::optional<uint8_t> other_code;
  std::string kind;                ///< "code:K", "scale:K" (K steps), "nan-inf" or "sign-of-zero"
};

/// The columns, in order (the header names them).
inline constexpr const char* kDifferenceColumns = "value\tamax\tother_amax\tscalars\tscale\tcode\tother_scale\tother_code\tkind";

/// "0x3F80\t0x4040\t0x4040\t0x3F800000\t0x7E\t0x5\t0x7E\t0x6\tcode:1" (a missing field is "-"; scalars comma-separated, "-"
/// when none). `scale_digits`: 2 for E4M3 scales, 8 for binary32.
std::string difference_line_text(const DifferenceLine& l, int scale_digits);
/// The inverse of difference_line_text; nullopt for a malformed line.
std::optional<DifferenceLine> parse_difference_line(const std::string& line);

/// Streams lines to an unnamed temporary file (nothing held in memory), then on finish() writes `dir/name` atomically:
/// the header line (a `#` line naming the op, contracts, dtype, scope and columns) and the lines, hashing them.
class DifferencesFile {
 public:
  /// Creates `dir` if absent; refuses (UsageError) a `dir/name` that exists and is not a regular file.
  DifferencesFile(const std::string& dir, const std::string& name);
  DifferencesFile(const DifferencesFile&) = delete;
  DifferencesFile& operator=(const DifferencesFile&) = delete;
  ~DifferencesFile();
  void add(const std::string& line);
  /// Writes the file; returns its SHA-256 (of every byte, header included).
  std::string finish(const std::string& header);
  const std::string& path() const { return path_; }
  uint64_t lines() const { return lines_; }

 private:
  std::string path_;
  std::FILE* body_ = nullptr;
  uint64_t lines_ = 0;
};

}  // namespace fuseproof::audit
