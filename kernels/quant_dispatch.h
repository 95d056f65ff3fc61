// quant_dispatch.h: a validated launch's run-time op and contract to the compile-time pair a kernel is built for,
// over the pairs the ops ship (one switch, shared by the CUDA kernel and the emulation).
#pragma once

#include <type_traits>

#include "quant_launcher.h"

namespace fuseproof::detail {

/// Calls Run::template run<Op, C>(args...) for l's op and contract; Run::kHost skips rcp-approx (the emulation has no
/// rcp.approx: the launcher refuses it first). Returns what run returns (R{} for a pair no op ships).
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
    switch (l.contract) {
      case QuantContract::kVllmRef: return one(std::integral_constant<QuantContract, QuantContract::kVllmRef>{});
      case QuantContract::kRcpApprox: return one(std::integral_constant<QuantContract, QuantContract::kRcpApprox>{});
      case QuantContract::kTe: return one(std::integral_constant<QuantContract, QuantContract::kTe>{});
      case QuantContract::kFlashinferExact:
        return one(std::integral_constant<QuantContract, QuantContract::kFlashinferExact>{});
      case QuantContract::kFp8Group: return one(std::integral_constant<QuantContract, QuantContract::kFp8Group>{});
      case QuantContract::kFp8GroupUe8m0:
        return one(std::integral_constant<QuantContract, QuantContract::kFp8GroupUe8m0>{});
    }
    return R{};
  };
  switch (l.op) {
    case QuantOp::kFp8GroupQuant: return by_contract(std::integral_constant<QuantOp, QuantOp::kFp8GroupQuant>{});
    case QuantOp::kNvfp4Quant: return by_contract(std::integral_constant<QuantOp, QuantOp::kNvfp4Quant>{});
    case QuantOp::kSiluAndMulFp8GroupQuant:
      return by_contract(std::integral_constant<QuantOp, QuantOp::kSiluAndMulFp8GroupQuant>{});
    case QuantOp::kSiluAndMulNvfp4Quant:
      return by_contract(std::integral_constant<QuantOp, QuantOp::kSiluAndMulNvfp4Quant>{});
    case QuantOp::kBiasGeluTanhNvfp4Quant:
      return by_contract(std::integral_constant<QuantOp, QuantOp::kBiasGeluTanhNvfp4Quant>{});
  }
  return R{};
}

}  // namespace fuseproof::detail
