// rcp_approx_model.cpp: rcp.approx.ftz.f32 from the table of its results on [1, 2), and the table file's codec.
#include "rcp_approx_model.h"

#include <cstdio>
#include <cstring>

#include "dtype.h"

namespace fuseproof::ref {

namespace {

constexpr uint32_t kSign = 0x80000000u, kInf = 0x7F800000u, kMant = 0x007FFFFFu;
constexpr uint32_t kOne = 0x3F800000u;  // | 0 |01111111|00000000000000000000000|: 1.0

std::optional<RcpApproxTable> refuse(std::string* why, std::string line) {
  if (why) *why = std::move(line);
  return std::nullopt;
}

}  // namespace

uint32_t rcp_correctly_rounded_mantissa_bits(uint32_t k) {
  // IEEE binary32 division rounds once, to nearest even (the library is built without fast maths or contraction).
  return f32_bits(1.0f / f32_from_bits(kOne | (k & kMant)));
}

RcpApproxTable RcpApproxTable::correctly_rounded() {
  RcpApproxTable t;
  t.results_.resize(kRcpApproxMantissas);
  for (uint32_t k = 0; k < kRcpApproxMantissas; ++k) t.results_[k] = rcp_correctly_rounded_mantissa_bits(k);
  return t;
}

std::optional<RcpApproxTable> RcpApproxTable::from_codes(const std::vector<uint8_t>& codes, std::string* why) {
  if (codes.size() != kRcpApproxMantissas)
    return refuse(why, "rcp table: " + std::to_string(kRcpApproxMantissas) + " codes needed, got " +
                           std::to_string(codes.size()));
  RcpApproxTable t;
  t.results_.resize(kRcpApproxMantissas);
  for (uint32_t k = 0; k < kRcpApproxMantissas; ++k) {
    // Patterns of positive normals are ordered like their values: +-1 on the pattern is the neighbour (crossing 0.5
    // downward or 1.0 upward included).
    const uint32_t cr = rcp_correctly_rounded_mantissa_bits(k);
    switch (codes[k]) {
      case uint8_t(RcpUlpCode::kEqual): t.results_[k] = cr; break;
      case uint8_t(RcpUlpCode::kMinusOne): t.results_[k] = cr - 1; break;
      case uint8_t(RcpUlpCode::kPlusOne): t.results_[k] = cr + 1; break;
      default:
        return refuse(why, "rcp table: codes must be 0, 1 or 2, got " + std::to_string(codes[k]) + " at mantissa " +
                               std::to_string(k));
    }
  }
  return t;
}

std::optional<RcpApproxTable> RcpApproxTable::from_results(const std::vector<uint32_t>& results, std::string* why) {
  if (results.size() != kRcpApproxMantissas)
    return refuse(why, "rcp table: " + std::to_string(kRcpApproxMantissas) + " results needed, got " +
                           std::to_string(results.size()));
  for (uint32_t k = 0; k < kRcpApproxMantissas; ++k) {
    const uint32_t cr = rcp_correctly_rounded_mantissa_bits(k), r = results[k];
    if (r != cr && r != cr - 1 && r != cr + 1) {
      char line[200];
      std::snprintf(line, sizeof line,
                    "rcp table: the result 0x%08X of 0x%08X is %+lld patterns from the correctly rounded 0x%08X: "
                    "codes hold 0 or +-1 only",
                    r, kOne | k, (long long)r - (long long)cr, cr);
      return refuse(why, line);
    }
  }
  RcpApproxTable t;
  t.results_ = results;
  return t;
}

uint8_t RcpApproxTable::code(uint32_t k) const {
  const uint32_t cr = rcp_correctly_rounded_mantissa_bits(k), r = results_[k];
  if (r == cr) return uint8_t(RcpUlpCode::kEqual);
  return r < cr ? uint8_t(RcpUlpCode::kMinusOne) : uint8_t(RcpUlpCode::kPlusOne);
}

std::optional<RcpApproxTable> parse_rcp_approx_table(const std::vector<uint8_t>& bytes, std::string* why) {
  if (bytes.size() != kRcpApproxTableBytes)
    return refuse(why, "rcp table: the file must hold " + std::to_string(kRcpApproxTableBytes) + " bytes, got " +
                           std::to_string(bytes.size()));
  if (std::memcmp(bytes.data(), kRcpApproxTableMagic.data(), kRcpApproxTableMagic.size()) != 0)
    return refuse(why, "rcp table: the file must start with the magic \"fuseproof rcp.approx.ftz.f32 v1\", it "
                       "does not");
  const uint8_t* packed = bytes.data() + kRcpApproxTableMagic.size();
  std::vector<uint8_t> codes(kRcpApproxMantissas);
  for (uint32_t k = 0; k < kRcpApproxMantissas; ++k) codes[k] = (packed[k >> 2] >> (2 * (k & 3))) & 3;
  return RcpApproxTable::from_codes(codes, why);
}

std::vector<uint8_t> serialize_rcp_approx_table(const RcpApproxTable& t) {
  std::vector<uint8_t> bytes(kRcpApproxTableMagic.begin(), kRcpApproxTableMagic.end());
  bytes.resize(kRcpApproxTableBytes, 0);
  uint8_t* packed = bytes.data() + kRcpApproxTableMagic.size();
  for (uint32_t k = 0; k < kRcpApproxMantissas; ++k) packed[k >> 2] |= uint8_t(t.code(k) << (2 * (k & 3)));
  return bytes;
}

uint32_t rcp_approx_ftz_bits(uint32_t x, const RcpApproxTable& t) {
  const uint32_t sign = x & kSign, e = (x >> 23) & 0xFF, k = x & kMant;
  if (e == 0xFF) return k ? kRcpApproxNanBits : sign;  // NaN; +-Inf -> +-0
  if (e == 0) return sign | kInf;                       // +-0 and the subnormals, flushed to +-0 -> +-Inf
  const uint32_t y = t.result_bits(k);                  // exponent field 126 or 127
  const int e_out = int(y >> 23) + 127 - int(e);        // 1/x = (1/m) * 2^(127 - e): exact while normal
  if (e_out <= 0) return sign;                          // a subnormal result flushed to zero (ftz)
  return sign | uint32_t(e_out) << 23 | (y & kMant);
}

float rcp_approx_ftz(float x, const RcpApproxTable& t) { return f32_from_bits(rcp_approx_ftz_bits(f32_bits(x), t)); }

void rcp_approx_ftz_row(const RcpApproxTable& t, uint16_t r, uint8_t* out) {
  const uint32_t hi = uint32_t(r) << 16;
  for (uint32_t lo = 0; lo < 65536; ++lo) {
    const uint32_t y = rcp_approx_ftz_bits(hi | lo, t);
    out[4 * lo] = uint8_t(y);
    out[4 * lo + 1] = uint8_t(y >> 8);
    out[4 * lo + 2] = uint8_t(y >> 16);
    out[4 * lo + 3] = uint8_t(y >> 24);
  }
}

}  // namespace fuseproof::ref
