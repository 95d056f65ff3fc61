// mismatch_record.h: one TestFloat-style line per mismatch, the same format as the test suites' MismatchLog.
#pragma once

#include <cstdint>
#include <string>

#include "reference/dtype.h"

namespace fuseproof::audit {

/// "bias_gelu_tanh bf16 [r=3,c=4097] x=0x3F80 b=0x3C00 => 0x3F8A expected 0x3F8B (1 ulp)"; the distance reads
/// "NaN pattern" or "sign of zero" where ulps mean nothing. `where` may be empty.
std::string format_record(const std::string& op, ref::Dtype d, const std::string& where, uint16_t x, uint16_t b,
                          uint16_t got, uint16_t expected);

}  // namespace fuseproof::audit
