#!/usr/bin/env bash
# gpu_sanitize.sh: compute-sanitizer (memcheck, racecheck, initcheck, synccheck) over the GPU tests and the audit of the
# built-in CUDA kernel, at reduced sizes, plus memcheck's negative control (the tail_overread mutant on exact-size
# buffers must be reported). Writes OUTDIR/sanitize_summary.md and one log per run. About 5-6 minutes on an H200.
#   scripts/gpu_sanitize.sh OUTDIR          (from the repository root of a CUDA machine; builds what is missing)
# Environment: BUILD (default build-gpu), STEP_TIMEOUT (seconds per sanitizer run, default 75; racecheck twice that),
# BUDGET (seconds for all runs, default 330: a run that would start later is listed as skipped, and the exit status is
# then 1).
# Reduced sizes (stated in the summary): rapidcheck max_success=5, the >2^31-element test left out, the audit with
# --no-reference --domain-biases 4 --max-width 512 --property-cases 8, one class at a time (rejection extreme
# property widths domain pdl). Exit: 0 every run clean and the negative control caught; 1 otherwise; 2 setup error.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/gpu_sanitize.sh OUTDIR}
BUILD=${BUILD:-build-gpu}
STEP_TIMEOUT=${STEP_TIMEOUT:-75}
BUDGET=${BUDGET:-330}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
[ -x "$CS" ] || { echo "gpu_sanitize: compute-sanitizer not found" >&2; exit 2; }
start=$SECONDS

targets="fuseproof-audit fuseproof_plugins fuseproof_mutants bias_gelu_tanh_cuda_test bias_gelu_tanh_cuda_launcher_test
  cuda_concurrency_test sanitizer_plugin_exact_call"
need_build=0
for f in bin/fuseproof-audit bin/bias_gelu_tanh_cuda_test bin/bias_gelu_tanh_cuda_launcher_test \
         bin/cuda_concurrency_test bin/sanitizer_plugin_exact_call lib/plugins/libbias_gelu_tanh_cuda.so \
         lib/plugins/libcontrol_cuda.so lib/mutants/cuda/libcuda_tail_overread.so; do
  [ -e "$BUILD/$f" ] || need_build=1
done
if [ $need_build = 1 ] || [ "${REBUILD:-0}" = 1 ]; then
  echo "gpu_sanitize: building $targets"
  if [ -f "$BUILD/CMakeCache.txt" ]; then
    timeout -k 5 400 cmake --build "$BUILD" -j"$(nproc)" $(for t in $targets; do echo --target "$t"; done) \
      > "$OUT/build.log" 2>&1 || { tail -n 30 "$OUT/build.log"; exit 2; }
  else
    OUT="$OUT" BUILD_DIR="$BUILD" ARCHS="${ARCHS:-90}" TARGETS="$targets" timeout -k 5 400 scripts/gpu_run.sh build \
      || exit 2
  fi
fi
export FUSEPROOF_GOLDEN_DIR=${FUSEPROOF_GOLDEN_DIR:-$PWD/golden}
export FUSEPROOF_GOLDEN_BUILD_DIR=${FUSEPROOF_GOLDEN_BUILD_DIR:-$PWD/$BUILD/golden}
export RC_PARAMS="max_success=5"
B=$BUILD/bin

