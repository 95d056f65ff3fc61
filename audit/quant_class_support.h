// quant_class_support.h: what the quantization classes of audit/quant_classes.cpp share with those of
// audit/quant_call_classes.cpp: the expected byte images of a call, the comparison of a call's codes and scales
// with them (counts, records, the distinct-output guard, the early stop), the classes' seeds and scalars.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "audit/quant_classes.h"
#include "reference/quant_block.h"

namespace fuseproof::audit {

/// The byte images a correct kernel writes: the packed codes, and every scale cell (padding cells 0x00).
struct QuantExpected {
  std::vector<uint8_t> codes, scales;
  /// Where set (the scale step's fast path): which byte values `codes` holds, and (one-byte scale cells) `scales`.
  bool has_bytes_present = false;
  std::array<bool, 256> codes_present{}, scales_present{};
};

/// The expected images of each call of `specs` under ctx.model.plan, computed on every core.
/// `memos`: one code memo a worker kept across calls of the same scalars (the chunks of a large call), or null.
std::vector<QuantExpected> expected_quant_images(const QuantContext& ctx, const std::vector<QuantCallSpec>& specs,
                                                 ref::QuantCodeMemos* memos = nullptr);

/// A class's comparison of calls' outcomes with their expected images, into one CheckResult: every code byte and
/// every scale cell (padding cells included) counted as a case, mismatches recorded element by element.
class QuantCallTally {
 public:
  QuantCallTally(const QuantContext& ctx, CheckResult& r);
  ~QuantCallTally();
  QuantCallTally(const QuantCallTally&) = delete;
  QuantCallTally& operator=(const QuantCallTally&) = delete;
  /// Compares a valid call's outcome with `want` (faults, refusals, guard writes and changed inputs included);
  /// false once the class should stop.
  bool compare(const QuantCallSpec& s, const QuantOutcome& o, const QuantExpected& want, const std::string& label);
  /// A failure the comparison does not see (a class's own check), `count` mismatches.
  void failure(const std::string& line, uint64_t count = 1);
  /// Whether the class should stop (--stop-after reached, or a fault).
  bool stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The seed of class c's stream for ctx's dtype (the quantization classes' streams are their own).
uint64_t quant_seed(const QuantContext& ctx, CheckClass c);

/// Sets a call's scalars from its own tensor's amax (the reference's derivation); a call without scalars is left.
void quant_scalars_from_call(const ref::QuantPlan& plan, QuantCallSpec& s);

}  // namespace fuseproof::audit
