// testfloat_record.h: one Berkeley-TestFloat-style line per mismatch, shared by the test suites and the audit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "reference/dtype.h"

namespace fuseproof {

/// "bias_gelu_tanh bf16 [r=3,c=4097] x=0x3F80 b=0x3C00 => 0x3F8A expected 0x3F8B (1 ulp)": hex first, the
/// position in brackets when `where` is not empty, no "b=" without a bias; the distance reads "NaN pattern" or
/// "sign of zero" where ulps mean nothing.
std::string testfloat_record(const std::string& op, ref::Dtype d, const std::string& where, uint16_t x,
                             std::optional<uint16_t> bias, uint16_t got, uint16_t expected);

/// An op of the family: "silu_and_mul bf16 [r=3,c=4] gate=0x3F80 up=0x3C00 => 0x3F8A expected 0x3F8B (1 ulp)",
/// each input under its declared name.
std::string testfloat_record_inputs(const std::string& op, ref::Dtype d, const std::string& where,
                                    const std::vector<std::string>& names, const uint16_t* inputs, uint16_t got,
                                    uint16_t expected);

/// A narrowing from binary32: "f32_to_bf16 bf16 x=0x3F808000 => 0x3F81 expected 0x3F80 (1 ulp)"; the input in
/// eight hex digits, the outputs in four.
std::string testfloat_record_from_f32(const std::string& op, ref::Dtype d, uint32_t x, uint16_t got, uint16_t expected);

/// A widening to binary32: "fp16_to_f32 fp16 x=0x7E01 => 0x7FC02000 expected 0x7FC02001 (NaN pattern)"; the outputs
/// in eight hex digits, the distance in binary32 ulps.
std::string testfloat_record_to_f32(const std::string& op, ref::Dtype d, uint16_t x, uint32_t got, uint32_t expected);

}  // namespace fuseproof
