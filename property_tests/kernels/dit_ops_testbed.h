// dit_ops_testbed.h: calls of the family's 3-input ops (gated_residual, modulate) for the kernel tests: the ABI call
// over given buffers, with the layouts of kernels/fuseproof_kernel_abi.h.
#pragma once

#include <cstdint>
#include <string>

#include "kernels/family_launcher.h"

namespace fuseproof::test {

/// The launch of the built-in kernel of `op` under `contract`, on the host emulation or CUDA.
inline FamilyLaunch dit_launch(kernel::FamilyOp op, kernel::Contract contract, bool cuda = false) {
  FamilyLaunch l{op};
  l.contract = contract;
  l.cuda = cuda;
  return l;
}

/// A valid call of a 3-input op: out and x [rows, w]; inputs 1 and 2 [rows, w] when elementwise (gated_residual's
/// y), [rows / group_rows, w] when group-broadcast; every stride {w, 1}.
inline fuseproof_call_t dit_call(int32_t dtype, int64_t rows, int64_t w, int64_t group_rows, void* out,
                                 const void* in0, const void* in1, const void* in2) {
  fuseproof_call_t c{};
  c.struct_size = sizeof(fuseproof_call_t);
  c.dtype = dtype;
  c.shape[0] = rows;
  c.shape[1] = w;
  c.out = out;
  c.n_inputs = 3;
  const void* in[3] = {in0, in1, in2};
  for (int i = 0; i < 3; ++i) c.inputs[i] = {in[i], {w, 1}};
  c.group_rows = group_rows;
  return c;
}

/// Runs the call; "" or the launcher's one-line refusal.
inline std::string dit_run(const FamilyLaunch& l, const fuseproof_call_t& c) { return family_launch(l, c); }

}  // namespace fuseproof::test
