#!/usr/bin/env bash
# nightly_gpu.sh: the nightly on a GPU runner of one architecture, for any CI system (.github/workflows/nightly-gpu.yml
# runs its steps one by one): build the gpu preset for ARCH, run the gpu ctest labels, audit every op's built-in CUDA
# kernel (JUnit XML, a GitHub summary, JSON), run scripts/nightly_e2e.sh on the same build, then the verdict.
# Usage: scripts/nightly_gpu.sh [--dry-run] [--step build|test|audit|e2e|verdict|all] [--out DIR] ARCH   (ARCH: sm_90)
#   --dry-run  print each command it would run (and the golden data it would judge against), run nothing
#   --step     one step (default all: every step, then the verdict); each records its exit status in DIR/status/
#   --out DIR  reports and logs (default out/nightly-gpu/ARCH): ctest_gpu.xml, audit.xml, audit_summary.md,
#              audit.json, e2e/ (check.xml, check.json, ...; dit/: the default-dit configuration's), e2e-export/
#              (when golden/e2e has no file for ARCH: the frames scripts/bless_e2e.sh needs), summary.md
# Environment: JOBS (build jobs, default nproc), EXTRA_CMAKE_ARGS (passed to scripts/gpu_run.sh).
# Exit status (the verdict, and `all`): 0 pass; 1 a defect (a GPU test, the audit or the e2e gates failed); 2 an error
# (bad argument, no GPU of ARCH, the build failed); 3 INCOMPLETE: no golden data for this architecture (the verdict
# prints how to capture it); 4 corrupt or foreign golden data. A step alone exits 0 once it has recorded its status,
# except build (its failure stops the nightly: 2).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DRY=0
STEP=all
OUT=""
ARCH=""
die() { echo "nightly_gpu: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dry-run) DRY=1; shift ;;
    --step) STEP="${2:?--step needs build, test, audit, e2e, verdict or all}"; shift 2 ;;
    --out) OUT="${2:?--out needs a directory}"; shift 2 ;;
    -h|--help) sed -n '2,17p' "${BASH_SOURCE[0]}"; exit 0 ;;
    -*) die "unknown argument '$1' (see --help)" ;;
    *) [[ -z "$ARCH" ]] || die "one ARCH, got '$ARCH' and '$1'"; ARCH=$1; shift ;;
  esac
done
[[ "$ARCH" =~ ^sm_([0-9]{2,3}[af]?)$ ]] || die "ARCH must look like sm_90 or sm_100, got '${ARCH}'"
CUDA_ARCH=${BASH_REMATCH[1]}  # the CMake spelling: FUSEPROOF_CUDA_ARCHITECTURES, hence CMAKE_CUDA_ARCHITECTURES
[[ "$STEP" =~ ^(build|test|audit|e2e|verdict|all)$ ]] ||
  die "--step must be build, test, audit, e2e, verdict or all, got '$STEP'"
OUT=${OUT:-$ROOT/out/nightly-gpu/$ARCH}
BUILD=build-gpu
GOLDEN_ARCH=${ARCH%%[af]}  # the golden data of sm_100a is sm_100's: the device's architecture
GOLDEN="golden/$GOLDEN_ARCH"
E2E_GOLDEN="golden/e2e/$GOLDEN_ARCH.json"
# The DiT configuration nightly_e2e.sh runs after default (blocks with modulate and gated-residual sites).
E2E_DIT_GOLDEN="golden/e2e/${GOLDEN_ARCH}_default-dit.json"
E2E_NVFP4_GOLDEN="golden/e2e/${GOLDEN_ARCH}_default-fc-out-nvfp4.json"
have_golden=1
[[ -f "$ROOT/$GOLDEN/provenance.json" ]] || have_golden=0
have_e2e_golden=1
[[ -f "$ROOT/$E2E_GOLDEN" ]] || have_e2e_golden=0
have_e2e_dit_golden=1
[[ -f "$ROOT/$E2E_DIT_GOLDEN" ]] || have_e2e_dit_golden=0
have_e2e_nvfp4_golden=1
[[ -f "$ROOT/$E2E_NVFP4_GOLDEN" ]] || have_e2e_nvfp4_golden=0

