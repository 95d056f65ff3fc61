// family_dispatch.h: a validated launch's run-time op, contract and dtype to the compile-time triple a family kernel
// is built for (one dispatch over the facts table, shared by the CUDA kernel and the emulation).
#pragma once

#include <utility>

#include "family_launcher.h"

namespace fuseproof::detail {

namespace family_dispatch_steps {

/// Run::run<Op, D, C>(c) for c's dtype: bf16, else fp16.
template <typename Run, typename R, kernel::FamilyOp Op, kernel::Contract C>
R by_dtype(const fuseproof_call_t& c) {
  return c.dtype == FUSEPROOF_DTYPE_BF16 ? Run::template run<Op, kernel::Half::kBf16, C>(c)
                                         : Run::template run<Op, kernel::Half::kFp16, C>(c);
}

/// by_dtype for the op's other contract (kFamily<Op>.other) when l names it, else for eager.
template <typename Run, typename R, kernel::FamilyOp Op>
R by_contract(const FamilyLaunch& l, const fuseproof_call_t& c) {
  constexpr kernel::Contract kOther = kernel::kFamily<Op>.other;
  if constexpr (kOther != kernel::Contract::kEager)
    if (l.contract == kOther) return by_dtype<Run, R, Op, kOther>(c);
  return by_dtype<Run, R, Op, kernel::Contract::kEager>(c);
}

}  // namespace family_dispatch_steps

/// Calls Run::template run<Op, D, C>(c) for l's op (any row of kFamilyFacts: no op list here to keep in step), c's
/// dtype (bf16, else fp16) and the contract: the op's other contract when l names it, else eager. Returns what run
/// returns (`unknown` for an op outside the table).
template <typename Run, typename R, int... I>
R family_dispatch_index(const FamilyLaunch& l, const fuseproof_call_t& c, R unknown, std::integer_sequence<int, I...>) {
  R r = unknown;
  (void)((int(l.op) == I ? (r = family_dispatch_steps::by_contract<Run, R, kernel::FamilyOp(I)>(l, c), true) : false) ||
         ...);
  return r;
}

template <typename Run, typename R>
R family_dispatch(const FamilyLaunch& l, const fuseproof_call_t& c, R unknown) {
  return family_dispatch_index<Run, R>(l, c, unknown, std::make_integer_sequence<int, kernel::kFamilyOps>{});
}

}  // namespace fuseproof::detail
