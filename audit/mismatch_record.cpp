// mismatch_record.cpp: TestFloat-style record formatting.
#include "audit/mismatch_record.h"

#include <cstdio>

namespace fuseproof::audit {

std::string format_record(const std::string& op, ref::Dtype d, const std::string& where, uint16_t x, uint16_t b,
                          uint16_t got, uint16_t expected) {
  std::string dist;
  if (ref::is_nan_bits(d, got) || ref::is_nan_bits(d, expected)) {
    dist = "NaN pattern";
  } else {
    const uint32_t u = ref::ulp_distance(got, expected);
    dist = u == 0 ? "sign of zero" : std::to_string(u) + " ulp";
  }
  char buf[256];
  std::snprintf(buf, sizeof buf, "%s %s%s x=0x%04X b=0x%04X => 0x%04X expected 0x%04X (%s)", op.c_str(),
                ref::dtype_name(d), where.empty() ? "" : (" [" + where + "]").c_str(), x, b, got, expected,
                dist.c_str());
  return buf;
}

}  // namespace fuseproof::audit
