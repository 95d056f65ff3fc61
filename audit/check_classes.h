// check_classes.h: the check classes of the audit, each filling one CheckResult for one op, contract and dtype.
#pragma once

#include "audit/audit_options.h"
#include "audit/check_result.h"
#include "audit/kernel_runner.h"
#include "audit/op_model.h"

namespace fuseproof::audit {

/// What every check class needs.
struct CheckContext {
  const PluginInfo& info;
  KernelRunner& runner;
  const OpModel& model;
  const AuditOptions& options;
  int32_t abi_dtype;      ///< FUSEPROOF_DTYPE_BF16 / _FP16
  uint32_t domain_biases; ///< resolved default
  int64_t max_width;      ///< resolved default
  /// The other dtype's model and ABI code: set only for a class that mixes dtypes (history) when both dtypes were asked
  /// for, else nullptr.
  const OpModel* other_model = nullptr;
  int32_t other_abi_dtype = 0;
};

/// Invalid widths, dtypes, shapes, input counts, null and misaligned pointers: each must be a non-zero return with a
/// message, with out (poisoned), its guards and the inputs untouched.
void check_rejection(const CheckContext& ctx, CheckResult& r);
/// Every pair of extreme patterns, and ties and near-ties at every rounding node of the op's plan.
void check_extreme(const CheckContext& ctx, CheckResult& r);
/// Random valid shapes with weighted random patterns, seeded.
void check_property(const CheckContext& ctx, CheckResult& r);
/// Every valid width up to max_width (65,536 on CUDA, 16,384 on the host), three rows each.
void check_widths(const CheckContext& ctx, CheckResult& r);
/// The production envelope: the op's shapes at full size (one above 2^31 elements) on the GPU, rows above 65,535 on
/// the host; plus --shapes and --model. Inputs come from the counter generator where the call runs; the output is
/// streamed back and compared chunk by chunk. A shape that does not fit the memory leaves the class INCOMPLETE.
void check_shapes(const CheckContext& ctx, CheckResult& r);
/// All 65,536 first inputs for each second input of the domain set (all 65,536: the whole 2^32 domain, with its
/// digests), with the distances from the correctly rounded value.
void check_domain(const CheckContext& ctx, CheckResult& r);
/// Ops of 3 or more inputs: each rounding boundary of the eager composition (reference/op_plan.h's stages) over every
/// pair of its two operands' reachable patterns, each reached through the op's inputs (audit/check_stages.cpp).
void check_stages(const CheckContext& ctx, CheckResult& r);
/// PDL ordering: a producer releases the subject's launch early and writes the inputs late (CUDA only).
void check_pdl(const CheckContext& ctx, CheckResult& r);
/// Batch invariance: a probe row placed first, in the middle and last in batches of 7 to 75,600 rows must give the
/// bits it gives alone (a batch of 1); every call also against the contract.
void check_batch(const CheckContext& ctx, CheckResult& r);
/// Determinism: every call of a seeded sequence made twice (outputs compared bitwise), then the whole sequence again
/// (SHA-256 of all outputs compared); every call also against the contract.
void check_repeat(const CheckContext& ctx, CheckResult& r);
/// Concurrency: 32 calls on buffers of their own enqueued on 8 CUDA streams (host subjects: 8 threads) with no
/// synchronisation between them, their overlap measured and reported (INCOMPLETE when they never overlapped).
void check_streams(const CheckContext& ctx, CheckResult& r);
/// CUDA graphs: calls captured after a warm-up, the graph replayed 3 times with new inputs; a failed capture FAILs
/// naming the CUDA error (CUDA only).
void check_graph(const CheckContext& ctx, CheckResult& r);
/// Calls that remember: one process, a seeded interleaving of both dtypes (ctx.other_model; only this dtype when it is
/// nullptr, as with one --dtype), widths (a multiple of 16 first, then widths that are not) and row counts, shapes
/// repeated with new contents; each against its model.
void check_history(const CheckContext& ctx, CheckResult& r);

/// Runs class `c` (dispatch by the enum).
void run_check_class(CheckClass c, const CheckContext& ctx, CheckResult& r);

/// Refuses (UsageError, one line) a --shapes or --model entry that no call of the op can take: a width not a multiple
/// of the subject's vector, or buffers whose size in bytes overflows int64.
void validate_shapes(const ref::OpSpec& op, const std::vector<Shape>& shapes, int64_t vector_elems);

}  // namespace fuseproof::audit
