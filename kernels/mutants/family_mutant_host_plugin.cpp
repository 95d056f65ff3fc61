// family_mutant_host_plugin.cpp: a host-memory plugin of a family op carrying one bug (FUSEPROOF_FAMILY_OP,
// FUSEPROOF_FAMILY_BUG, FUSEPROOF_FAMILY_CONTRACT; built per op and bug by CMake from family_bugs.h).
#include <algorithm>
#include <cstdio>
#include <memory>
#include <mutex>
#include <vector>

#include "kernels/mutants/mutant_export.h"
#include "kernels/mutants/family_mutant_kernel.h"

namespace fuseproof::mutants {
namespace {

/// The static-workspace bug's one workspace per process: grown when a call needs more (an outgrown one is kept, never
/// freed, so a call still using it reads stale values rather than freed memory).
uint16_t* static_workspace(size_t n) {
  static std::mutex m;
  static std::vector<std::unique_ptr<uint16_t[]>> kept;
  static size_t capacity = 0;
  std::lock_guard<std::mutex> lock(m);
  if (n > capacity || kept.empty()) {
    kept.emplace_back(new uint16_t[std::max<size_t>(n, 1)]);
    capacity = n;
  }
  return kept.back().get();
}

template <Half D>
void run(const fuseproof_call_t& c, uint16_t* out) {
  constexpr int N = kFamily<kOp>.inputs;
  const int64_t rows = c.shape[0], w = c.shape[1];
  const int64_t g = kFamily<kOp>.group_mask ? c.group_rows : 1;
  const uint16_t* in[3] = {};
  for (int i = 0; i < N; ++i) in[i] = static_cast<const uint16_t*>(c.inputs[i].data);
  const int64_t step = mutant_step<kBug>(w);
  const int64_t done = step ? w / step * step : w;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t col = 0; col < done; ++col) {
      uint16_t e[3] = {};
      for (int i = 0; i < N; ++i) e[i] = in[i][mutant_in<kOp, kBug>(i, r, col, w, g, rows)];
      out[r * w + col] = mutant_row_element<kOp, D, kBug, kContract>(e[0], e[1], e[2], r, rows);
    }
}

int call(const fuseproof_call_t* c) {
  const FamilyLaunch l{kOp, kContract, false, kVector};
  const std::string why = family_can_implement(l, *c);
  if (why.empty()) {
    const size_t n = size_t(c->shape[0] * c->shape[1]);
    auto* out = static_cast<uint16_t*>(c->out);
    // The workspace bug: the output staged in the shared workspace, then copied out in a second pass.
    uint16_t* dst = kBug == FamilyBug::kStaticWorkspace ? static_workspace(n) : out;
    mutant_dtype<kBug>(c->dtype) == FUSEPROOF_DTYPE_BF16 ? run<Half::kBf16>(*c, dst) : run<Half::kFp16>(*c, dst);
    if (dst != out) std::copy(dst, dst + n, out);
  }
  return family_call_status(*c, why);
}

}  // namespace
}  // namespace fuseproof::mutants

FUSEPROOF_FAMILY_MUTANT_EXPORT("host", false, &fuseproof::mutants::call)
