// rcp_approx_model.h: PTX rcp.approx.ftz.f32 (CUDA's reciprocal_approximate_ftz, MUFU.RCP), table-driven from a
// device capture of its 2^23 results on the mantissas of [1, 2).
//
// The NVFP4 quantization kernels (vLLM, FlashInfer, TRT-LLM) compute their scales with this instruction. It is not
// correctly rounded and its bits are undocumented, so the model holds the device's result for every mantissa m of
// [1, 2) as its distance from the correctly rounded 1/m (0 or +-1 binary32 pattern) and derives every other input
// from it:
//
//   binary32 | S |EEEEEEEE|MMMMMMMMMMMMMMMMMMMMMMM|   x = (-1)^S * m * 2^(E-127), m = 1.M, E in 1..254
//   result   | S |E'      |M'                     |   y(m) = table result for 1.M, in [0.5, 1 + 2^-23]
//                                                     E' = E(y(m)) + 127 - E (exact: 1/x = (1/m) * 2^(127-E))
//
//   x                          result
//   +-0, +-subnormal           +-Inf          (ftz: a subnormal input is flushed to zero first, sign kept)
//   +-Inf                      +-0
//   NaN (any sign, payload)    0x7FFFFFFF     (PTX's canonical NaN; the capture's special records confirm it)
//   normal                     S | E' | M' when E' >= 1; +-0 when E' <= 0 (ftz: a subnormal result is flushed)
// E' <= 253 always (E(y) <= 127, E >= 1): no overflow. The 2^32 tree digest (`fuseproof formats --format
// rcp-approx-ftz`) against scripts/capture_formats.py's device capture is what proves the derivation; until that
// digest is equal on a device the model is unproven (docs/REFERENCE.md, Narrow formats).
//
// Table file (scripts/capture_formats.py --rcp-table writes it): the 32-byte magic kRcpApproxTableMagic, then
// 2^23 two-bit codes packed four to a byte, mantissa k at byte k / 4, bits 2 * (k % 4) .. + 1 (the first mantissa in
// the low bits): 0 = the correctly rounded 1/m, 1 = one binary32 pattern below it, 2 = one above, 3 = not allowed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fuseproof::ref {

/// The result for every NaN input: PTX's canonical NaN.
inline constexpr uint32_t kRcpApproxNanBits = 0x7FFFFFFFu;
/// The 2^23 mantissas of [1, 2): patterns 0x3F800000 | k, k = 0 .. 2^23 - 1.
inline constexpr uint32_t kRcpApproxMantissas = 1u << 23;
/// The table file's first 32 bytes.
inline constexpr std::string_view kRcpApproxTableMagic = "fuseproof rcp.approx.ftz.f32 v1\n";
/// Magic plus 2^23 codes of 2 bits: 2,097,184 bytes.
inline constexpr size_t kRcpApproxTableBytes = kRcpApproxTableMagic.size() + kRcpApproxMantissas / 4;

/// A table entry: the device's result for 1.m against the correctly rounded 1/m, in binary32 patterns.
enum class RcpUlpCode : uint8_t {
  kEqual = 0,     ///< the correctly rounded 1/m
  kMinusOne = 1,  ///< one pattern below it (toward zero)
  kPlusOne = 2,   ///< one pattern above it
};

/// The binary32 pattern of the correctly rounded 1/(1 + k 2^-23) (IEEE division, round to nearest even).
uint32_t rcp_correctly_rounded_mantissa_bits(uint32_t k);

/// rcp.approx.ftz.f32 of the mantissas of [1, 2), held as results (one lookup per input).
class RcpApproxTable {
 public:
  /// Every result the correctly rounded 1/m (all codes 0): the test model, not the device.
  static RcpApproxTable correctly_rounded();
  /// From one code (0, 1, 2) per mantissa; nullopt when there are not 2^23 codes or a code is above 2 (`why` says
  /// which, one line).
  static std::optional<RcpApproxTable> from_codes(const std::vector<uint8_t>& codes, std::string* why = nullptr);
  /// From the device's 2^23 results on [1, 2) as binary32 patterns (golden/<arch>/'s mufu_rcp_approx_ftz.bin holds
  /// them); nullopt when there are not 2^23 or one lies more than one pattern from 1/m (`why` names the first).
  static std::optional<RcpApproxTable> from_results(const std::vector<uint32_t>& results, std::string* why = nullptr);

  /// The binary32 pattern of rcp.approx.ftz(1 + k 2^-23), k < 2^23.
  uint32_t result_bits(uint32_t k) const { return results_[k]; }
  /// Its code (RcpUlpCode as an integer), k < 2^23.
  uint8_t code(uint32_t k) const;

 private:
  RcpApproxTable() = default;
  std::vector<uint32_t> results_;
};

/// The table of a file's bytes (layout above); nullopt for a foreign or corrupt file: wrong size, wrong magic, a
/// code 3 (`why` says which, one line, naming the first bad mantissa). Callers raise their corrupt-data error.
std::optional<RcpApproxTable> parse_rcp_approx_table(const std::vector<uint8_t>& bytes, std::string* why = nullptr);

/// The file's bytes of a table (parse_rcp_approx_table's inverse).
std::vector<uint8_t> serialize_rcp_approx_table(const RcpApproxTable& t);

/// rcp.approx.ftz.f32 of the binary32 pattern x, as a pattern (the table above).
uint32_t rcp_approx_ftz_bits(uint32_t x, const RcpApproxTable& t);

/// rcp.approx.ftz.f32(x): rcp_approx_ftz_bits on the patterns.
float rcp_approx_ftz(float x, const RcpApproxTable& t);

/// Row r of the 2^32 domain: for lo = 0x0000..0xFFFF, out[4 lo .. 4 lo + 3] = rcp_approx_ftz_bits((r << 16) | lo),
/// little-endian (262,144 bytes).
void rcp_approx_ftz_row(const RcpApproxTable& t, uint16_t r, uint8_t* out);

}  // namespace fuseproof::ref
