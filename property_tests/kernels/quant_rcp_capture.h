// quant_rcp_capture.h: the device's rcp.approx.ftz.f32 results on the mantissas of [1, 2) (quant_rcp_capture.cu).
#pragma once

#include <cstdint>
#include <vector>

namespace fuseproof::test {

/// 2^23 results, mantissa k at index k (needs a CUDA device).
std::vector<uint32_t> capture_rcp_approx_mantissas();

}  // namespace fuseproof::test
