// check_stages.h: the stages class over a given list of stages (the class itself takes the plan's; tests give their
// own list to check the class apart from the stage analysis). Internal to the audit library.
#pragma once

#include <vector>

#include "audit/check_classes.h"
#include "reference/op_plan.h"

namespace fuseproof::audit {

/// The stages class over `stages` instead of ctx.model.plan->stages(): each stage's pairs in canonical order (b outer,
/// a inner; a seeded subset of b's values when ctx.domain_biases is below their count), every output compared with
/// the plan's eval of the pair's op inputs, the digest of each stage run in full compared with the golden library's.
void check_stage_list(const CheckContext& ctx, const std::vector<ref::Stage>& stages, CheckResult& r);

/// Indices into `values` (ascending patterns of one operand) of the values a subset of `count` covers, ascending:
/// every extreme pattern among them, one random pattern of each sign and exponent present (of as many of these groups,
/// chosen at random, as `count` leaves room for), then uniform random ones up to `count` (all of them when count is at
/// least their number). Seeded.
std::vector<size_t> stage_subset(ref::Dtype d, const std::vector<uint16_t>& values, uint32_t count, uint64_t seed);

}  // namespace fuseproof::audit