# One command of the plan: printed with its working directory's meaning (the repository root), run unless --dry-run.
run() {
  echo "+ $*"
  [[ $DRY -eq 1 ]] && return 0
  (cd "$ROOT" && "$@")
}
record() { [[ $DRY -eq 1 ]] || { mkdir -p "$OUT/status"; echo "$2" > "$OUT/status/$1"; }; }

# The GPU must be the architecture the runner was picked for: golden data of another one would judge it wrongly.
check_device() {
  local want=${GOLDEN_ARCH#sm_}
  echo "+ nvidia-smi --query-gpu=compute_cap --format=csv,noheader   # must read ${want:0:-1}.${want: -1} for $ARCH"
  [[ $DRY -eq 1 ]] && return 0
  local cc
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d ' ')
  [[ -n "$cc" ]] || die "no CUDA device found (nvidia-smi)"
  [[ "sm_${cc/./}" == "$GOLDEN_ARCH" ]] || die "this runner's GPU is sm_${cc/./}, not $ARCH (the matrix entry)"
}

step_build() {
  check_device
  echo "# configure: cmake --preset gpu -B $BUILD -DFUSEPROOF_CUDA_ARCHITECTURES=$CUDA_ARCH" \
    "(CMAKE_CUDA_ARCHITECTURES), then build"
  if ! run env ARCHS="$CUDA_ARCH" BUILD_DIR="$BUILD" OUT="$OUT/build" JOBS="${JOBS:-$(nproc)}" \
      EXTRA_CMAKE_ARGS="${EXTRA_CMAKE_ARGS:-}" scripts/gpu_run.sh build; then
    record build 2
    echo "nightly_gpu: the build failed (see $OUT/build/gpu_build.log)" >&2
    return 2
  fi
  record build 0
}

step_test() {
  local rc=0
  run env BUILD_DIR="$BUILD" OUT="$OUT/build" scripts/gpu_run.sh test || rc=$?
  [[ $DRY -eq 1 || ! -f "$OUT/build/gpu_junit.xml" ]] || cp "$OUT/build/gpu_junit.xml" "$OUT/ctest_gpu.xml"
  record test "$([[ $rc -eq 0 ]] && echo 0 || echo 1)"
}

step_audit() {
  local rc=0
  [[ $have_golden -eq 1 ]] || echo "# $GOLDEN is absent: the audit will exit 3 (INCOMPLETE: no golden data for $ARCH)"
  run "$BUILD/bin/fuseproof" audit --backend cuda --arch "$GOLDEN_ARCH" --junit "$OUT/audit.xml" \
    --report "$OUT/audit_summary.md" --report-format github --json "$OUT/audit.json" || rc=$?
  record audit "$rc"
}

step_e2e() {
  local rc=0 export_args=()
  if [[ $have_e2e_golden -eq 0 ]]; then
    echo "# $E2E_GOLDEN is absent: the e2e check will exit 3; the frames to bless go to $OUT/e2e-export"
    export_args=(--export "$OUT/e2e-export")
  fi
  if [[ $have_e2e_dit_golden -eq 0 ]]; then
    echo "# $E2E_DIT_GOLDEN is absent: the e2e check will exit 3; a candidate blessed from the run goes to" \
      "$OUT/e2e/dit/${GOLDEN_ARCH}_default-dit.json"
  fi
  if [[ $have_e2e_nvfp4_golden -eq 0 ]]; then
    echo "# $E2E_NVFP4_GOLDEN is absent: the e2e check will exit 3; a candidate blessed from the run goes to" \
      "$OUT/e2e/fc-out-nvfp4/${GOLDEN_ARCH}_default-fc-out-nvfp4.json"
  fi
  run scripts/nightly_e2e.sh --skip-build --build-dir "$BUILD" --out "$OUT/e2e" "${export_args[@]}" || rc=$?
  record e2e "$rc"
}

# The worst status, ranked as every fuseproof command ranks them: error, corrupt, defect, incomplete.
combine() {
  local s
  for s in 2 4 1 3; do [[ " $* " == *" $s "* ]] && { echo "$s"; return; }; done
  echo 0
}

