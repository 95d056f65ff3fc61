#!/usr/bin/env bash
# gpu_family.sh: the op family on a CUDA machine, in bounded steps; everything it writes goes into OUT/family.tar.gz.
#   OUT=<dir> BUDGET=480 scripts/gpu_family.sh [steps...]   (default: build audit+mutants)
# On an H200 (docs/GPU_RUNS.md): build ~50 s; one production-envelope audit ~175 s alone, five side by side ~400 s (the
# domain class is CPU-bound: 16 s per dtype alone, 155 s with eight audits beside it). Two calls fit a session:
#   scripts/gpu_family.sh build audit+mutants            then      scripts/gpu_family.sh audit_fp32+subjects
# with AUDIT_FP32_ARGS="--max-width 16384" DOMAIN_BIASES=4096 for the second. BUDGET bounds every step; keep it
# 60 s under the call's limit for the archive.
# Steps joined by "+" run side by side. Each step runs under `timeout` and starts only while the budget leaves it time:
#   build       the gpu preset for sm_90: fuseproof, fuseproof-audit, plugins, mutants, the Python module
#   capture     (golden/sm_90 has it; for a new capture kernel) capture_golden.py --add-ops --refresh-ex2-points over a
#               copy of golden/sm_90: the ex2 arguments of expf and erff and the device's ex2 of each; the new
#               ex2_points.tar.xz and provenance.json replace golden/sm_90's on this machine (configured again to
#               unpack them) and come back in the archive (family/golden_sm_90/)
#   audit       every op's built-in CUDA kernel, eager contract (AUDIT_OPS picks; AUDIT_OPS="gated_residual modulate"
#               for the 3-input ops), and
#   audit_fp32  every fp32-contract kernel, audit_fma every fma-contract kernel (gated_residual, modulate)
#               (AUDIT_FP32_ARGS: more options for both): every class at the production envelope
#               (widths to 65,536, the default shapes with one call above 2^31 elements, the whole 2^32 domain),
#               both dtypes, one process each
#   mutants     every CUDA mutant (bias_gelu_tanh's and the family's) on gpu_audit.sh's budget scope, the kill check
#               (each family mutant killed by `extreme` unless check_cuda_mutants.py names its class), and the
#               family's controls (with gated_residual's gate_y_swapped, still exact) on the same scope
#   diag        one small Python subject audit under faulthandler, then cuda-gdb (where the package crashes)
#   calls       the classes that call a kernel as a model does (history, batch, repeat, streams, graph; NEW_CLASSES
#               picks) on every built-in CUDA kernel, eager and fp32, one class per process, both dtypes, each timed
#   calls_mutants  the CUDA mutants of those classes (static_workspace, per_call_malloc, first_call_vector,
#               first_dtype_table, row_count_path) and silu_and_mul's control, every class on a light scope, each
#               checked against the class that must kill it (check_cuda_mutants.py --subset)
#   pycalls     the Python subjects of silu_and_mul (eager, torch-cuda-graph, torch-compile-reduce-overhead; PYCALL_SUBJECTS)
#               and the two callables that only streams and graph see (property_tests/python/cpu_subjects.py), one
#               class per process (PYCALL_CLASSES), both dtypes, each timed
#   sanitize_calls  compute-sanitizer memcheck over the streams and graph classes of DEFAULT_OP's built-in, bf16
#   default_one the default audit of one built-in kernel alone (DEFAULT_OP, silu_and_mul), timed; DEFAULT_ARGS (--profile)
#   subjects    the Python subjects of every op: eager, torch-compile and triton on the eager contract, torch-compile
#               on the fp32 contract of the *_and_mul ops; the domain class over all 2^32 pairs, --stop-after 0
#               (exact counts, ULP and correctly rounded histograms); SUBJECT_OPS, SUBJECTS, SUBJECT_JOBS (12)
#   dit         the DiT ops (gated_residual, modulate; docs/OPS.md), after build, in one call (BUDGET=540):
#               1. capture_golden.py --add-records --add-stages over a copy of golden/sm_90 (records.tar.xz: eager's
#                  outputs on the extreme and random triples; digests.json <op>.stage<k>: every stage pair of
#                  `fuseproof stages`); records.tar.xz, digests.json and provenance.json replace golden/sm_90's here
#                  (configured again to unpack) and come back in family/golden_sm_90/
#               2. fuseproof eval on every captured record, both ops and dtypes: every output bit compared (cmp)
#               3. side by side, DIT_JOBS (8) at a time, each under its own limit: the built-in CUDA kernels of both
#                  ops, eager and fma contracts (DIT_AUDIT_ARGS); the CUDA mutants cuda_gated_residual_<bug> and
#                  cuda_modulate_<bug> (DIT_MUTANT_SCOPE; check_cuda_mutants.py --subset) and the controls, the
#                  false-alarm gate_y_swapped among them, which must pass; the Python subjects of both ops (eager and
#                  triton on eager, triton-fma on fma, which must pass; triton-fp-fusion on eager, which must fail;
#                  torch-cuda-graph, torch-compile on eager and fma, torch-compile-reduce-overhead measured, not
#                  counted; DIT_PY_ARGS)
#               DRY_RUN=1 prints the commands of the step instead of running them.
#   nightly     scripts/nightly_e2e.sh (FUSEPROOF_GIT_COMMIT: the commit); without the DiT golden file, its candidate
#               is put in place on that machine and the nightly runs again, which must pass; reports (no frames) and
#               the candidate in family/nightly/
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:?OUT must name the folder that comes back}
BUDGET=${BUDGET:-480}
BUILD=${BUILD_DIR:-build-gpu}
# For a smoke test without a GPU: BUILD_DIR=build BACKEND=emulated DOMAIN_BIASES=16 ... subjects
BACKEND=${BACKEND:-cuda}
DOMAIN_BIASES=${DOMAIN_BIASES:-65536}
W=$OUT/family
mkdir -p "$W"
start=$SECONDS
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(build audit+mutants)
FAMILY_OPS=(bias_gelu_erf silu_and_mul gelu_tanh_and_mul gelu_and_mul bias_gelu_tanh)
PACKED_OPS=(silu_and_mul gelu_tanh_and_mul gelu_and_mul)
# The 3-input ops (docs/OPS.md, The 3-input ops): built-in CUDA kernels under eager (audit, with AUDIT_OPS) and fma
# (audit_fma), controls.
DIT_OPS=(gated_residual modulate)
PY=${PY:-$(command -v python3)}
pack() {
  # Whatever a step left running (an audit past its timeout) goes first; then one archive, as at most 8 files come
  # back (gzip: xz of a busy machine's logs once ran past the call's limit, and nothing came back).
  # (not in a dry run: on a shared machine these patterns match other people's audits)
  if [ -z "${DRY_RUN:-}" ]; then
    pkill -KILL -f "$BUILD/bin/fuseproof-audit" 2>/dev/null
    pkill -KILL -f "python3 -m fuseproof" 2>/dev/null
  fi
  tar -C "$OUT" -czf "$OUT/family.tar.gz" family 2>/dev/null && rm -rf "$W"
  echo "gpu_family: packed $OUT/family.tar.gz after $((SECONDS - start)) s"
}
trap pack EXIT
exec > >(tee -a "$W/gpu_family.log") 2>&1
left() { echo $((BUDGET - (SECONDS - start))); }
need() {  # need NAME SECONDS: true when the budget leaves the step that long
  if [ "$(left)" -lt "$2" ]; then
    echo "gpu_family: skipping $1: $(left) s left, needs $2"
    return 1
  fi
}
export FUSEPROOF_GOLDEN_DIR=$PWD/golden
export FUSEPROOF_GOLDEN_BUILD_DIR=$PWD/$BUILD/golden
AUDIT=$BUILD/bin/fuseproof-audit
nvidia-smi --query-gpu=name,driver_version,compute_cap,memory.total --format=csv,noheader > "$W/gpu.txt" 2>&1
cat "$W/gpu.txt"

