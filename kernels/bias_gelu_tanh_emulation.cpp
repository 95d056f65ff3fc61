// bias_gelu_tanh_emulation.cpp: simulated grid (block by block, thread by thread) over the host-compiled kernel body.
#include "bias_gelu_tanh_emulation.h"

#include "bias_gelu_tanh_body.h"
#include "bias_gelu_tanh_cuda.h"

namespace fuseproof {

namespace {

template <kernel::Half D, int kBytes, bool kRoundSum>
void run_grid(const kernel::BodyArgs& args, int64_t grid) {
  const int64_t stride = grid * kernel::kBlockThreads;
  for (int64_t block = 0; block < grid; ++block) {
    for (int thread = 0; thread < kernel::kBlockThreads; ++thread) {
      kernel::bias_gelu_tanh_thread<D, kBytes, kRoundSum>(args, block * kernel::kBlockThreads + thread, stride);
    }
  }
}

template <kernel::Half D, bool kRoundSum>
void dispatch_bytes(const kernel::BodyArgs& args, int64_t grid, int vector_bytes) {
  if (vector_bytes == 32) run_grid<D, 32, kRoundSum>(args, grid);
  else run_grid<D, 16, kRoundSum>(args, grid);
}

}  // namespace

int64_t bias_gelu_tanh_emulated_grid(int emulated_sms, int64_t n_vectors) {
  const int64_t resident = int64_t(emulated_sms) * kEmulatedBlocksPerSm;
  const int64_t needed = (n_vectors + kernel::kBlockThreads - 1) / kernel::kBlockThreads;
  return needed < resident ? needed : resident;
}

namespace detail {

void run_emulation(const TensorView& out, const TensorView& x, const TensorView& bias, int vector_bytes,
                   int emulated_sms, EmulatedBody body) {
  const int elems = vector_bytes / 2;
  kernel::BodyArgs args{};
  args.out = static_cast<uint16_t*>(out.data);
  args.x = static_cast<const uint16_t*>(x.data);
  args.bias = static_cast<const uint16_t*>(bias.data);
  args.n_vectors = x.sizes[0] * x.sizes[1] / elems;
  args.width_vectors = x.sizes[1] / elems;
  const int64_t grid = bias_gelu_tanh_emulated_grid(emulated_sms, args.n_vectors);
  const bool bf16 = x.dtype == ScalarType::kBf16;
  const bool round_sum = body == EmulatedBody::kProduction;
  if (bf16 && round_sum) dispatch_bytes<kernel::Half::kBf16, true>(args, grid, vector_bytes);
  else if (bf16) dispatch_bytes<kernel::Half::kBf16, false>(args, grid, vector_bytes);
  else if (round_sum) dispatch_bytes<kernel::Half::kFp16, true>(args, grid, vector_bytes);
  else dispatch_bytes<kernel::Half::kFp16, false>(args, grid, vector_bytes);
}

}  // namespace detail

}  // namespace fuseproof
