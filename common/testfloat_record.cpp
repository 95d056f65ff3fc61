// testfloat_record.cpp: formatting of a mismatch record.
#include "common/testfloat_record.h"

#include <cstdio>

namespace fuseproof {

std::string testfloat_record(const std::string& op, ref::Dtype d, const std::string& where, uint16_t x,
                             std::optional<uint16_t> bias, uint16_t got, uint16_t expected) {
  std::string dist;
  if (ref::is_nan_bits(d, got) || ref::is_nan_bits(d, expected)) {
    dist = "NaN pattern";
  } else {
    const uint32_t u = ref::ulp_distance(got, expected);
    dist = u == 0 ? "sign of zero" : std::to_string(u) + " ulp";
  }
  char b[16] = "";
  if (bias) std::snprintf(b, sizeof b, " b=0x%04X", *bias);
  const std::string pos = where.empty() ? "" : " [" + where + "]";
  char buf[320];
  std::snprintf(buf, sizeof buf, "%s %s%s x=0x%04X%s => 0x%04X expected 0x%04X (%s)", op.c_str(), ref::dtype_name(d),
                pos.c_str(), x, b, got, expected, dist.c_str());
  return buf;
}

}  // namespace fuseproof
