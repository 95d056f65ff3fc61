// quant_dispatch.h: a validated launch's run-time op and contract to the compile-time pair a kernel is built for,
// over the pairs the ops ship (one dispatch over the facts table, shared by the CUDA kernel and the emulation).
#pragma once

#include <type_traits>
#include <utility>

#include "quant_launcher.h"

namespace fuseproof::detail {

/// f(std::integral_constant<E, E(I)>{}) for the I of [0, N) equal to int(e); R{} when none is.
template <typename R, typename E, typename F, int... I>
R quant_dispatch_index(E e, const F& f, std::integer_sequence<int, I...>) {
  R r{};
  (void)((int(e) == I ? (r = f(std::integral_constant<E, E(I)>{}), true) : false) || ...);
  return r;
}

/// Calls Run::template run<Op, C>(args...) for l's op and contract: every op of kQuantFacts, every contract of
/// QuantContract (no list here to keep in step). Run::kHost skips rcp-approx (the emulation has no rcp.approx: the
/// launcher refuses it first). Returns what run returns (R{} for a pair no op ships).
template <typename Run, typename R, typename... Args>
R quant_dispatch(const QuantLaunch& l, Args&&... args) {
  using kernel::QuantContract;
  using kernel::QuantOp;
  auto by_contract = [&](auto op_tag) -> R {
    constexpr QuantOp Op = decltype(op_tag)::value;
    auto one = [&](auto c_tag) -> R {
      constexpr QuantContract C = decltype(c_tag)::value;
      if constexpr (kernel::quant_has_contract<Op>(C) && !(Run::kHost && C == QuantContract::kRcpApprox))
        return Run::template run<Op, C>(args...);
      else
        return R{};
    };
    return quant_dispatch_index<R>(l.contract, one, std::make_integer_sequence<int, kernel::kQuantContracts>{});
  };
  return quant_dispatch_index<R>(l.op, by_contract, std::make_integer_sequence<int, kernel::kQuantOps>{});
}

}  // namespace fuseproof::detail