build() {
  env OUT="$W/build" BUILD_DIR="$BUILD" ARCHS=90 TARGETS="fuseproof fuseproof_audit_all fuseproof_python" \
    EXTRA_CMAKE_ARGS="-DPython_EXECUTABLE=$PY" timeout -k 5 "$(($(left) - 20))" scripts/gpu_run.sh build
}

capture() {
  local g=$W/capture
  mkdir -p "$g" && cp -r golden/sm_90 "$g/"
  "$BUILD/bin/fuseproof" ops --json > "$W/ops.json" || return 1
  timeout -k 5 240 "$PY" scripts/capture_golden.py --out "$g" --add-ops --refresh-ex2-points --spec "$W/ops.json" \
    > "$W/capture.log" 2>&1
  local rc=$?
  tail -n 40 "$W/capture.log"
  [ $rc -eq 0 ] || return $rc
  mkdir -p "$W/golden_sm_90"
  cp "$g/sm_90/ex2_points.tar.xz" "$g/sm_90/provenance.json" "$W/golden_sm_90/"
  cp "$g/sm_90/ex2_points.tar.xz" "$g/sm_90/provenance.json" golden/sm_90/
  rm -rf "$g"
  # The new points are unpacked into the build tree by configuring again (cmake/golden.cmake).
  cmake "$BUILD" > "$W/reconfigure.log" 2>&1 || { tail -n 20 "$W/reconfigure.log"; return 1; }
  echo "gpu_family: ex2 points captured again and unpacked into $BUILD/golden"
}

