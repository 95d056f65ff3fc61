#!/usr/bin/env bash
# triton_fusion_mechanism.sh: shows on the CPU, with Debian's LLVM (opt, llc with the NVPTX target), why a Triton kernel
# that rounds x + round_T(gate * y) with casts still computes one half-precision fma under enable_fp_fusion=True
# (docs/SUBJECTS.md, Every op of the family). The IR is what Triton's lowering of the cast-rounded steps amounts to for
# fp16: fpext, fmul, fptrunc, fpext, fadd, fptrunc. It prints the IR after opt -O3 (InstCombine has shrunk both steps to
# half operations) and the PTX with and without -fp-contract=fast (Triton's enable_fp_fusion sets the backend's
# AllowFPOpFusion to Fast): fma.rn.f16, one rounding, against mul.rn.f16 and add.rn.f16, eager's two. Exit 0 when the
# PTX shows exactly that; 1 otherwise; 2 without opt and llc. The IR has typed pointers: LLVM 14 (Debian 12), up to 16.
set -euo pipefail
command -v opt > /dev/null && command -v llc > /dev/null || { echo "triton_fusion_mechanism: needs opt and llc (apt-get install llvm)" >&2; exit 2; }
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
cat > "$d/gated_residual.ll" <<'IR'
target triple = "nvptx64-nvidia-cuda"
define void @gated_residual(half addrspace(1)* %px, half addrspace(1)* %pg, half addrspace(1)* %py, half addrspace(1)* %po) {
  %x = load half, half addrspace(1)* %px
  %g = load half, half addrspace(1)* %pg
  %y = load half, half addrspace(1)* %py
  %xf = fpext half %x to float
  %gf = fpext half %g to float
  %yf = fpext half %y to float
  %p = fmul float %gf, %yf
  %pt = fptrunc float %p to half
  %pf = fpext half %pt to float
  %r = fadd float %xf, %pf
  %rt = fptrunc float %r to half
  store half %rt, half addrspace(1)* %po
  ret void
}
IR
opt -O3 "$d/gated_residual.ll" -o "$d/o3.bc"
echo "after opt -O3:"
opt -O3 -S "$d/gated_residual.ll" | grep -E "fmul|fadd|fpext|fptrunc" | sed 's/^/  /'
fused=$(llc -mcpu=sm_80 -fp-contract=fast "$d/o3.bc" -o - | grep -E "^\s*(fma|mul|add)\.rn\.f16" | awk '{print $1}' | tr '\n' ' ')
plain=$(llc -mcpu=sm_80 "$d/o3.bc" -o - | grep -E "^\s*(fma|mul|add)\.rn\.f16" | awk '{print $1}' | tr '\n' ' ')
echo "PTX with -fp-contract=fast (enable_fp_fusion=True): $fused"
echo "PTX without (enable_fp_fusion=False):              $plain"
[ "$fused" = "fma.rn.f16 " ] && [ "$plain" = "mul.rn.f16 add.rn.f16 " ]
