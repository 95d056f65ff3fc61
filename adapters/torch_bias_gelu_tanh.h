// torch_bias_gelu_tanh.h: the libtorch adapter for the built-in kernel: at::Tensors, PyTorch's current stream.
#pragma once

#include <ATen/ATen.h>

// Set to 1 by the build when libtorch has CUDA (FUSEPROOF_HAVE_TORCH_CUDA); Debian's CPU libtorch ships the c10/cuda
// headers without the library, so the headers' presence does not say.
#ifndef FUSEPROOF_TORCH_CUDA
#define FUSEPROOF_TORCH_CUDA 0
#endif
#if FUSEPROOF_TORCH_CUDA
#include <c10/cuda/CUDAStream.h>
#endif

#include "adapters/torch_tensor_view.h"
#include "kernels/bias_gelu_tanh_launcher.h"

namespace fuseproof {

/// out = gelu_tanh(round_T(x + bias)) on x's device. On CUDA the kernel is enqueued on PyTorch's current stream of that
/// device (c10::cuda::getCurrentCUDAStream), like an ATen op: after the work enqueued there before it, before the work
/// enqueued after it, and inside a c10::cuda::CUDAStreamGuard or torch.cuda.stream(...) block on that block's stream.
/// options.stream is replaced. Rejections (one line, nothing launched) are the launcher's.
inline LaunchStatus torch_bias_gelu_tanh(const at::Tensor& out, const at::Tensor& x, const at::Tensor& bias,
                                         BiasGeluOptions options = {}) {
  if (x.is_cuda()) {
#if FUSEPROOF_TORCH_CUDA
    options.stream = c10::cuda::getCurrentCUDAStream(x.get_device()).stream();
#else
    return LaunchStatus{false, "torch_bias_gelu_tanh: x is a CUDA tensor but this build's libtorch has no CUDA"};
#endif
  }
  return bias_gelu_tanh(torch_tensor_view(out), torch_tensor_view(x), torch_tensor_view(bias), options);
}

}  // namespace fuseproof