audit() {  # audit eager|fp32: every op's built-in CUDA kernel of that contract, side by side
  local pids=() t0=$SECONDS names=()
  if [ "$1" = eager ]; then
    for op in ${AUDIT_OPS:-${FAMILY_OPS[@]}}; do
      names+=("$op")
      timeout -k 10 "$(($(left) - 10))" "$AUDIT" audit --op "$op" --backend cuda --dtype all --no-reference \
        --report "$W/audit_$op.md" --json "$W/audit_$op.json" > "$W/audit_$op.log" 2>&1 &
      pids+=("$!")
    done
  else
    # fp32: the packed ops' kernels; fma: the 3-input ops' (lib<op>_<contract>_cuda.so, the contract from the plugin)
    local ops=("${PACKED_OPS[@]}")
    [ "$1" = fma ] && ops=("${DIT_OPS[@]}")
    for op in "${ops[@]}"; do
      names+=("${op}_$1")
      timeout -k 10 "$(($(left) - 10))" "$AUDIT" audit --backend cuda --dtype all --no-reference ${AUDIT_FP32_ARGS:-} \
        --plugin "$BUILD/lib/plugins/lib${op}_$1_cuda.so" \
        --report "$W/audit_${op}_$1.md" --json "$W/audit_${op}_$1.json" > "$W/audit_${op}_$1.log" 2>&1 &
      pids+=("$!")
    done
  fi
  local bad=0 i
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}"
    local rc=$?
    echo "gpu_family: audit ${names[$i]} exit $rc after $((SECONDS - t0)) s"
    grep -E "^verdict" "$W/audit_${names[$i]}.log" | tail -n 1
    [ $rc -eq 0 ] || bad=1
  done
  return $bad
}

# gpu_audit.sh's budget scope: each mutant stops at its first failing class.
MUTANT_SCOPE=(--domain-biases 2048 --max-width 16384 --no-default-shapes --shapes 65537x64,155345x13824
              --call-timeout 10 --first-fail)
mutants() {
  local t0=$SECONDS rc
  timeout -k 5 "$(($(left) - 60))" "$AUDIT" audit --backend cuda --dtype all "${MUTANT_SCOPE[@]}" \
    --mutants "$BUILD/lib/mutants/cuda" --mutant-timeout 120 \
    --report "$W/mutation_cuda.md" --json "$W/mutation_cuda.json" > "$W/mutation_cuda.log" 2>&1
  rc=$?
  echo "gpu_family: mutation run exit $rc in $((SECONDS - t0)) s"
  "$PY" scripts/check_cuda_mutants.py "$W/mutation_cuda.json" --family || rc=1
  # Each op's unmutated base, and the false-alarm check (gate and y swapped: still exact), which must pass.
  for op in "${FAMILY_OPS[@]::4}" "${DIT_OPS[@]}" gated_residual_gate_y_swapped; do
    need "control $op" 130 || { rc=1; break; }
    timeout -k 5 120 "$AUDIT" audit --backend cuda --dtype all "${MUTANT_SCOPE[@]}" --no-reference \
      --plugin "$BUILD/lib/plugins/libcontrol_cuda_$op.so" --json "$W/control_cuda_$op.json" \
      > "$W/control_cuda_$op.log" 2>&1
    local c=$?
    echo "gpu_family: control $op exit $c"
    [ $c -eq 0 ] || rc=1
  done
  return $rc
}

# pooled BASE MAX CMD...: CMD in the background, output in BASE.log, "exit seconds" in BASE.status; appends its pid to
# the caller's `pids` and returns once fewer than MAX jobs run (a bare `wait` would also wait for the log's tee).
pooled() {
  local base=$1 max=$2
  shift 2
  ( t=$SECONDS; "$@" > "$base.log" 2>&1; echo "$? $((SECONDS - t))" > "$base.status" ) &
  pids+=($!)
  while [ "$(jobs -rp | wc -l)" -ge "$max" ]; do wait -n "${pids[@]}" 2>/dev/null; done
}

