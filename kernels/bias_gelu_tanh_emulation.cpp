// bias_gelu_tanh_emulation.cpp: simulated grid (block by block, thread by thread) over the host-compiled kernel body,
// through the same policy dispatch table as the CUDA launch.
#include "bias_gelu_tanh_emulation.h"

#include "bias_gelu_tanh_policies.h"

namespace fuseproof {

namespace {

/// The host's GELU table T of format D: entry i = gelu_tanh_half<D>(T::pattern(i)), built once.
template <kernel::Half D, class T>
const std::vector<uint16_t>& host_table() {
  static const std::vector<uint16_t> table = [] {
    std::vector<uint16_t> t(static_cast<size_t>(T::kEntries));
    for (uint32_t i = 0; i < t.size(); ++i) t[i] = kernel::gelu_tanh_half<D>(T::pattern(i));
    return t;
  }();
  return table;
}

/// Blocks of policy P the emulation simulates: min(emulated_sms x resident blocks, ceil(vectors / block step));
/// direct math: 256-thread blocks, 8 per SM (what an sm_90 runs); either table's bulk ring: 1,024 x 1, a chunk per
/// step.
template <class P>
int64_t emulated_grid(int emulated_sms, int64_t n_vectors) {
  const int64_t resident = int64_t(emulated_sms) * P::kEmulatedBlocksPerSm;
  const int64_t step = kernel::policy_block_step_vectors<P>();
  const int64_t needed = (n_vectors + step - 1) / step;
  return needed < resident ? needed : resident;
}

/// Every thread of every block of policy P's grid, in order, over the host body. A bulk ring's consumers read each
/// chunk where the device's bulk copy would have read it (x itself); its producer moves bytes only, so it has no host
/// counterpart.
template <kernel::Half D, class P>
void run_grid(const kernel::BodyArgs& args, int emulated_sms) {
  const uint16_t* table = nullptr;
  if constexpr (!std::is_void_v<typename P::Table>) table = host_table<D, typename P::Table>().data();
  const int64_t grid = emulated_grid<P>(emulated_sms, args.n_vectors);
  if constexpr (P::kBulkStages > 0) {
    constexpr int kElems = P::kVectorBytes / 2;
    const kernel::BulkPlan plan = kernel::bulk_plan<P>(args.n_vectors, grid);
    for (int64_t block = 0; block < grid; ++block)
      for (int t = 0; t < P::kConsumers; ++t) {
        kernel::BulkColumns cols = kernel::bulk_columns<P>(args, plan.chunk, block, grid, t);
        for (int64_t c = block; c < plan.n_chunks; c += grid) {
          const int64_t first = c * plan.chunk;
          kernel::bias_gelu_tanh_bulk_consume<P>(args, table, args.x + first * kElems, first, plan.chunk, t, cols,
                                                 [] {}, [] {});
        }
      }
  } else {
    const int64_t stride = grid * P::kThreads;
    for (int64_t block = 0; block < grid; ++block)
      for (int thread = 0; thread < P::kThreads; ++thread)
        kernel::bias_gelu_tanh_thread<P>(args, table, block * P::kThreads + thread, stride);
  }
}

template <kernel::Half D, bool kRoundSum>
void run(const kernel::BodyArgs& args, int vector_bytes, kernel::TableKind kind, int emulated_sms) {
  kernel::with_policy_for<D, kRoundSum>(vector_bytes, kind, [&](auto tag) {
    run_grid<D, typename decltype(tag)::type>(args, emulated_sms);
  });
}

}  // namespace

const std::vector<uint16_t>& bias_gelu_tanh_host_range_table(ScalarType dtype) {
  using kernel::Half;
  using kernel::RangeTable;
  return dtype == ScalarType::kFp16 ? host_table<Half::kFp16, RangeTable<Half::kFp16>>()
                                    : host_table<Half::kBf16, RangeTable<Half::kBf16>>();
}

const std::vector<uint16_t>& bias_gelu_tanh_host_table(ScalarType dtype) {
  using kernel::Half;
  return dtype == ScalarType::kFp16 ? host_table<Half::kFp16, kernel::GeluTable<Half::kFp16>>()
                                    : host_table<Half::kBf16, kernel::GeluTable<Half::kBf16>>();
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
  // The host runs every policy at the requested vector width (for the range table: the sm_100 access pattern) on
  // either layout. The negative control runs the direct math whatever `math` says.
  const bool bf16 = x.dtype == ScalarType::kBf16;
  if (body == EmulatedBody::kUnroundedSum) {
    if (bf16) run<kernel::Half::kBf16, false>(args, vector_bytes, kernel::TableKind::kNone, emulated_sms);
    else run<kernel::Half::kFp16, false>(args, vector_bytes, kernel::TableKind::kNone, emulated_sms);
    return;
  }
  const kernel::TableKind kind = kernel::table_kind_of(math);
  if (bf16) run<kernel::Half::kBf16, true>(args, vector_bytes, kind, emulated_sms);
  else run<kernel::Half::kFp16, true>(args, vector_bytes, kind, emulated_sms);
}

}  // namespace detail

}  // namespace fuseproof
