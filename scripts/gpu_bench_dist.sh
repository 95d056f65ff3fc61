#!/usr/bin/env bash
# gpu_bench_dist.sh: on the H200, after the lead's `gpu` preset build (build-gpu/, default targets: it needs
# bin/fuseproof and lib/peers/libseed_peer_cuda.so, target fuseproof_peer_seed_cuda): the distribution benchmark
# (docs/PERFORMANCE.md) in ONE `fuseproof bench` process, then the seed peer through the full audit battery. Builds
# nothing.
#
#   [MATHS=auto,direct,table-bulk,table-range-bulk] [TIMING=alternate|blocks|after-gemm] [PDL=on|off] [PEER_AUDIT=1] \
#     scripts/gpu_bench_dist.sh OUTDIR   # 3-4 minutes on an H200; step limits 90+300+240 s
#
# 1. e2e capture (~10 s): FUSEPROOF_CAPTURE_FFN=OUTDIR/ffn_capture fuseproof e2e run --config default --device cuda
#    --modes high: the first FFN site's fused-op inputs (x = the NVFP4 fc_in GEMM output, and its bias), the `e2e`
#    distribution. If it fails, the bench runs without e2e (it says so).
# 2. bench: shapes 75,600 x 13,824 (wan720p81f), 32,760 x 13,824, 32,760 x 5,120, 4,096 x 13,824; bf16 and fp16;
#    every built-in distribution (normal0.25, normal1, normal4, normal16, uniform16, e2e); the built-in kernel as
#    shipped (--maths auto: what kAuto picks, named in each row) and every explicit math (the evidence kAuto's
#    policy needs: it picks by the worst case over distributions), 16-byte vectors, the seed peer (--plugin), eager
#    and same-run copy; 31 timed reps, fused and copy alternating, each after an untimed GEMM as in the model
#    (TIMING, default after-gemm: --timing of `fuseproof bench`; PDL: its --pdl), 3
#    warm-up, graphs of 10 launches x 5 replays at 4,096 rows. Every timed output is compared with eager bit for bit.
#    -> bench.json, bench.md (scripts/perf_table.py: worst case per shape x dtype first), bench.txt
# 3. the peer's resource report (registers, spills per architecture in the .so) -> peer_resource_usage.txt
# 4. fuseproof audit --plugin lib/peers/libseed_peer_cuda.so --backend cuda (every class, both dtypes, the reference
#    self-audit with its 2^32-pair digests) -> audit_peer.md, audit_peer.json, audit_peer.txt
# Exit: 0 when the bench ran with every row exact and the peer audit passed; 1 otherwise; 2 setup error.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT=${1:?usage: scripts/gpu_bench_dist.sh OUTDIR}
BUILD_DIR=${BUILD_DIR:-build-gpu}
mkdir -p "$OUT"
log() { echo "gpu_bench_dist: $*" >&2; }
bin="$BUILD_DIR/bin/fuseproof"
peer="$BUILD_DIR/lib/peers/libseed_peer_cuda.so"
[ -x "$bin" ] || { log "no $bin: build the gpu preset first (cmake --preset gpu && cmake --build $BUILD_DIR -j)"; exit 2; }
[ -f "$peer" ] || { log "no $peer: build target fuseproof_peer_seed_cuda (part of the default build)"; exit 2; }
export FUSEPROOF_GOLDEN_DIR=${FUSEPROOF_GOLDEN_DIR:-$PWD/golden}
export FUSEPROOF_GOLDEN_BUILD_DIR=${FUSEPROOF_GOLDEN_BUILD_DIR:-$BUILD_DIR/golden}
nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.max.sm,clocks.mem,power.limit \
  --format=csv > "$OUT/gpu.csv" 2>&1 || true
status=0
t_all=$SECONDS

# --- 1. The e2e pipeline's FFN pre-activations.
t0=$SECONDS
cap="$OUT/ffn_capture"
FUSEPROOF_CAPTURE_FFN="$cap" timeout -k 5 90 "$bin" e2e run --config default --device cuda --modes high \
  --formats rgb24 --out "$OUT/e2e_run" > "$OUT/e2e_capture.txt" 2>&1
log "e2e capture: exit $? in $((SECONDS - t0)) s"
rm -rf "$OUT/e2e_run"  # the frames are not needed here
e2e_args=()
if [ -f "$cap/ffn_capture.json" ]; then e2e_args=(--e2e-capture "$cap"); else log "no capture: e2e left out"; fi

# --- 2. The benchmark, one process.
t0=$SECONDS
timeout -k 5 300 "$bin" bench --backend cuda --shapes wan720p81f,32760x13824,32760x5120,4096x13824 --dtypes bf16,fp16 \
  --vectors 16 --maths "${MATHS:-auto,direct,table-bulk,table-range-bulk}" --plugin "$peer" "${e2e_args[@]}" --reps 31 --timing "${TIMING:-after-gemm}" --pdl "${PDL:-on}" --warmup 3 --graph-launches 10 \
  --graph-reps 5 --json "$OUT/bench.json" > "$OUT/bench.txt" 2>&1
rc=$?
log "bench: exit $rc in $((SECONDS - t0)) s"
[ "$rc" -eq 0 ] || status=1
if [ -s "$OUT/bench.json" ]; then
  python3 scripts/perf_table.py "$OUT/bench.json" > "$OUT/bench.md" || log "perf_table.py failed: no bench.md"
fi
sed -n '/^Worst case over distributions/,/^$/p' "$OUT/bench.txt"

# --- 3. The peer's resource report.
cuobjdump="$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)"
[ -x "$cuobjdump" ] && "$cuobjdump" --dump-resource-usage "$peer" > "$OUT/peer_resource_usage.txt" 2>&1

# --- 4. The peer through the full battery.
[ "${PEER_AUDIT:-1}" = 1 ] || { log "peer audit skipped (PEER_AUDIT=0); total $((SECONDS - t_all)) s, exit $status"; exit "$status"; }
t0=$SECONDS
timeout -k 5 240 "$bin" audit --op bias_gelu_tanh --plugin "$peer" --backend cuda --dtype all \
  --report "$OUT/audit_peer.md" --json "$OUT/audit_peer.json" > "$OUT/audit_peer.txt" 2>&1
rc=$?
log "peer audit: exit $rc in $((SECONDS - t0)) s"
[ "$rc" -eq 0 ] || status=1
tail -n 25 "$OUT/audit_peer.txt"
log "total $((SECONDS - t_all)) s, exit $status"
exit "$status"
