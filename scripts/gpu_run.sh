#!/usr/bin/env bash
# gpu_run.sh: on a CUDA machine: configure (gpu preset), build, run the `gpu` ctest labels, write a summary and junit.
#   scripts/gpu_run.sh [all|build|test]          (default all; build and test can be separate calls on a warm machine)
# Environment: OUT (summary folder, default build-gpu), BUILD_DIR (default build-gpu), ARCHS (default "90;100;103"),
#   JOBS (default nproc), TARGETS (build only these; default everything), LABEL (ctest -L, default gpu),
#   TESTS (ctest -R regex, default all), CTEST_TIMEOUT (per test, default 300 s),
#   EXTRA_CMAKE_ARGS (appended to the configure line, e.g. "-DFUSEPROOF_CUDART=Shared").
set -euo pipefail
cd "$(dirname "$0")/.."
mode="${1:-all}"
BUILD_DIR="${BUILD_DIR:-build-gpu}"
OUT="${OUT:-$BUILD_DIR}"
ARCHS="${ARCHS:-90;100;103}"
JOBS="${JOBS:-$(nproc)}"
LABEL="${LABEL:-gpu}"
TESTS="${TESTS:-}"
CTEST_TIMEOUT="${CTEST_TIMEOUT:-300}"
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
log() { echo "gpu_run: $*" >&2; }

configure() {
  local args=(--preset gpu -B "$BUILD_DIR" -DFUSEPROOF_CUDA_ARCHITECTURES="$ARCHS")
  local torch_prefix
  torch_prefix="$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null || true)"
  if [ -n "$torch_prefix" ]; then
    args+=(-DCMAKE_PREFIX_PATH="$torch_prefix")
  else
    log "python3 has no torch: the tests against live eager will not be built"
  fi
  # No OpenSSL headers on the image: use the carried ones with the system's libcrypto.so.3.
  if [ ! -e /usr/include/openssl/evp.h ] && [ -d .deps/openssl/include ]; then
    local crypto
    crypto="$(ls /usr/lib/x86_64-linux-gnu/libcrypto.so /usr/lib/x86_64-linux-gnu/libcrypto.so.3 2>/dev/null | head -1)"
    args+=(-DOPENSSL_INCLUDE_DIR="$PWD/.deps/openssl/include" -DOPENSSL_CRYPTO_LIBRARY="$crypto")
  fi
  # shellcheck disable=SC2206
  [ -n "${EXTRA_CMAKE_ARGS:-}" ] && args+=(${EXTRA_CMAKE_ARGS})
  log "cmake ${args[*]}"
  if ! cmake "${args[@]}" > "$OUT/gpu_configure.log" 2>&1; then
    tail -n 30 "$OUT/gpu_configure.log" >&2
    log "configure failed, see $OUT/gpu_configure.log"
    exit 1
  fi
  grep -E "^-- fuseproof" "$OUT/gpu_configure.log" || true
}

build() {
  local t0=$SECONDS targets=()
  for t in ${TARGETS:-}; do targets+=(--target "$t"); done
  log "building with $JOBS jobs ${TARGETS:+(targets: $TARGETS)}"
  if ! cmake --build "$BUILD_DIR" -j "$JOBS" "${targets[@]}" > "$OUT/gpu_build.log" 2>&1; then
    grep -E "error|Error" "$OUT/gpu_build.log" | head -40 >&2
    log "build failed, see $OUT/gpu_build.log"
    exit 1
  fi
  echo "$((SECONDS - t0))" > "$OUT/gpu_build_seconds"
  log "built in $((SECONDS - t0)) s"
}

run_tests() {
  local t0=$SECONDS rc=0 filter=(-L "$LABEL")
  [ -n "$TESTS" ] && filter+=(-R "$TESTS")
  ctest --test-dir "$BUILD_DIR" "${filter[@]}" --no-tests=error --output-on-failure --timeout "$CTEST_TIMEOUT" -j 1 \
    --output-junit "$OUT/gpu_junit.xml" > "$OUT/gpu_ctest.log" 2>&1 || rc=$?
  echo "$((SECONDS - t0))" > "$OUT/gpu_test_seconds"
  tail -n 25 "$OUT/gpu_ctest.log"
  summarize
  return "$rc"
}

summarize() {
  python3 - "$OUT" <<'PY'
import os, re, subprocess, sys, xml.etree.ElementTree as ET
out = sys.argv[1]
def sh(cmd):
    try: return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=60).stdout.strip()
    except Exception as e: return f"({e})"
lines = ["# fuseproof GPU run", ""]
lines += ["| what | value |", "|---|---|"]
probes = [
    ("GPU", "nvidia-smi --query-gpu=name,compute_cap,memory.total --format=csv,noheader | head -1"),
    ("driver", "nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1"),
    ("nvcc", "nvcc --version | tail -1"),
    ("torch", "python3 -c 'import torch; print(torch.__version__, torch.version.cuda)'"),
    ("host CPU", "lscpu | grep 'Model name' | sed 's/.*: *//'"),
]
for name, cmd in probes:
    lines.append("| %s | %s |" % (name, sh(cmd)))
lines.append("| CPUs | %d |" % os.cpu_count())
for k in ("build", "test"):
    p = os.path.join(out, f"gpu_{k}_seconds")
    if os.path.exists(p): lines += [f"| {k} time | {open(p).read().strip()} s |"]
lines.append("")
junit = os.path.join(out, "gpu_junit.xml")
if not os.path.exists(junit):
    lines.append("no junit file: the tests did not run")
else:
    root = ET.parse(junit).getroot()
    cases = root.iter("testcase")
    counts = {"passed": 0, "failed": 0, "skipped": 0}
    rows, notes = [], []
    for c in cases:
        if c.find("failure") is not None or c.find("error") is not None: status = "failed"
        elif c.find("skipped") is not None: status = "skipped"
        else: status = {"run": "passed", "fail": "failed", "notrun": "skipped", "disabled": "skipped"}.get(
            c.get("status") or "run", c.get("status"))
        counts[status] = counts.get(status, 0) + 1
        rows.append(f"| {c.get('name')} | {status} | {float(c.get('time') or 0):.2f} |")
        so = c.findtext("system-out") or ""
        for l in so.splitlines():
            if re.search(r"no errors found|errors found|all 2\^32|widths|PDL|negative control|auto picks|no CUDA device|Failure", l):
                notes.append(f"    {c.get('name')}: {l.strip()}")
    lines.append(f"**{counts.get('passed',0)} passed, {counts.get('failed',0)} failed, {counts.get('skipped',0)} skipped**")
    lines += ["", "| test | status | seconds |", "|---|---|---|"] + rows
    if notes: lines += ["", "Test output (selected lines):", ""] + notes
text = "\n".join(lines) + "\n"
open(os.path.join(out, "gpu_summary.md"), "w").write(text)
print(text)
PY
}

case "$mode" in
  all) configure; build; run_tests ;;
  build) configure; build ;;
  test) run_tests ;;
  summary) summarize ;;
  *) echo "usage: scripts/gpu_run.sh [all|build|test|summary]" >&2; exit 2 ;;
esac