golden_instructions() {
  cat <<EOF
no golden data for this architecture ($ARCH): the verdict is INCOMPLETE, never a pass. To create it the first time:
  1. On this $ARCH runner, after the build step (PyTorch with CUDA):
       python3 scripts/capture_golden.py --out golden --fuseproof $BUILD/bin/fuseproof
     writes $GOLDEN/ (eager tables, 2^32-domain digests, NaN patterns, MUFU tables, provenance.json).
  2. The e2e golden file: this nightly exported the run's frames to $OUT/e2e-export (the uploaded reports hold
     it; another CI: scripts/nightly_e2e.sh --export DIR on the $ARCH runner). Where FFmpeg and OpenCV are, after
     cmake --preset default && cmake --build --preset default:
       scripts/bless_e2e.sh --run-dir DIR --arch $GOLDEN_ARCH      (DIR: that e2e-export folder)
     writes $E2E_GOLDEN and records/e2e/$GOLDEN_ARCH.md.
  3. The DiT configuration's golden file (per-frame SHA-256, written here on the GPU when the run's own gates pass and
     the commit is known): $OUT/e2e/dit/${GOLDEN_ARCH}_default-dit.json; review it and copy it to $E2E_DIT_GOLDEN
     (or bless it with the command scripts/nightly_e2e.sh printed). The same for the NVFP4 fc_out configuration:
     $OUT/e2e/fc-out-nvfp4/${GOLDEN_ARCH}_default-fc-out-nvfp4.json to $E2E_NVFP4_GOLDEN.
  4. Commit $GOLDEN/, $E2E_GOLDEN, $E2E_DIT_GOLDEN, $E2E_NVFP4_GOLDEN and records/e2e/$GOLDEN_ARCH.md; the next nightly judges against them.
EOF
}

present_or_absent() { [[ $1 -eq 1 ]] && echo present || echo absent; }

step_verdict() {
  if [[ $DRY -eq 1 ]]; then
    echo "# verdict: the worst of build, test, audit and e2e (error 2, corrupt 4, defect 1, incomplete 3)"
    echo "# golden data: $GOLDEN $(present_or_absent $have_golden), $E2E_GOLDEN $(present_or_absent $have_e2e_golden)," \
      "$E2E_DIT_GOLDEN $(present_or_absent $have_e2e_dit_golden), $E2E_NVFP4_GOLDEN $(present_or_absent $have_e2e_nvfp4_golden)"
    echo "# on exit 3 (INCOMPLETE), the verdict prints:"
    golden_instructions | sed 's/^/#   /'
    return 0
  fi
  local statuses=() line s
  mkdir -p "$OUT"
  {
    echo "## fuseproof GPU nightly, $ARCH"
    echo
    echo "| step | exit status |"
    echo "|---|---|"
    for s in build test audit e2e; do
      line=$(cat "$OUT/status/$s" 2>/dev/null || echo "not run")
      echo "| $s | $line |"
      [[ "$line" =~ ^[0-9]+$ ]] && statuses+=("$line")
      [[ "$line" == "not run" ]] && statuses+=(2)
    done
  } > "$OUT/summary.md"
  local rc
  rc=$(combine "${statuses[@]}")
  {
    echo
    case "$rc" in
      0) echo "**PASS**: every step passed." ;;
      1) echo "**FAIL**: a defect was found (the failing step's JUnit report and log say where)." ;;
      2) echo "**ERROR**: a step could not run (see its log)." ;;
      3) echo "**INCOMPLETE**: $(golden_instructions | head -n1)"; echo
         echo '```'; golden_instructions | tail -n +2; echo '```' ;;
      4) echo "**CORRUPT**: golden data whose SHA-256 or provenance does not match (see the audit and e2e logs)." ;;
    esac
    [[ -f "$OUT/audit_summary.md" ]] && { echo; cat "$OUT/audit_summary.md"; }
  } >> "$OUT/summary.md"
  cat "$OUT/summary.md"
  [[ $rc -eq 3 ]] && golden_instructions >&2
  return "$rc"
}

[[ $DRY -eq 1 ]] && echo "# nightly_gpu plan for $ARCH (dry run: nothing is run), reports in $OUT"
[[ $DRY -eq 1 ]] || mkdir -p "$OUT" || die "--out: cannot create '$OUT'"
case "$STEP" in
  build) step_build; exit $? ;;
  test) step_test; exit 0 ;;
  audit) step_audit; exit 0 ;;
  e2e) step_e2e; exit 0 ;;
  verdict) step_verdict; exit $? ;;
  all)
    [[ $DRY -eq 1 ]] || rm -rf "$OUT/status"
    step_build || { step_verdict; exit $?; }
    step_test
    step_audit
    step_e2e
    step_verdict
    exit $?
    ;;
esac
