// quant_call_classes.h: the classes that call a quantization subject as models run it (docs/AUDIT.md, Quantization
// classes): shapes above 2^31 codes, batch invariance, repeated calls, several streams at once, CUDA graphs, and one
// process's history of dtypes and shapes; every code byte and scale cell of every call against ref::QuantPlan.
#pragma once

#include "audit/quant_classes.h"

namespace fuseproof::audit {

/// Full-size calls from the counter generator, codes and scales streamed back in row chunks: on CUDA calls above
/// 2^31 codes (when device memory allows), on the host rows above 65,535.
void quant_shapes(const QuantContext& ctx, CheckResult& r);
/// A probe row first, in the middle and last of batches of many rows, against the probe alone, byte for byte.
void quant_batch(const QuantContext& ctx, CheckResult& r);
/// Random calls each made twice, then the whole sequence again: every byte equal, and equal to the contract.
void quant_repeat(const QuantContext& ctx, CheckResult& r);
/// Calls on 8 lanes at once (CUDA streams, host threads), each on images of its own, and the overlap measured.
void quant_streams(const QuantContext& ctx, CheckResult& r);
/// Calls captured into one CUDA graph and replayed with new inputs (CUDA only).
void quant_graph(const QuantContext& ctx, CheckResult& r);
/// 64 calls in one process, dtypes, shapes, layouts and scalars interleaved: no state carried between calls.
void quant_history(const QuantContext& ctx, CheckResult& r);

}  // namespace fuseproof::audit
