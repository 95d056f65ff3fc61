#!/usr/bin/env bash
# gpu_subjects.sh: on a CUDA machine with PyTorch: builds the Python package (gpu preset, sm_90), runs the libtorch
# adapter's stream-ordering test, and audits the four built-in Python subjects (eager, torch-compile,
# torch-compile-emulated, triton) over the whole 2^32 domain, both dtypes, exact mismatch counts (--stop-after 0).
#
#   scripts/gpu_subjects.sh OUT_DIR       # from the repository root; .deps/ carried (scripts/prepare_gpu_deps.sh)
#
# Expected on the H200: build ~1-1.5 min, the eight audits ~2.5-3.5 min side by side (each capped at SUBJECT_TIMEOUT,
# 300 s); at most 10 minutes in all (build capped at 240 s, stream test at 60 s).
#
# Writes OUT_DIR/subjects_table.md (the table for docs/SUBJECTS.md) and OUT_DIR/gpu_subjects.tar.xz (per subject
# and dtype: .md/.json reports and console log; the build and ctest logs). The eight audits run in parallel, each
# under `timeout`.
# Exit: 0 when every subject ran to a verdict (PASS or FAIL) or was reported unavailable and the stream test passed;
# 1 otherwise; 2 when the build failed.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/gpu_subjects.sh OUT_DIR}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
W=$OUT/subjects
mkdir -p "$W"
BUILD=${BUILD_DIR:-build-gpu}
SUBJECT_TIMEOUT=${SUBJECT_TIMEOUT:-300}
# For a smoke test elsewhere: SKIP_BUILD=1 BUILD_DIR=build BACKEND=emulated DOMAIN_BIASES=64 scripts/gpu_subjects.sh DIR
BACKEND=${BACKEND:-cuda}
DOMAIN_BIASES=${DOMAIN_BIASES:-65536}
# The shapes class: Wan2.2's four production shapes (up to 75,600 x 13,824). The class's default call above 2^31
# elements is left out here: eight audits side by side would need about 17 GB of device memory each for it.
SHAPES=${SHAPES:---no-default-shapes --model wan2.2}
PY=$(command -v python3)
start=$SECONDS
pack() {
  tar -C "$OUT" -cJf "$OUT/gpu_subjects.tar.xz" subjects 2>/dev/null && rm -rf "$W"
  echo "gpu_subjects: packed $OUT/gpu_subjects.tar.xz after $((SECONDS - start)) s"
}
trap pack EXIT
exec > >(tee "$W/gpu_subjects.log") 2>&1
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader || true
"$PY" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, torch.version.cuda)'
"$PY" -c 'import triton; print("triton", triton.__version__)' || echo "triton: not installed"

echo "== build: the Python package and the adapter's stream test (gpu preset, sm_90) =="
status=0
build() {  # build TARGETS...: the gpu preset, this interpreter
  env OUT="$W/build" BUILD_DIR="$BUILD" ARCHS="${ARCHS:-90}" TARGETS="$*" EXTRA_CMAKE_ARGS="-DPython_EXECUTABLE=$PY" \
    timeout -k 5 240 scripts/gpu_run.sh build
}
if [ -n "${SKIP_BUILD:-}" ]; then
  echo "gpu_subjects: SKIP_BUILD set: no build, no stream test"
elif build fuseproof_python torch_bias_gelu_tanh_stream_test; then
  timeout -k 5 60 ctest --test-dir "$BUILD" -R Cuda_TorchAdapter --output-on-failure > "$W/stream_test.log" 2>&1 ||
    status=1
  tail -n 8 "$W/stream_test.log"
elif build fuseproof_python; then
  echo "gpu_subjects: the stream test did not build (libtorch without CUDA?); see subjects/build/gpu_build.log"
  status=1
else
  echo "gpu_subjects: build failed (see subjects/build/gpu_build.log)"
  exit 2
fi

echo "== the four built-in subjects x two dtypes, whole 2^32 domain, eight audits in parallel =="
# One process per subject and dtype: a subject with many mismatches spends its time in the engine's single-threaded
# comparison loop, so the dtypes run side by side.
export PYTHONPATH=$PWD/$BUILD/python${PYTHONPATH:+:$PYTHONPATH}
export FUSEPROOF_GOLDEN_DIR=${FUSEPROOF_GOLDEN_DIR:-$PWD/golden}
export FUSEPROOF_GOLDEN_BUILD_DIR=${FUSEPROOF_GOLDEN_BUILD_DIR:-$PWD/$BUILD/golden}
subjects=(eager torch-compile torch-compile-emulated triton)
pids=()
for s in "${subjects[@]}"; do
  for d in bf16 fp16; do
    (
      t0=$SECONDS
      timeout -k 10 "$SUBJECT_TIMEOUT" "$PY" -m fuseproof audit --subject "$s" --backend "$BACKEND" --dtype "$d" \
        --domain-biases "$DOMAIN_BIASES" --stop-after 0 $SHAPES --call-timeout 300 \
        --report "$W/subject_$s.$d.md" --json "$W/subject_$s.$d.json" > "$W/subject_$s.$d.log" 2>&1
      rc=$?
      echo "$rc $((SECONDS - t0))" > "$W/subject_$s.$d.status"
      echo "gpu_subjects: $s $d exit $rc in $((SECONDS - t0)) s"
    ) &
    pids+=($!)
  done
done
for p in "${pids[@]}"; do wait "$p"; done
for s in "${subjects[@]}"; do
  for d in bf16 fp16; do
    read -r rc secs < "$W/subject_$s.$d.status"
    # 0 pass, 1 fail (a finding, not an error of this script), 3 unavailable; anything else did not finish.
    case "$rc" in 0|1|3) ;; *) status=1; tail -n 20 "$W/subject_$s.$d.log" ;; esac
  done
done
"$PY" scripts/subjects_table.py "$W" > "$OUT/subjects_table.md"
cp "$OUT/subjects_table.md" "$W/"
cat "$OUT/subjects_table.md"
exit $status
