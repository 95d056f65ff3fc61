#!/usr/bin/env bash
# device_session.sh: one bounded GPU session: build once (gpu preset), then the GPU tests, the CUDA audit and mutants,
# and the e2e nightly export; packs every report into $OUT/results.tar.xz (the e2e frames stay beside it).
#   OUT=<dir> BUDGET=570 scripts/device_session.sh [steps...]
#   steps: build tests audit audit_builtin sanitize e2e bench bench_dist profile golden_tree (default: build
#   tests audit e2e); MATHS, PROFILE_MATHS, DISTS, TIMING, PEER_AUDIT, TESTS and ARCHS pass through to the step
#   scripts; PROTOCOLS="alternate blocks:off after-gemm" runs bench_dist once per timing protocol (":off": no PDL)
# A step starts only if the session budget leaves it time; each runs under `timeout`.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:?OUT must name the folder that comes back}
BUDGET=${BUDGET:-570}
W=$OUT/work
mkdir -p "$W"
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(build tests audit e2e)
start=$SECONDS
pack() {
  # At most 8 files come back: everything but the frames goes into one archive, and the work folder is removed.
  tar -C "$W" --exclude='*.rgb24' --exclude='ffn_x.bin' -cJf "$OUT/results.tar.xz" . 2>/dev/null
  echo "device_session: packed $(du -sh "$OUT/results.tar.xz" | cut -f1) after $((SECONDS - start)) s"
  rm -rf "$W"
}
trap pack EXIT
left() { echo $((BUDGET - (SECONDS - start))); }
run_step() {  # run_step NAME MIN_SECONDS CMD...
  local name=$1 need=$2
  shift 2
  local budget
  budget=$(left)
  if [ "$budget" -lt "$need" ]; then
    echo "device_session: skipping $name: $budget s left, needs $need" | tee -a "$W/session.log"
    return
  fi
  local t0=$SECONDS
  timeout -k 5 "$((budget - 15))" "$@" > "$W/$name.log" 2>&1
  local rc=$?
  echo "device_session: $name exit $rc in $((SECONDS - t0)) s" | tee -a "$W/session.log"
  tail -n 15 "$W/$name.log"
}
nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.mem --format=csv > "$W/gpu.txt" 2>&1
for s in "${steps[@]}"; do
  case "$s" in
    build) run_step build 120 env OUT="$W/build" ARCHS="${ARCHS:-90}" JOBS="$(nproc)" scripts/gpu_run.sh build ;;
    tests) run_step tests 60 env OUT="$W/tests" TESTS="${TESTS:-BiasGeluTanh}" scripts/gpu_run.sh test ;;
    audit) run_step audit 60 env BUILD=build-gpu OUT="$W/audit" scripts/gpu_audit.sh ;;
    audit_builtin) run_step audit_builtin 60 env BUILD=build-gpu OUT="$W/audit" AUDIT_MUTANTS=0 scripts/gpu_audit.sh ;;
    sanitize) run_step sanitize 120 env BUILD=build-gpu BUDGET="$(( $(left) - 30 ))" scripts/gpu_sanitize.sh "$W/sanitize" ;;
    e2e)
      ln -sfn build-gpu build-gpu-e2e
      run_step e2e 60 scripts/nightly_e2e.sh --skip-build --out "$W/e2e" --export "$W/e2e_export"
      for f in lossless.rgb24 high.rgb24 high-eager.rgb24; do [ -f "$W/e2e_export/$f" ] && mv "$W/e2e_export/$f" "$OUT/$f"; done ;;
    bench) run_step bench 60 env OUT="$W/bench" scripts/gpu_bench.sh ;;
    profile) run_step profile 60 env OUT="$W/profile" MATHS="${PROFILE_MATHS:-${MATHS:-}}" scripts/gpu_profile.sh ;;
    bench_dist)  # PROTOCOLS: space-separated TIMING[:PDL] (default: $TIMING, else after-gemm), one bench_dist_<timing>[_nopdl] each
      pa=${PEER_AUDIT:-1}  # the peer's audit once, after the first protocol
      for p in ${PROTOCOLS:-${TIMING:-after-gemm}}; do
        t=${p%%:*} d=on
        [ "$p" != "$t" ] && d=${p#*:}
        n=bench_dist_$t
        [ "$d" = off ] && n=${n}_nopdl
        run_step "$n" 60 env TIMING="$t" PDL="$d" PEER_AUDIT="$pa" scripts/gpu_bench_dist.sh "$W/$n"
        pa=0
      done ;;
    golden_tree)  # the tree digests beside the flat ones in a copy of golden/sm_90 (capture_golden.py --digests-only)
      mkdir -p "$W/golden_amend" && cp -r golden/sm_90 "$W/golden_amend/"
      run_step golden_tree 120 python3 scripts/capture_golden.py --out "$W/golden_amend" --digests-only ;;
    *) echo "device_session: unknown step $s" ;;
  esac
done
