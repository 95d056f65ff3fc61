// quant_emulation.cpp: the built-in quantization kernels' CPU emulation: the kernel's cells on the host, for every
// contract but rcp-approx (the device's rcp.approx.ftz.f32 has no host equivalent; the launcher refuses it).
#include "quant_dispatch.h"
#include "quant_emulation.h"

namespace fuseproof::detail {

namespace {

struct EmulateRun {
  static constexpr bool kHost = true;
  template <kernel::QuantOp Op, kernel::QuantContract C>
  static int run(const kernel::QuantArgs& a, int32_t dtype) {
    quant_emulate_op<Op, C>(a, dtype);
    return 0;
  }
};

}  // namespace

void quant_emulate(const QuantLaunch& l, const fuseproof_call_t& c) {
  quant_dispatch<EmulateRun, int>(l, quant_args(l, c), c.dtype);
}

}  // namespace fuseproof::detail