rows=()
status=0
# run TOOL NAME EXPECT CMD...: one compute-sanitizer run; EXPECT clean (no error, program exit 0) or caught (errors).
run() {
  local tool=$1 name=$2 expect=$3
  shift 3
  local log="$OUT/${tool}_${name}.log" t0=$SECONDS extra=()
  if [ $((SECONDS - runs_start)) -gt "$BUDGET" ]; then
    rows+=("| $tool | $name | SKIPPED (budget of $BUDGET s spent) | - | - | - |")
    status=1
    return
  fi
  [ "$tool" = racecheck ] && extra=(--racecheck-report hazard)
  local limit=$STEP_TIMEOUT
  [ "$tool" = racecheck ] && limit=$((2 * STEP_TIMEOUT))  # racecheck costs ~100x: 150 s by default
  timeout -k 5 "$limit" "$CS" --tool "$tool" "${extra[@]}" --target-processes all --error-exitcode 86 \
    --print-limit 20 "$@" > "$log" 2>&1
  local rc=$?
  local summary
  summary=$(grep -E "(ERROR|RACECHECK|SYNCCHECK|INITCHECK) SUMMARY" "$log" | tail -n 1 | sed 's/^=* *//')
  local errors
  errors=$(grep -cE "^========= (Invalid|Uninitialized|Race|Barrier|Error|Program hit|Warning|.*[Hh]azard)" "$log")
  local verdict
  if [ "$expect" = clean ]; then
    if [ $rc -eq 0 ]; then verdict=clean; elif [ $rc -ge 124 ] && [ $rc -ne 86 ]; then verdict="TIMEOUT"; else verdict="FAIL"; fi
  else
    if [ $rc -eq 86 ] && [ "$errors" -gt 0 ]; then verdict="caught (negative control)"; else verdict="NOT CAUGHT"; fi
  fi
  case "$verdict" in clean|caught*) ;; *) status=1 ;; esac
  rows+=("| $tool | $name | $verdict | exit $rc | ${summary:-no summary line} | $((SECONDS - t0)) s |")
  echo "gpu_sanitize: $tool $name: $verdict (exit $rc, $((SECONDS - t0)) s)"
}

runs_start=$SECONDS
# Negative control: the tail_overread mutant reads past each row; on exact-size buffers memcheck must report it.
run memcheck control_plugin_exact_buffers clean "$B/sanitizer_plugin_exact_call" "$BUILD/lib/plugins/libcontrol_cuda.so" 5 64
run memcheck tail_overread_mutant caught "$B/sanitizer_plugin_exact_call" "$BUILD/lib/mutants/cuda/libcuda_tail_overread.so" 5 60
cuda_filter='*RandomShapes*:*InPlace*:*PdlOrdering*:-*MoreThan2To31*'
audit=("$B/fuseproof-audit" --op bias_gelu_tanh --backend cuda --dtype all --no-reference --domain-biases 4
       --max-width 512 --property-cases 8)
for tool in memcheck racecheck initcheck synccheck; do
  filter=$cuda_filter
  # racecheck and synccheck look at shared memory and barriers: the in-place runs cover every GELU math (tables too).
  [ "$tool" = racecheck ] || [ "$tool" = synccheck ] && filter='*InPlace*'
  run $tool cuda_test clean "$B/bias_gelu_tanh_cuda_test" --gtest_filter="$filter"
  [ "$tool" = memcheck ] || [ "$tool" = initcheck ] && run $tool cuda_launcher_test clean "$B/bias_gelu_tanh_cuda_launcher_test"
  run $tool cuda_concurrency_test clean "$B/cuda_concurrency_test"
  classes="rejection extreme property widths domain pdl"
  [ "$tool" = racecheck ] && classes="property widths"  # racecheck costs ~100x: the classes that use every math
  for class in $classes; do
    run $tool "audit_${class}" clean "${audit[@]}" --only "$class" --report "$OUT/audit_${tool}_${class}.md"
  done
done

{
  echo "# compute-sanitizer on the H200 ($(date -u +%Y-%m-%dT%H:%MZ))"
  echo
  echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1); $("$CS" --version | tail -n 1)"
  echo "Commit: ${FUSEPROOF_GIT_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}; command: scripts/gpu_sanitize.sh; total $((SECONDS - start)) s"
  echo
  echo "Reduced sizes: RC_PARAMS=$RC_PARAMS; GPU tests filtered ($cuda_filter; racecheck and synccheck: *InPlace*);"
  echo "audit: ${audit[*]:1} --only CLASS (racecheck: property and widths)."
  echo
  echo "| tool | subject | verdict | exit | summary line | time |"
  echo "|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
} > "$OUT/sanitize_summary.md"
cat "$OUT/sanitize_summary.md"
exit $status
