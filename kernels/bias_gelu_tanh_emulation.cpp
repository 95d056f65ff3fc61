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

template <kernel::Half D, int kBytes>
void run_table_grid(const kernel::BodyArgs& args, const uint16_t* table, int64_t grid) {
  const int64_t stride = grid * kernel::kTableBlockThreads;
  for (int64_t block = 0; block < grid; ++block) {
    for (int thread = 0; thread < kernel::kTableBlockThreads; ++thread) {
      kernel::bias_gelu_tanh_table_thread<D, kBytes>(args, table, block * kernel::kTableBlockThreads + thread, stride);
    }
  }
}

template <kernel::Half D, int kBytes, int kBlocksPerSm>
void run_compact_grid(const kernel::BodyArgs& args, const uint16_t* table, int64_t grid) {
  constexpr int kThreads = kernel::kCompactBlockThreads<kBlocksPerSm>;
  const int64_t stride = grid * kThreads;
  for (int64_t block = 0; block < grid; ++block) {
    for (int thread = 0; thread < kThreads; ++thread) {
      kernel::bias_gelu_tanh_compact_thread<D, kBytes, kernel::kCompactUnroll<kBytes, kBlocksPerSm>>(
          args, table, block * kThreads + thread, stride);
    }
  }
}

template <kernel::Half D, int kBlocksPerSm>
void run_compact(const kernel::BodyArgs& args, int vector_bytes, int emulated_sms) {
  const uint16_t* table =
      bias_gelu_tanh_host_compact_table(D == kernel::Half::kBf16 ? ScalarType::kBf16 : ScalarType::kFp16).data();
  const int64_t grid = bias_gelu_tanh_emulated_compact_grid(emulated_sms, kBlocksPerSm, args.n_vectors);
  if (vector_bytes == 32) run_compact_grid<D, 32, kBlocksPerSm>(args, table, grid);
  else run_compact_grid<D, 16, kBlocksPerSm>(args, table, grid);
}

template <kernel::Half D>
std::vector<uint16_t> make_compact_table() {
  std::vector<uint16_t> t(size_t(kernel::kCompactEntries<D>));
  for (uint32_t i = 0; i < t.size(); ++i) t[i] = kernel::gelu_tanh_half<D>(kernel::compact_table_pattern<D>(i));
  return t;
}

template <kernel::Half D>
std::vector<uint16_t> make_table() {
  std::vector<uint16_t> t(kernel::kGeluTableEntries);
  for (int p = 0; p < kernel::kGeluTableEntries; ++p) t[size_t(p)] = kernel::gelu_tanh_half<D>(uint16_t(p));
  return t;
}

template <kernel::Half D, bool kRoundSum>
void dispatch_bytes(const kernel::BodyArgs& args, int64_t grid, int vector_bytes) {
  if (vector_bytes == 32) run_grid<D, 32, kRoundSum>(args, grid);
  else run_grid<D, 16, kRoundSum>(args, grid);
}

}  // namespace

int64_t bias_gelu_tanh_emulated_table_grid(int emulated_sms, int64_t n_vectors) {
  const int64_t needed = (n_vectors + kernel::kTableBlockThreads - 1) / kernel::kTableBlockThreads;
  return needed < emulated_sms ? needed : int64_t(emulated_sms);
}

int64_t bias_gelu_tanh_emulated_compact_grid(int emulated_sms, int blocks_per_sm, int64_t n_vectors) {
  const int threads = blocks_per_sm == 2 ? kernel::kCompactBlockThreads<2> : kernel::kCompactBlockThreads<1>;
  const int64_t needed = (n_vectors + threads - 1) / threads;
  const int64_t resident = int64_t(emulated_sms) * blocks_per_sm;
  return needed < resident ? needed : resident;
}

const std::vector<uint16_t>& bias_gelu_tanh_host_compact_table(ScalarType dtype) {
  static const std::vector<uint16_t> bf16 = make_compact_table<kernel::Half::kBf16>();
  static const std::vector<uint16_t> fp16 = make_compact_table<kernel::Half::kFp16>();
  return dtype == ScalarType::kFp16 ? fp16 : bf16;
}

const std::vector<uint16_t>& bias_gelu_tanh_host_table(ScalarType dtype) {
  static const std::vector<uint16_t> bf16 = make_table<kernel::Half::kBf16>();
  static const std::vector<uint16_t> fp16 = make_table<kernel::Half::kFp16>();
  return dtype == ScalarType::kFp16 ? fp16 : bf16;
}

int64_t bias_gelu_tanh_emulated_grid(int emulated_sms, int64_t n_vectors) {
  const int64_t resident = int64_t(emulated_sms) * kEmulatedBlocksPerSm;
  const int64_t needed = (n_vectors + kernel::kBlockThreads - 1) / kernel::kBlockThreads;
  return needed < resident ? needed : resident;
}

namespace detail {

void run_emulation(const TensorView& out, const TensorView& x, const TensorView& bias, int vector_bytes,
                   int emulated_sms, EmulatedBody body, GeluMath math) {
  const int elems = vector_bytes / 2;
  kernel::BodyArgs args{};
  args.out = static_cast<uint16_t*>(out.data);
  args.x = static_cast<const uint16_t*>(x.data);
  args.bias = static_cast<const uint16_t*>(bias.data);
  args.n_vectors = x.sizes[0] * x.sizes[1] / elems;
  args.width_vectors = x.sizes[1] / elems;
  const bool bf16 = x.dtype == ScalarType::kBf16;
  const bool round_sum = body == EmulatedBody::kProduction;
  if (round_sum && (math == GeluMath::kTableCompact || math == GeluMath::kTableCompact1)) {
    // The host runs the compact body at the requested vector width (the sm_100 access pattern) on either layout.
    const bool two = math == GeluMath::kTableCompact;
    if (bf16 && two) run_compact<kernel::Half::kBf16, 2>(args, vector_bytes, emulated_sms);
    else if (bf16) run_compact<kernel::Half::kBf16, 1>(args, vector_bytes, emulated_sms);
    else if (two) run_compact<kernel::Half::kFp16, 2>(args, vector_bytes, emulated_sms);
    else run_compact<kernel::Half::kFp16, 1>(args, vector_bytes, emulated_sms);
    return;
  }
  if (round_sum && math == GeluMath::kTable) {
    const uint16_t* table = bias_gelu_tanh_host_table(x.dtype).data();
    const int64_t grid = bias_gelu_tanh_emulated_table_grid(emulated_sms, args.n_vectors);
    if (bf16 && vector_bytes == 32) run_table_grid<kernel::Half::kBf16, 32>(args, table, grid);
    else if (bf16) run_table_grid<kernel::Half::kBf16, 16>(args, table, grid);
    else if (vector_bytes == 32) run_table_grid<kernel::Half::kFp16, 32>(args, table, grid);
    else run_table_grid<kernel::Half::kFp16, 16>(args, table, grid);
    return;
  }
  const int64_t grid = bias_gelu_tanh_emulated_grid(emulated_sms, args.n_vectors);
  if (bf16 && round_sum) dispatch_bytes<kernel::Half::kBf16, true>(args, grid, vector_bytes);
  else if (bf16) dispatch_bytes<kernel::Half::kBf16, false>(args, grid, vector_bytes);
  else if (round_sum) dispatch_bytes<kernel::Half::kFp16, true>(args, grid, vector_bytes);
  else dispatch_bytes<kernel::Half::kFp16, false>(args, grid, vector_bytes);
}

}  // namespace detail

}  // namespace fuseproof
