// testfloat_record.cpp: formatting of a mismatch record.
#include "common/testfloat_record.h"

#include <cstdio>

namespace fuseproof {

namespace {

/// "equal", "NaN pattern", "sign of zero" or "N ulp" for two patterns on the sign-magnitude line (ulp_distance's
/// order).
std::string distance(bool either_nan, uint64_t a, uint64_t b, uint64_t sign_bit) {
  if (a == b) return "equal";
  if (either_nan) return "NaN pattern";
  auto line = [sign_bit](uint64_t h) { return (h & sign_bit) ? -int64_t(h & (sign_bit - 1)) : int64_t(h); };
  const int64_t d = line(a) - line(b);
  const uint64_t u = uint64_t(d < 0 ? -d : d);
  return u == 0 ? "sign of zero" : std::to_string(u) + " ulp";
}

bool is_nan_f32(uint32_t u) { return (u & 0x7FFFFFFFu) > 0x7F800000u; }

}  // namespace

std::string testfloat_record(const std::string& op, ref::Dtype d, const std::string& where, uint16_t x,
                             std::optional<uint16_t> bias, uint16_t got, uint16_t expected) {
  const std::string dist = distance(ref::is_nan_bits(d, got) || ref::is_nan_bits(d, expected), got, expected, 0x8000);
  char b[16] = "";
  if (bias) std::snprintf(b, sizeof b, " b=0x%04X", *bias);
  const std::string pos = where.empty() ? "" : " [" + where + "]";
  char buf[320];
  std::snprintf(buf, sizeof buf, "%s %s%s x=0x%04X%s => 0x%04X expected 0x%04X (%s)", op.c_str(), ref::dtype_name(d),
                pos.c_str(), x, b, got, expected, dist.c_str());
  return buf;
}

std::string testfloat_record_inputs(const std::string& op, ref::Dtype d, const std::string& where,
                                    const std::vector<std::string>& names, const uint16_t* inputs, uint16_t got,
                                    uint16_t expected) {
  const std::string dist = distance(ref::is_nan_bits(d, got) || ref::is_nan_bits(d, expected), got, expected, 0x8000);
  std::string line = op + " " + ref::dtype_name(d) + (where.empty() ? "" : " [" + where + "]");
  for (size_t i = 0; i < names.size(); ++i) {
    char b[40];
    std::snprintf(b, sizeof b, " %s=0x%04X", names[i].c_str(), inputs[i]);
    line += b;
  }
  char tail[96];
  std::snprintf(tail, sizeof tail, " => 0x%04X expected 0x%04X (%s)", got, expected, dist.c_str());
  return line + tail;
}

std::string testfloat_record_from_f32(const std::string& op, ref::Dtype d, uint32_t x, uint16_t got, uint16_t expected) {
  const std::string dist = distance(ref::is_nan_bits(d, got) || ref::is_nan_bits(d, expected), got, expected, 0x8000);
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s %s x=0x%08X => 0x%04X expected 0x%04X (%s)", op.c_str(), ref::dtype_name(d),
                unsigned(x), got, expected, dist.c_str());
  return buf;
}

std::string testfloat_record_to_f32(const std::string& op, ref::Dtype d, uint16_t x, uint32_t got, uint32_t expected) {
  const std::string dist = distance(is_nan_f32(got) || is_nan_f32(expected), got, expected, 0x80000000u);
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s %s x=0x%04X => 0x%08X expected 0x%08X (%s)", op.c_str(), ref::dtype_name(d), x,
                unsigned(got), unsigned(expected), dist.c_str());
  return buf;
}

}  // namespace fuseproof
