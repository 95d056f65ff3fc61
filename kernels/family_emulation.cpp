// family_emulation.cpp: the family kernels' element functions run on the host over a validated call.
#include <algorithm>
#include <thread>
#include <vector>

#include "family_launcher.h"

namespace fuseproof::detail {

namespace {

template <kernel::FamilyOp Op, kernel::Half D, bool kFp32>
void run(const fuseproof_call_t& c) {
  const int64_t rows = c.shape[0], w = c.shape[1];
  const auto* a = static_cast<const uint16_t*>(c.inputs[0].data);
  const auto* b = static_cast<const uint16_t*>(c.inputs[1].data);
  auto* out = static_cast<uint16_t*>(c.out);
  // Rows split over the host's threads, as blocks split them on the device; every element is independent.
  const int64_t threads = std::max<int64_t>(1, std::min<int64_t>(rows, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (int64_t t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      for (int64_t r = rows * t / threads; r < rows * (t + 1) / threads; ++r)
        for (int64_t col = 0; col < w; ++col)
          out[r * w + col] = kernel::family_element<Op, D, kFp32>(a[kernel::family_in0<Op>(r, col, w)],
                                                                  b[kernel::family_in1<Op>(r, col, w)]);
    });
  for (auto& th : pool) th.join();
}

template <kernel::FamilyOp Op>
void dispatch(const FamilyLaunch& l, const fuseproof_call_t& c) {
  const bool bf16 = c.dtype == FUSEPROOF_DTYPE_BF16;
  if (l.fp32) bf16 ? run<Op, kernel::Half::kBf16, true>(c) : run<Op, kernel::Half::kFp16, true>(c);
  else bf16 ? run<Op, kernel::Half::kBf16, false>(c) : run<Op, kernel::Half::kFp16, false>(c);
}

}  // namespace

void family_emulate(const FamilyLaunch& l, const fuseproof_call_t& c) {
  switch (l.op) {
    case kernel::FamilyOp::kBiasGeluErf: return dispatch<kernel::FamilyOp::kBiasGeluErf>(l, c);
    case kernel::FamilyOp::kSiluAndMul: return dispatch<kernel::FamilyOp::kSiluAndMul>(l, c);
    case kernel::FamilyOp::kGeluTanhAndMul: return dispatch<kernel::FamilyOp::kGeluTanhAndMul>(l, c);
    case kernel::FamilyOp::kGeluAndMul: return dispatch<kernel::FamilyOp::kGeluAndMul>(l, c);
  }
}

}  // namespace fuseproof::detail
