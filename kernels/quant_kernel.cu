// quant_kernel.cu: the built-in quantization kernels on CUDA: every op and contract of quant_ops.h, both dtypes
// (built for sm_90, where E2M1 rounds in software, and sm_100a, where it is cvt.rn.satfinite.e2m1x2.f32).
#include "quant_dispatch.h"
#include "quant_kernel.cuh"

namespace fuseproof::detail {

namespace {

struct CudaRun {
  static constexpr bool kHost = false;
  template <kernel::QuantOp Op, kernel::QuantContract C>
  static std::string run(const kernel::QuantArgs& a, int32_t dtype, cudaStream_t s) {
    return quant_launch_op<Op, C>(a, dtype, s);
  }
};

}  // namespace

std::string quant_launch_cuda(const QuantLaunch& l, const fuseproof_call_t& c) {
  return quant_dispatch<CudaRun, std::string>(l, quant_args(l, c), c.dtype, static_cast<cudaStream_t>(c.stream));
}

}  // namespace fuseproof::detail
