// domain_sweep.h: the whole 2^32 (x, bias) domain of a 16-bit binary op, computed in canonical order.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "dtype.h"
#include "nan_policy.h"

namespace fuseproof::ref {

/// Canonical order: for bias bits 0x0000..0xFFFF (outer), for x bits 0x0000..0xFFFF (inner); outputs are uint16
/// written little-endian, 2^32 of them (8 GiB) per dtype.
inline constexpr uint64_t kDomainSize = uint64_t(1) << 32;

struct SweepOptions {
  unsigned threads = 0;              ///< workers computing blocks; 0 = std::thread::hardware_concurrency()
  uint32_t biases_per_block = 256;   ///< rows of 65,536 outputs per block handed to the consumer
  uint32_t bias_first = 0;           ///< sweep biases [bias_first, bias_first + bias_count)
  uint32_t bias_count = 65536;
};

/// Called in canonical order on the calling thread: `out` holds bias_count rows of 65,536 outputs.
using SweepConsumer = std::function<void(uint32_t bias_first, uint32_t bias_count, const uint16_t* out)>;

/// out = gelu_table[add_round(d, x, bias, nan)], i.e. eager gelu(x + bias) once GELU is tabulated.
/// An empty gelu_table gives add_round alone.
void sweep_bias_gelu(Dtype d, const std::vector<uint16_t>& gelu_table, NanPolicy nan, const SweepConsumer& consume,
                     const SweepOptions& options = {});

/// One row: out[x] for every x at one bias (the kernel of the sweep, exposed for tests and other backends).
void sweep_row(Dtype d, const uint16_t* gelu_table, NanPolicy nan, uint16_t bias, uint16_t* out);

}  // namespace fuseproof::ref
