#!/usr/bin/env bash
# gpu_profile.sh: Nsight Compute on one launch of each GELU math named in MATHS at 32,760 x 13,824 bf16 (16-byte
# vectors) on each input distribution in DISTS: throughput, issue, shared-memory and warp-stall sections, as text into
# $OUT (ncu_<math>_<dist>.txt). Clocks are left as the card has them (--clock-control none).
#   OUT=<dir> [MATHS=table-bulk,table-range-bulk,direct] [DISTS=normal1] scripts/gpu_profile.sh   (after scripts/gpu_run.sh build)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:?OUT must name the folder for the results}
BUILD_DIR=${BUILD_DIR:-build-gpu}
mkdir -p "$OUT"
ncu="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1 || echo /usr/local/cuda/bin/ncu)"
[ -x "$ncu" ] || { echo "gpu_profile: no ncu on this machine" >&2; exit 2; }
bin="$BUILD_DIR/bin/fuseproof"
[ -x "$bin" ] || { echo "gpu_profile: no $bin: run scripts/gpu_run.sh build first" >&2; exit 2; }
MATHS=${MATHS:-table-bulk,table-range-bulk,direct}
DISTS=${DISTS:-normal1}
sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables
          --section ComputeWorkloadAnalysis --section SchedulerStats --section WarpStateStats --section Occupancy
          --section LaunchStats)
for d in ${DISTS//,/ }; do
for m in ${MATHS//,/ }; do
  # One kernel template for every math: the bench runs only the math asked for, so the name picks its launches.
  k='regex:bias_gelu_tanh_kernel'
  timeout -k 5 150 "$ncu" --clock-control none --kernel-name "$k" --launch-skip 2 --launch-count 1 "${sections[@]}" \
    "$bin" bench --shapes 32760x13824 --dtypes bf16 --vectors 16 --maths "$m" --dist "$d" --reps 3 --warmup 1 \
    --graph-launches 0 > "$OUT/ncu_${m}_${d}.txt" 2>&1
  echo "gpu_profile: $m $d exit $?"
  grep -E "DRAM Throughput|Duration|Issue Slots Busy|Achieved Occupancy|No Eligible|Bank Conflicts|Shared Load" \
    "$OUT/ncu_${m}_${d}.txt" | head -12
done
done
