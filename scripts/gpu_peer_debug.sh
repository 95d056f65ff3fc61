#!/usr/bin/env bash
# gpu_peer_debug.sh: on the H200, the seed peer's audit through `bin/fuseproof audit` (the unified CLI, which also
# links libtorch for bench and e2e) under gdb, so that a crash of the auditor's own process prints its backtrace; then
# the same quick audit through `bin/fuseproof-audit` (no libtorch in the process) for comparison. Run 14 saw the
# unified CLI's parent die with SIGSEGV after the peer's last class, before its report was written.
#   OUT=<dir> [AUDIT_ARGS="--dtype bf16 --quick"] scripts/gpu_peer_debug.sh      (after scripts/gpu_run.sh build)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:?OUT must name the folder for the results}
BUILD_DIR=${BUILD_DIR:-build-gpu}
mkdir -p "$OUT"
peer="$BUILD_DIR/lib/peers/libseed_peer_cuda.so"
read -r -a extra <<< "${AUDIT_ARGS:---dtype bf16 --quick}"
export FUSEPROOF_GOLDEN_DIR=${FUSEPROOF_GOLDEN_DIR:-$PWD/golden}
export FUSEPROOF_GOLDEN_BUILD_DIR=${FUSEPROOF_GOLDEN_BUILD_DIR:-$BUILD_DIR/golden}
gdb="$(command -v gdb || command -v cuda-gdb || echo /usr/local/cuda/bin/cuda-gdb)"
echo "gpu_peer_debug: debugger $gdb"
timeout -k 5 200 "$gdb" -batch -ex "set pagination off" -ex "set print thread-events off" -ex run -ex "bt 40" \
  -ex "info registers rip" --args "$BUILD_DIR/bin/fuseproof" audit --op bias_gelu_tanh --plugin "$peer" \
  --backend cuda "${extra[@]}" --report "$OUT/unified.md" --json "$OUT/unified.json" > "$OUT/unified_gdb.txt" 2>&1
echo "gpu_peer_debug: unified CLI under gdb: exit $?"
grep -n -E "SIGSEGV|SIGABRT|^#[0-9]+|exited|VERDICT" "$OUT/unified_gdb.txt" | head -50
timeout -k 5 200 "$BUILD_DIR/bin/fuseproof-audit" audit --op bias_gelu_tanh --plugin "$peer" --backend cuda \
  "${extra[@]}" --report "$OUT/audit_only.md" --json "$OUT/audit_only.json" > "$OUT/audit_only.txt" 2>&1
echo "gpu_peer_debug: fuseproof-audit: exit $?"
tail -n 4 "$OUT/audit_only.txt"
ls -la "$OUT"
