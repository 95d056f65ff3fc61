// check_classes.h: the six check classes of the audit, each filling one CheckResult for one dtype.
#pragma once

#include "audit/audit_engine.h"
#include "audit/kernel_runner.h"

namespace fuseproof::audit {

/// What every check class needs.
struct CheckContext {
  const PluginInfo& info;
  KernelRunner& runner;
  const ExpectedModel& model;
  const AuditOptions& options;
  int32_t abi_dtype;      ///< FUSEPROOF_DTYPE_BF16 / _FP16
  uint32_t domain_biases; ///< resolved default
  int64_t max_width;      ///< resolved default
};

/// Invalid widths, dtypes, shapes, null and misaligned pointers: each must be a non-zero return with a message, with
/// out (poisoned), its guards and the inputs untouched.
void check_rejection(const CheckContext& ctx, CheckResult& r);
/// Every pair of extreme patterns, and rounding ties of x + bias in every binade (with their neighbours).
void check_extreme(const CheckContext& ctx, CheckResult& r);
/// Random valid shapes with weighted random patterns, seeded.
void check_property(const CheckContext& ctx, CheckResult& r);
/// Every valid width up to max_width (65,536 on CUDA, 16,384 on the host), three rows each.
void check_widths(const CheckContext& ctx, CheckResult& r);
/// The production envelope: the seed's shapes at full size, rows above 65,535, a call above 2^31 elements when the
/// memory allows (GPU); rows above 65,535 at small widths (host); plus the user's --shapes and --model. Inputs come
/// from the counter generator where the call runs; the output is streamed back and compared chunk by chunk.
void check_shapes(const CheckContext& ctx, CheckResult& r);
/// All 65,536 x for each bias of the domain set (all 65,536 biases: the whole 2^32 domain, with its digest).
void check_domain(const CheckContext& ctx, CheckResult& r);
/// PDL ordering: a producer releases the plugin's launch early and writes x and bias late (CUDA only).
void check_pdl(const CheckContext& ctx, CheckResult& r);

}  // namespace fuseproof::audit