subjects() {
  export PYTHONPATH=$PWD/$BUILD/python${PYTHONPATH:+:$PYTHONPATH}
  local ops=(${SUBJECT_OPS:-${FAMILY_OPS[@]}}) subs=(${SUBJECTS:-eager torch-compile triton}) jobs=() t0=$SECONDS
  local op s c dt j n
  for op in "${ops[@]}"; do
    for s in "${subs[@]}"; do jobs+=("$op:$s:eager"); done
    [[ " ${PACKED_OPS[*]} " == *" $op "* ]] && [[ " ${subs[*]} " == *" torch-compile "* ]] && jobs+=("$op:torch-compile:fp32")
  done
  local d=$W/subjects
  mkdir -p "$d"
  local pids=()
  for j in "${jobs[@]}"; do
    IFS=: read -r op s c <<< "$j"
    for dt in bf16 fp16; do
      n="${op}.${s}.${c}.${dt}"
      pooled "$d/$n" "${SUBJECT_JOBS:-12}" timeout -k 10 "$(($(left) - 15))" "$PY" -X faulthandler -m fuseproof audit \
        --subject "$s" --op "$op" --contract "$c" --backend "$BACKEND" --dtype "$dt" --only domain --stop-after 0 \
        --domain-biases "$DOMAIN_BIASES" --report "$d/$n.md" --json "$d/$n.json"
    done
  done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  echo "gpu_family: ${#jobs[@]} subject audits x 2 dtypes in $((SECONDS - t0)) s"
  for f in "$d"/*.status; do printf '%-50s %s\n' "$(basename "$f" .status)" "$(cat "$f")"; done
}

diag() {  # one small Python subject audit, under faulthandler and then cuda-gdb: where a crash of the package is
  export PYTHONPATH=$PWD/$BUILD/python${PYTHONPATH:+:$PYTHONPATH}
  local d=$W/diag a=(-m fuseproof audit --subject eager --op silu_and_mul --backend "$BACKEND" --dtype bf16
                     --only domain --stop-after 0 --domain-biases 256 --json "$W/diag/diag.json")
  mkdir -p "$d"
  local so
  so=$(ls "$BUILD"/python/fuseproof/_fuseproof*.so)
  { readelf -d "$so" | grep NEEDED
    echo "exported libstdc++ symbols: $(nm -D --defined-only "$so" | grep -c 'St6locale')"
    echo "libstdc++.so of the compiler: $(${CXX:-g++} -print-file-name=libstdc++.so)"; } > "$d/module.txt" 2>&1
  cat "$d/module.txt"
  "$PY" -c "import fuseproof, sys; print(fuseproof.__file__, sys.version)" > "$d/import.log" 2>&1; echo "import: $?"
  "$PY" -c "import torch, fuseproof; print(torch.__version__)" >> "$d/import.log" 2>&1; echo "import with torch: $?"
  "$PY" -X faulthandler "${a[@]}" > "$d/faulthandler.log" 2>&1; echo "subject audit: $?"
  tail -n 30 "$d/faulthandler.log"
  if command -v cuda-gdb > /dev/null; then
    timeout -k 5 120 cuda-gdb -batch -ex "set pagination off" -ex run -ex bt -ex "info sharedlibrary" \
      --args "$PY" "${a[@]}" > "$d/gdb.log" 2>&1
    grep -E -A 30 "SIGSEGV|signal" "$d/gdb.log" | head -n 60
  fi
}

# The classes that call a kernel the way a model does (docs/AUDIT.md, Calls as models make them): every built-in CUDA
# kernel of every op and contract, one class per process (--only), both dtypes, each timed; NEW_CLASSES picks.
calls() {
  local rc=0 k cls t0
  local kernels=()
  for op in "${FAMILY_OPS[@]}"; do kernels+=("$op:--op $op"); done
  for op in "${PACKED_OPS[@]}"; do kernels+=("${op}_fp32:--plugin $BUILD/lib/plugins/lib${op}_fp32_cuda.so"); done
  for k in "${kernels[@]}"; do
    for cls in ${NEW_CLASSES:-history batch repeat streams graph}; do
      need "calls ${k%%:*} $cls" 40 || return 1  # unbounded, these loops ran past the call's limit
      t0=$SECONDS
      # shellcheck disable=SC2086
      timeout -k 5 120 "$AUDIT" audit ${k#*:} --backend cuda --dtype all --no-reference --only "$cls" \
        --json "$W/calls_${k%%:*}_$cls.json" > "$W/calls_${k%%:*}_$cls.log" 2>&1
      local c=$?
      echo "gpu_family: ${k%%:*} --only $cls exit $c in $((SECONDS - t0)) s"
      [ $c -eq 0 ] || rc=1
    done
  done
  return $rc
}

# The calls-classes' CUDA mutants on a light scope, every class (no --first-fail: each class's status is in the JSON).
CALLS_SCOPE=(--domain-biases 64 --max-width 2048 --no-default-shapes --shapes 65537x64 --call-timeout 10)
calls_mutants() {
  local d=$W/calls_mutants t0=$SECONDS rc
  mkdir -p "$d/lib"
  for m in static_workspace per_call_malloc first_call_vector first_dtype_table row_count_path; do
    ln -sf "$PWD/$BUILD/lib/mutants/cuda/libcuda_silu_and_mul_$m.so" "$d/lib/"
  done
  timeout -k 5 "$(($(left) - 40))" "$AUDIT" audit --backend cuda --dtype all "${CALLS_SCOPE[@]}" \
    --mutants "$d/lib" --mutant-timeout 100 --report "$d/mutation.md" --json "$d/mutation.json" > "$d/mutation.log" 2>&1
  rc=$?
  echo "gpu_family: calls mutants exit $rc in $((SECONDS - t0)) s"
  "$PY" scripts/check_cuda_mutants.py "$d/mutation.json" --subset || rc=1
  need "calls control" 60 || return 1
  timeout -k 5 100 "$AUDIT" audit --backend cuda --dtype all "${CALLS_SCOPE[@]}" --no-reference \
    --plugin "$BUILD/lib/plugins/libcontrol_cuda_silu_and_mul.so" --json "$d/control.json" > "$d/control.log" 2>&1
  local c=$?
  echo "gpu_family: calls control exit $c in $((SECONDS - t0)) s"
  [ $c -eq 0 ] || rc=1
  return $rc
}

# Python subjects under the calls classes: one process per subject and class, PYCALL_JOBS (4) at a time.
pycalls() {
  export PYTHONPATH=$PWD/$BUILD/python:$PWD/property_tests/python${PYTHONPATH:+:$PYTHONPATH}
  local d=$W/pycalls t0=$SECONDS s cls n pids=()
  mkdir -p "$d"
  local subs=(${PYCALL_SUBJECTS:-eager torch-cuda-graph torch-compile-reduce-overhead}
              callable:cpu_subjects:silu_and_mul_static_workspace callable:cpu_subjects:silu_and_mul_host_sync)
  for s in "${subs[@]}"; do
    for cls in ${PYCALL_CLASSES:-streams graph history batch repeat}; do
      need "pycalls $s $cls" 45 || break 2
      n="${s##*:}.$cls"
      local who=(--subject "$s" --op silu_and_mul)
      [[ $s == callable:* ]] && who=(--callable "${s#callable:}" --op silu_and_mul)
      # Inductor's arithmetic is not eager's (docs/SUBJECTS.md); gelu_tanh_and_mul's passes the fp32 contract, so
      # there a failure is the graphs' or the streams', not the arithmetic's.
      [[ $s == torch-compile-reduce-overhead ]] && who=(--subject "$s" --op gelu_tanh_and_mul --contract fp32)
      pooled "$d/$n" "${PYCALL_JOBS:-4}" timeout -k 5 "$(( $(left) < 150 ? $(left) - 10 : 150 ))" "$PY" -m fuseproof \
        audit "${who[@]}" --backend cuda --dtype all --only "$cls" --json "$d/$n.json"
    done
  done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  echo "gpu_family: pycalls in $((SECONDS - t0)) s"
  for f in "$d"/*.status; do printf '%-60s %s\n' "$(basename "$f" .status)" "$(cat "$f")"; done
}

# compute-sanitizer memcheck over the streams and graph classes of one built-in kernel (bf16, in one process): the
# runner's own streams, events and graph calls, and the kernel's accesses under them.
sanitize_calls() {
  local cs cls t0 rc=0 op=${DEFAULT_OP:-silu_and_mul}
  cs=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  for cls in streams graph; do
    need "sanitize $cls" 60 || return 1
    t0=$SECONDS
    timeout -k 5 "$(( $(left) < 200 ? $(left) - 10 : 200 ))" "$cs" --tool memcheck --error-exitcode 99 "$AUDIT" audit \
      --op "$op" --backend cuda --dtype bf16 --no-reference --no-isolation --only "$cls" \
      > "$W/memcheck_$cls.log" 2>&1
    local c=$?
    echo "gpu_family: memcheck $op --only $cls exit $c in $((SECONDS - t0)) s"
    grep -E "ERROR SUMMARY|^verdict" "$W/memcheck_$cls.log" | tail -n 2
    [ $c -eq 0 ] || rc=1
  done
  return $rc
}

# The default audit (every class, the production envelope) of one built-in kernel alone, timed: DEFAULT_OP.
default_one() {
  local op=${DEFAULT_OP:-silu_and_mul} t0=$SECONDS
  # The audit a user runs: every default (the reference self-audit and --lanes 2 included).
  timeout -k 10 "$(($(left) - 10))" "$AUDIT" audit --op "$op" ${DEFAULT_ARGS:-} \
    --report "$W/default_$op.md" --json "$W/default_$op.json" > "$W/default_$op.log" 2>&1
  local rc=$?
  echo "gpu_family: default audit of $op alone: exit $rc in $((SECONDS - t0)) s"
  grep -E "^verdict" "$W/default_$op.log" | tail -n 1
  return $rc
}

# The DiT ops (DIT_OPS above): capture, eval, kernels, mutants and Python subjects in one step.
# gpu_audit.sh's budget scope for widths and shapes (one call above 2^31 elements); the other classes at their defaults.
DIT_AUDIT_ARGS=(${DIT_AUDIT_ARGS:---max-width 16384 --no-default-shapes --shapes 65537x64,155345x13824 --call-timeout 30})
# Mutants, controls and Python subjects: the stages class on a 256-value subset of each stage's second operand (the
# built-in kernels enumerate every stage whole; 8.4-8.6 G pairs a dtype through a Python callable ran past 200 s with
# eight jobs side by side), and each mutant stops at its first failing class.
DIT_MUTANT_SCOPE=(${DIT_MUTANT_SCOPE:---max-width 4096 --no-default-shapes --shapes 65536x64 --call-timeout 20 --domain-biases 256 --first-fail})
DIT_PY_ARGS=(${DIT_PY_ARGS:---max-width 2048 --no-default-shapes --shapes 65536x64 --call-timeout 30 --domain-biases 256})
# DIT_CAPTURE=0: golden/sm_90 already holds the records and stage digests (eval still runs on them);
# DIT_CONTRACTS: the built-in kernels' contracts to audit (eager fma; "none" for none); DIT_KERNEL_LIMIT: each kernel
# audit's limit (360 s; on an H100 beside 7 jobs gated_residual ran past 360 s); DIT_MUTANTS=0: no mutation
# run and no controls; DIT_PY_COUNTED, DIT_PY_KNOWN_BAD, DIT_PY_MEASURED: the Python subjects (subject:contract lists,
# "none" for none) that must pass, must fail, and are measured only.
DIT_CONTRACTS=(${DIT_CONTRACTS:-eager fma})
doit() { if [ -n "${DRY_RUN:-}" ]; then echo "+ $*"; else "$@"; fi; }

dit_capture() {  # records and stage digests of both ops, amended into a copy of golden/sm_90, then into golden/sm_90
  local g=$W/dit_capture t0=$SECONDS
  mkdir -p "$g" && cp -r golden/sm_90 "$g/"
  doit "$BUILD/bin/fuseproof" ops --json > "$W/ops.json" || return 1
  doit timeout -k 5 "$(( $(left) < 200 ? $(left) - 20 : 180 ))" "$PY" scripts/capture_golden.py --out "$g" \
    --add-records --add-stages --jobs "${DIT_CAPTURE_JOBS:-8}" --spec "$W/ops.json" --fuseproof "$BUILD/bin/fuseproof" \
    > "$W/dit_capture.log" 2>&1
  local rc=$?
  tail -n 30 "$W/dit_capture.log"
  echo "gpu_family: dit capture exit $rc in $((SECONDS - t0)) s"
  [ $rc -eq 0 ] || return $rc
  mkdir -p "$W/golden_sm_90"
  for f in records.tar.xz digests.json provenance.json; do
    doit cp "$g/sm_90/$f" "$W/golden_sm_90/" && doit cp "$g/sm_90/$f" golden/sm_90/
  done
  rm -rf "$g"
  doit cmake "$BUILD" > "$W/reconfigure.log" 2>&1 || { tail -n 20 "$W/reconfigure.log"; return 1; }
}

dit_eval() {  # fuseproof eval on every captured record: the reference reproduces eager's every output bit
  local d=$W/dit_eval rc=0 op dt
  mkdir -p "$d"
  doit tar -C "$d" -xJf golden/sm_90/records.tar.xz || return 1
  for op in "${DIT_OPS[@]}"; do
    for dt in bf16 fp16; do
      doit "$BUILD/bin/fuseproof" eval --op "$op" --dtype "$dt" --in "$d/${op}_${dt}_in.bin" --out "$d/${op}_${dt}_ref.bin" \
        > "$d/${op}_${dt}.log" 2>&1 || { echo "gpu_family: eval $op $dt failed"; cat "$d/${op}_${dt}.log"; rc=1; continue; }
      if doit cmp -s "$d/${op}_${dt}_ref.bin" "$d/${op}_${dt}_out.bin"; then
        echo "gpu_family: eval $op $dt: every output bit of eager reproduced ($(( $(stat -c %s "$d/${op}_${dt}_out.bin" 2>/dev/null || echo 0) / 2 )) records)"
      else
        rc=1
        echo "gpu_family: eval $op $dt: outputs differ from eager's; the first records:"
        doit "$PY" - "$d/${op}_${dt}_in.bin" "$d/${op}_${dt}_ref.bin" "$d/${op}_${dt}_out.bin" "$op" "$dt" <<'PYEOF'
import sys, numpy as np
i, r, o = (np.fromfile(p, dtype="<u2") for p in sys.argv[1:4])
i = i.reshape(-1, 3)
bad = np.nonzero(r != o)[0]
print("  %d of %d records differ" % (bad.size, o.size))
for k in bad[:8]:
    print("  %s %s [k=%d] in=%s => eval 0x%04X eager 0x%04X" % (sys.argv[4], sys.argv[5], k,
          ",".join("0x%04X" % v for v in i[k]), r[k], o[k]))
PYEOF
      fi
    done
  done
  rm -f "$d"/*_in.bin
  return $rc
}

# dit_job NAME LIMIT CMD...: CMD under `timeout` of LIMIT seconds, or what the budget leaves then (less 20 s), in the
# dit step's pool; not started when under 30 s are left (NAME.status says "skipped").
dit_job() {
  local name=$1 limit=$2 t
  shift 2
  t=$(( $(left) - 20 < limit ? $(left) - 20 : limit ))
  if [ "$t" -lt 30 ]; then
    echo "skipped: $(left) s left" > "$name.status"
    return 0
  fi
  pooled "$name" "${DIT_JOBS:-8}" doit timeout -k 10 "$t" "$@"
}

dit() {
  local rc=0 t0=$SECONDS pids=() d=$W/dit op s n m f
  mkdir -p "$d/mutants"
  if [ "${DIT_CAPTURE:-1}" = 1 ]; then need "dit capture" 120 && { dit_capture || rc=1; }; fi
  dit_eval || rc=1
  echo "gpu_family: dit capture and eval after $((SECONDS - t0)) s"
  export PYTHONPATH=$PWD/$BUILD/python${PYTHONPATH:+:$PYTHONPATH}
  # The built-in CUDA kernels, eager and fma, first (the longest jobs).
  local kernels=()
  for op in "${DIT_OPS[@]}"; do
    if [[ " ${DIT_CONTRACTS[*]} " == *" eager "* ]]; then
      kernels+=("kernel_$op")
      dit_job "$d/kernel_$op" "${DIT_KERNEL_LIMIT:-360}" "$AUDIT" audit --op "$op" --backend cuda --dtype all --no-reference \
        "${DIT_AUDIT_ARGS[@]}" --report "$d/kernel_$op.md" --json "$d/kernel_$op.json"
    fi
    if [[ " ${DIT_CONTRACTS[*]} " == *" fma "* ]]; then
      kernels+=("kernel_${op}_fma")
      dit_job "$d/kernel_${op}_fma" "${DIT_KERNEL_LIMIT:-360}" "$AUDIT" audit --backend cuda --dtype all --no-reference "${DIT_AUDIT_ARGS[@]}" \
        --plugin "$BUILD/lib/plugins/lib${op}_fma_cuda.so" --report "$d/kernel_${op}_fma.md" --json "$d/kernel_${op}_fma.json"
    fi
  done
  # The CUDA mutants of both ops, in one mutation run, and the controls (gate_y_swapped: still exact, must pass).
  local controls=() mut=${DIT_MUTANTS:-1}
  if [ "$mut" = 1 ]; then
    for op in "${DIT_OPS[@]}"; do
      for m in "$BUILD"/lib/mutants/cuda/libcuda_"$op"_*.so; do [ -e "$m" ] && ln -sf "$PWD/$m" "$d/mutants/"; done
    done
    dit_job "$d/mutation" 300 "$AUDIT" audit --backend cuda --dtype all "${DIT_MUTANT_SCOPE[@]}" --mutants "$d/mutants" \
      --mutant-timeout 120 --report "$d/mutation.md" --json "$d/mutation.json"
    for op in "${DIT_OPS[@]}"; do
      for m in "$BUILD"/lib/plugins/libcontrol_cuda_"$op".so "$BUILD"/lib/plugins/libcontrol_cuda_"$op"_*.so; do
        [ -e "$m" ] || continue
        n=$(basename "$m" .so)
        controls+=("$n")
        dit_job "$d/$n" 200 "$AUDIT" audit --backend cuda --dtype all "${DIT_MUTANT_SCOPE[@]}" --no-reference \
          --plugin "$m" --json "$d/$n.json"
      done
    done
  fi
  # The Python subjects (subject:contract): the counted ones must pass and go first; the measured ones (torch-cuda-graph:
  # torch refuses its replay inside the graph class's capture; torch.compile: Inductor's arithmetic) last.
  # triton-fp-fusion (the eager kernel with Triton's default enable_fp_fusion: a half fma, docs/SUBJECTS.md) must fail
  # (exit 1).
  local counted=(${DIT_PY_COUNTED:-eager:eager triton:eager triton-fma:fma}) known_bad=(${DIT_PY_KNOWN_BAD:-triton-fp-fusion:eager})
  local measured=(${DIT_PY_MEASURED:-torch-compile:eager torch-compile:fma torch-cuda-graph:eager torch-compile-reduce-overhead:eager})
  [ "${counted[*]}" = none ] && counted=()
  [ "${known_bad[*]}" = none ] && known_bad=()
  [ "${measured[*]}" = none ] && measured=()
  # The known-bad and the measured subjects stop at their first failing class (its records and ULP histogram are the
  # measurement): unbounded, torch.compile's runs went on recompiling through every class past their 240 s.
  local first_fail
  for s in "${counted[@]}" "${known_bad[@]}" "${measured[@]}"; do
    first_fail=(--first-fail)
    [[ " ${counted[*]} " == *" $s "* ]] && first_fail=()
    for op in "${DIT_OPS[@]}"; do
      n="py_${op}.${s%%:*}.${s#*:}"
      dit_job "$d/$n" 240 "$PY" -X faulthandler -m fuseproof audit --subject "${s%%:*}" --op "$op" --contract "${s#*:}" \
        --backend cuda --dtype all "${DIT_PY_ARGS[@]}" "${first_fail[@]}" --report "$d/$n.md" --json "$d/$n.json"
    done
  done
  local p
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
  echo "gpu_family: dit jobs done after $((SECONDS - t0)) s (exit seconds):"
  for f in "$d"/*.status; do
    printf '  %-60s %s\n' "$(basename "$f" .status)" "$(cat "$f")"
    [ -n "${DRY_RUN:-}" ] && [ -f "${f%.status}.log" ] && sed 's/^/      /' "${f%.status}.log"
  done
  # Verdicts: the kernels, the controls and the counted subjects pass; the mutants as check_cuda_mutants.py expects.
  local must=("${kernels[@]}")
  for op in "${DIT_OPS[@]}"; do
    for s in "${counted[@]}"; do must+=("py_${op}.${s%%:*}.${s#*:}"); done
  done
  for n in "${must[@]}" "${controls[@]}"; do
    [ -n "${DRY_RUN:-}" ] && continue
    [ "$(cut -d' ' -f1 "$d/$n.status" 2>/dev/null)" = 0 ] || { echo "gpu_family: dit $n did not pass"; rc=1; }
  done
  for op in "${DIT_OPS[@]}"; do
    for s in "${known_bad[@]}"; do
      n="py_${op}.${s%%:*}.${s#*:}"
      [ -n "${DRY_RUN:-}" ] && continue
      [ "$(cut -d' ' -f1 "$d/$n.status" 2>/dev/null)" = 1 ] || { echo "gpu_family: dit $n did not FAIL (exit 1)"; rc=1; }
    done
  done
  if [ "$mut" = 1 ]; then doit "$PY" scripts/check_cuda_mutants.py "$d/mutation.json" --subset || rc=1; fi
  echo "gpu_family: dit exit $rc after $((SECONDS - t0)) s"
  return $rc
}

# The e2e nightly (scripts/nightly_e2e.sh, its own build tree), reports without the frames in family/nightly/. When
# its one incomplete gate is the DiT golden file not yet blessed (exit 3 with a candidate from this run), the candidate
# is put in place on this machine only and the nightly runs again (--skip-build): the golden gate must then pass
# (exit 0). The candidate comes back (family/nightly/sm_90_<config>-dit.json) for review and a commit.
nightly() {
  local o=$W/nightly_run t0=$SECONDS rc rc2 cand commit=${FUSEPROOF_GIT_COMMIT:-}
  [[ "$commit" =~ ^[0-9a-f]{40}$ ]] || { echo "gpu_family: nightly needs FUSEPROOF_GIT_COMMIT (40 hex)"; return 1; }
  timeout -k 5 "$(( $(left) < 300 ? $(left) - 10 : 300 ))" scripts/nightly_e2e.sh --out "$o" --commit "$commit" \
    > "$W/nightly.log" 2>&1
  rc=$?
  echo "gpu_family: nightly exit $rc in $((SECONDS - t0)) s"
  grep -E "^nightly_e2e: " "$W/nightly.log" | tail -n 12
  cand=$(ls "$o"/dit/sm_*.json 2>/dev/null | head -n 1)
  if [ "$rc" = 3 ] && [ -n "$cand" ] && [ ! -e "golden/e2e/$(basename "$cand")" ]; then
    cp "$cand" golden/e2e/
    echo "gpu_family: candidate $(basename "$cand") put in golden/e2e on this machine; the nightly again"
    timeout -k 5 "$(( $(left) < 120 ? $(left) - 10 : 120 ))" scripts/nightly_e2e.sh --out "$o.again" --commit "$commit" \
      --skip-build > "$W/nightly_again.log" 2>&1
    rc2=$?
    echo "gpu_family: nightly with the candidate as golden: exit $rc2 in $((SECONDS - t0)) s"
    grep -E "^nightly_e2e: " "$W/nightly_again.log" | tail -n 12
    rc=$rc2
  fi
  mkdir -p "$W/nightly"
  [ -n "$cand" ] && cp "$cand" "$W/nightly/"
  for r in "$o" "$o.again"; do
    [ -d "$r" ] || continue
    tar -C "$(dirname "$r")" --exclude='*.rgb24' --exclude='*.y4m' --exclude='*.mp4' --exclude='*.raw' --exclude='*.bin' \
      -czf "$W/nightly/$(basename "$r").tar.gz" "$(basename "$r")"
    rm -rf "$r"
  done
  return "$rc"
}

run_step() {  # run_step NAME: one step; its exit status
  case "$1" in
    build) need build 150 || return 0; build || { echo "gpu_family: build failed"; return 2; } ;;
    capture) need capture 60 || return 0; capture ;;
    audit) need audit 200 || return 0; audit eager ;;
    audit_fp32) need audit_fp32 200 || return 0; audit fp32 ;;
    audit_fma) need audit_fma 200 || return 0; audit fma ;;
    mutants) need mutants 120 || return 0; mutants ;;
    subjects) need subjects 120 || return 0; subjects ;;
    diag) need diag 60 || return 0; diag ;;
    calls) need calls 60 || return 0; calls ;;
    calls_mutants) need calls_mutants 120 || return 0; calls_mutants ;;
    pycalls) need pycalls 60 || return 0; pycalls ;;
    sanitize_calls) need sanitize_calls 60 || return 0; sanitize_calls ;;
    default_one) need default_one 240 || return 0; default_one ;;
    dit) need dit 300 || return 0; dit ;;
    nightly) need nightly 120 || return 0; nightly ;;
    *) echo "gpu_family: unknown step $1"; return 2 ;;
  esac
}

# Steps joined by "+" run side by side (audit+mutants); the others one after the other.
status=0
for s in "${steps[@]}"; do
  IFS=+ read -r -a group <<< "$s"
  if [ ${#group[@]} -eq 1 ]; then
    run_step "$s"
    rc=$?
    [ "$s" = build ] && [ $rc -eq 2 ] && exit 2
    [ $rc -eq 0 ] || status=1
  else
    gp=()
    for g in "${group[@]}"; do run_step "$g" & gp+=($!); done
    for p in "${gp[@]}"; do wait "$p" || status=1; done
  fi
  echo "gpu_family: after $s: $((SECONDS - start)) s"
done
exit $status
