// quant_classes.h: the check classes of a quantization op (docs/AUDIT.md, Quantization classes), each filling one
// CheckResult for one op, contract and dtype from the subject's codes and scales.
#pragma once

#include "audit/audit_options.h"
#include "audit/check_result.h"
#include "audit/quant_model.h"
#include "audit/quant_runner.h"

namespace fuseproof::audit {

struct QuantContext {
  const PluginInfo& info;
  QuantRunner& runner;
  const QuantModel& model;
  const AuditOptions& options;
  int32_t abi_dtype;  ///< FUSEPROOF_DTYPE_BF16 / _FP16
  /// Widths class: every width up to this (0: options.max_width, else 65,536 on CUDA, 4,096 on the host).
  int64_t max_width = 0;
  /// Stages class: the tensor amaxes of the scale step (the element step takes a sixth as many global scales, or 4
  /// times as many group amaxes); 0: options.stage_rows (--stage-rows), else the backend's default (quant_classes.cpp:
  /// on CUDA every tensor amax; on the host a stated strided subset with the specials, a whole audit of one op in
  /// about 30 s on 2 cores).
  uint32_t stage_rows = 0;
  /// Stages class: the scale step through the generic batch path (run_batches) instead of its fast path, and every
  /// distance from another contract by QuantTally::distance, call after call, instead of on every core; the result
  /// must be the same (the test of the fast paths).
  bool generic_paths = false;
  /// Stages class: differing inputs told apart per other contract before every further one only counts (0: the
  /// default, 2^21; tests make it small to reach that regime).
  size_t max_distinct_pairs = 0;
  /// History class: the other dtype's model and ABI code when both dtypes were asked for (else null: every call of
  /// the history is of this dtype).
  const QuantModel* other_model = nullptr;
  int32_t other_abi_dtype = 0;
};

/// The classes a quantization op runs, in order: rejection, widths, stages, blocks, layout, then the calls as models
/// make them (audit/quant_call_classes.h): shapes, batch, repeat, streams, graph, history.
const std::vector<CheckClass>& quant_check_classes();

/// Runs class c (one of quant_check_classes()) on ctx: cases, mismatches, records, the scope in words, and for the
/// stages class the distance of the subject's outputs from every other contract of the op (CheckResult::
/// contract_distances).
void run_quant_class(CheckClass c, const QuantContext& ctx, CheckResult& r);

}  // namespace fuseproof::audit
