// input_fill.h: the benchmark's inputs generated on the device (a 2^30-element tensor is slow to fill on a few host
// cores): the same element formulas as fill_host (bench/input_element.h).
#pragma once

#include <cstdint>

#include "bench/input_distribution.h"

namespace fuseproof::bench {

/// dst[0..n) (device memory of the current device) of distribution d for dtype bf16/fp16, seed and stream, queued on
/// `cuda_stream` (a cudaStream_t); kSample patterns are copied up first. Throws std::runtime_error on a CUDA error.
void fill_device(uint16_t* dst, int64_t n, const Distribution& d, bool bf16, uint64_t seed, uint64_t stream,
                 void* cuda_stream);

}  // namespace fuseproof::bench
