// family_emulation.cpp: the family kernels' element functions run on the host over a validated call.
#include "common/parallel_for.h"
#include "family_dispatch.h"
#include "family_launcher.h"

namespace fuseproof::detail {

namespace {

using kernel::Contract;

template <kernel::FamilyOp Op, kernel::Half D, Contract C>
void emulate(const fuseproof_call_t& c) {
  constexpr int N = kernel::kFamily<Op>.inputs;
  const int64_t rows = c.shape[0], w = c.shape[1];
  // group_rows is meaningful only for ops with group-broadcast inputs; family_in reads it for those alone.
  const int64_t g = kernel::kFamily<Op>.group_mask ? c.group_rows : 1;
  const uint16_t* in[3] = {};
  for (int i = 0; i < N; ++i) in[i] = static_cast<const uint16_t*>(c.inputs[i].data);
  auto* out = static_cast<uint16_t*>(c.out);
  // Rows split over the host's threads, as blocks split them on the device; every element is independent.
  fuseproof::parallel_for(size_t(rows), [&](unsigned, size_t lo, size_t hi) {
    for (int64_t r = int64_t(lo); r < int64_t(hi); ++r)
      for (int64_t col = 0; col < w; ++col) {
        uint16_t e[3] = {};
        for (int i = 0; i < N; ++i) e[i] = in[i][kernel::family_in<Op>(i, r, col, w, g)];
        out[r * w + col] = kernel::family_element<Op, D, C>(e[0], e[1], e[2]);
      }
  });
}

struct EmulateRun {
  template <kernel::FamilyOp Op, kernel::Half D, Contract C>
  static int run(const fuseproof_call_t& c) {
    emulate<Op, D, C>(c);
    return 0;
  }
};

}  // namespace

void family_emulate(const FamilyLaunch& l, const fuseproof_call_t& c) { family_dispatch<EmulateRun>(l, c, 0); }

}  // namespace fuseproof::detail
