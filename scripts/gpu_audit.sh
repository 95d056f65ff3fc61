#!/usr/bin/env bash
# gpu_audit.sh: on a CUDA machine, audits the built-in CUDA kernel (both dtypes, every class: widths to 65,536, the
# production shapes at full size and one call above 2^31 elements, the whole 2^32 domain, PDL ordering) and runs every
# CUDA mutant (faults and hangs included); writes the reports to ${OUT:-build-gpu}/. Every step runs under `timeout`.
#
#   cmake --preset gpu && cmake --build build-gpu -j      # once (builds fuseproof-audit, the plugins, the mutants)
#   scripts/gpu_audit.sh                                 # ~5-7 min on an H200; exit 0 only when all is as expected
#   AUDIT_MUTANTS=0 scripts/gpu_audit.sh                 # the built-in kernel only (~3.5 min)
#
# Outputs (5 files): audit_cuda.md / .json (built-in kernel), mutation_cuda.md / .json (CUDA mutants and the score),
# gpu_audit.log (the console). Exit: 0 built-in passed and every mutant killed; 1 otherwise; 2 setup error.
set -uo pipefail

BUILD=${BUILD:-build-gpu}
OUT=${OUT:-$BUILD}
AUDIT=$BUILD/bin/fuseproof-audit
mkdir -p "$OUT"
LOG=$OUT/gpu_audit.log
exec > >(tee "$LOG") 2>&1

if [[ ! -x $AUDIT || ! -f $BUILD/lib/plugins/libbias_gelu_tanh_cuda.so || ! -d $BUILD/lib/mutants/cuda ]]; then
  echo "gpu_audit: build first: cmake --preset gpu && cmake --build $BUILD -j --target fuseproof_audit_all"
  # A bounded attempt, so that a fresh checkout still produces a report.
  timeout -k 5 600 cmake --build "$BUILD" -j"$(nproc)" --target fuseproof_audit_all || exit 2
fi
export FUSEPROOF_GOLDEN_DIR=${FUSEPROOF_GOLDEN_DIR:-$PWD/golden}
export FUSEPROOF_GOLDEN_BUILD_DIR=${FUSEPROOF_GOLDEN_BUILD_DIR:-$BUILD/golden}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || true

status=0
echo "== built-in CUDA kernel: every class, both dtypes, production shapes, whole 2^32 domain =="
t0=$SECONDS
timeout -k 5 300 "$AUDIT" audit --op bias_gelu_tanh --backend cuda --dtype all \
  --report "$OUT/audit_cuda.md" --json "$OUT/audit_cuda.json"
rc=$?
echo "built-in audit: exit $rc in $((SECONDS - t0)) s"
[[ $rc -eq 0 ]] || status=1

if [[ ${AUDIT_MUTANTS:-1} != 1 ]]; then
  echo "gpu_audit: the CUDA mutants left out (AUDIT_MUTANTS=${AUDIT_MUTANTS}); exit $status"
  exit "$status"
fi

# The mutants on a budget: each audit stops at its first failing class; widths to 16,384 (past the 8,192 cache bug),
# shapes: rows above 65,535 and one call above 2^31 elements (the int32-index bug), a 10 s call limit (the hang).
MUTANT_SCOPE=(--domain-biases 2048 --max-width 16384 --no-default-shapes --shapes 65537x64,155345x13824
              --call-timeout 10 --first-fail)
echo "== CUDA mutants: ${MUTANT_SCOPE[*]} =="
t0=$SECONDS
timeout -k 5 420 "$AUDIT" audit --backend cuda --dtype all "${MUTANT_SCOPE[@]}" \
  --mutants "$BUILD/lib/mutants/cuda" --mutant-timeout 120 \
  --report "$OUT/mutation_cuda.md" --json "$OUT/mutation_cuda.json"
rc=$?
echo "mutation run: exit $rc in $((SECONDS - t0)) s"
[[ $rc -eq 0 ]] || status=1

echo "== every CUDA mutant killed by its expected class =="
python3 scripts/check_cuda_mutants.py "$OUT/mutation_cuda.json" || status=1

echo "== control: the CUDA mutants' unmutated base must pass =="
timeout -k 5 120 "$AUDIT" audit --op bias_gelu_tanh --backend cuda --dtype all "${MUTANT_SCOPE[@]}" --no-reference \
  --plugin "$BUILD/lib/plugins/libcontrol_cuda.so" | tail -n 20
rc=${PIPESTATUS[0]}
echo "control: exit $rc"
[[ $rc -eq 0 ]] || status=1
exit $status
