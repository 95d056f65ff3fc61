// family_dispatch.h: a validated launch's run-time op, contract and dtype to the compile-time triple a family kernel
// is built for (one switch, shared by the CUDA kernel and the emulation).
#pragma once

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

/// Calls Run::template run<Op, D, C>(c) for l's op, c's dtype (bf16, else fp16) and the contract: the op's other
/// contract when l names it, else eager. Returns what run returns (`unknown` for an op outside the enum).
template <typename Run, typename R>
R family_dispatch(const FamilyLaunch& l, const fuseproof_call_t& c, R unknown) {
  using kernel::FamilyOp;
  using family_dispatch_steps::by_contract;
  switch (l.op) {
    case FamilyOp::kBiasGeluErf: return by_contract<Run, R, FamilyOp::kBiasGeluErf>(l, c);
    case FamilyOp::kSiluAndMul: return by_contract<Run, R, FamilyOp::kSiluAndMul>(l, c);
    case FamilyOp::kGeluTanhAndMul: return by_contract<Run, R, FamilyOp::kGeluTanhAndMul>(l, c);
    case FamilyOp::kGeluAndMul: return by_contract<Run, R, FamilyOp::kGeluAndMul>(l, c);
    case FamilyOp::kGatedResidual: return by_contract<Run, R, FamilyOp::kGatedResidual>(l, c);
    case FamilyOp::kModulate: return by_contract<Run, R, FamilyOp::kModulate>(l, c);
  }
  return unknown;
}

}  // namespace fuseproof::detail
