#!/usr/bin/env bash
# nightly_e2e.sh: GPU nightly: build fuseproof-e2e, run the default config (lossless, high, high-eager, and lossless
# after mount/unmount) on the GPU, and gate the per-frame SHA-256 against golden/e2e/sm_<cc>.json.
# Exit status: 0 pass, 1 mismatch, 2 error, 3 no golden file for this GPU's architecture (the message names the bless step),
# 4 a golden file of another configuration or schema, or not valid JSON.
# Usage: scripts/nightly_e2e.sh [--out DIR] [--export DIR] [--config default|small] [--skip-build]
#   --export DIR  copy run.json, check.json, provenance.json, nightly.log and the lossless/high RGB24 frames to DIR
#                 (2 x 14.2 MiB for the default config), for scripts/bless_e2e.sh on a machine with FFmpeg and OpenCV.
# Environment: FUSEPROOF_E2E_CMAKE_ARGS (extra configure arguments, e.g. -DOPENSSL_ROOT_DIR=...).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT="$ROOT/out/e2e-nightly"
EXPORT=""
CONFIG="default"
SKIP_BUILD=0
BUILD="$ROOT/build-gpu-e2e"

die() { echo "nightly_e2e: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) OUT="${2:?--out needs a directory}"; shift 2 ;;
    --export) EXPORT="${2:?--export needs a directory}"; shift 2 ;;
    --config) CONFIG="${2:?--config needs small or default}"; shift 2 ;;
    --skip-build) SKIP_BUILD=1; shift ;;
    -h|--help) sed -n '2,9p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

mkdir -p "$OUT" || die "--out: cannot create '$OUT'"
LOG="$OUT/nightly.log"
: > "$LOG"
log() { echo "$*" | tee -a "$LOG"; }

export_files() {
  [[ -z "$EXPORT" ]] && return 0
  mkdir -p "$EXPORT" || { echo "nightly_e2e: --export: cannot create '$EXPORT'" >&2; return 0; }
  for f in run.json check.json provenance.json nightly.log lossless.rgb24 high.rgb24; do
    [[ -f "$OUT/$f" ]] && cp "$OUT/$f" "$EXPORT/"
  done
  return 0
}
finish() { local rc=$1; log "nightly_e2e: exit $rc"; export_files; exit "$rc"; }

# 1. The GPU's architecture, e.g. compute capability 9.0 -> sm_90.
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d ' ')
[[ -n "$cc" ]] || cc=$(python3 -c 'import torch; p = torch.cuda.get_device_capability(); print(f"{p[0]}.{p[1]}")' 2>/dev/null)
[[ "$cc" =~ ^[0-9]+\.[0-9]+$ ]] || { log "nightly_e2e: no CUDA device found (nvidia-smi and torch.cuda both failed)"; finish 2; }
ARCH="sm_${cc/./}"
GOLDEN="$ROOT/golden/e2e/$ARCH.json"
log "nightly_e2e: $ARCH, config $CONFIG, out $OUT"

# 2. Build only what the nightly needs, in its own build tree (the gpu preset, this GPU's architecture only).
if [[ $SKIP_BUILD -eq 0 ]]; then
  TORCH_PREFIX=$(python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null) ||
    { log "nightly_e2e: python3 cannot import torch (needed for CMAKE_PREFIX_PATH)"; finish 2; }
  # shellcheck disable=SC2086
  (cd "$ROOT" && cmake --preset gpu -B "$BUILD" -DCMAKE_PREFIX_PATH="$TORCH_PREFIX" \
      -DFUSEPROOF_CUDA_ARCHITECTURES="${cc/./}" -DFUSEPROOF_WITH_TESTS=OFF ${FUSEPROOF_E2E_CMAKE_ARGS:-} >> "$LOG" 2>&1 &&
   cmake --build "$BUILD" --target fuseproof-e2e -j "$(nproc)" >> "$LOG" 2>&1) ||
    { log "nightly_e2e: build failed (see $LOG)"; tail -n 30 "$LOG" >&2; finish 2; }
fi
E2E="$BUILD/bin/fuseproof-e2e"
[[ -x "$E2E" ]] || { log "nightly_e2e: '$E2E' not built"; finish 2; }

# 3. Provenance of this run.
python3 - "$OUT/provenance.json" "$ARCH" "$CONFIG" "$ROOT" <<'PY' >> "$LOG" 2>&1 || log "nightly_e2e: provenance incomplete"
import json, subprocess, sys, datetime
out, arch, config, root = sys.argv[1:5]
def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=30).stdout.strip()
    except Exception:
        return ""
try:
    import torch
    torch_version, torch_cuda = torch.__version__, torch.version.cuda
except Exception:
    torch_version, torch_cuda = "", ""
json.dump({
    "arch": arch,
    "gpu": sh("nvidia-smi --query-gpu=name --format=csv,noheader | head -n1"),
    "driver": sh("nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n1"),
    "cuda_runtime_torch": torch_cuda,
    "nvcc": sh("nvcc --version | tail -n1"),
    "torch": torch_version,
    "git_commit": sh(f"git -C {root} rev-parse HEAD"),
    "command": f"scripts/nightly_e2e.sh --config {config}",
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
}, open(out, "w"), indent=2)
PY

# 4. Run every mode on the GPU (RGB24 frames only: this machine has no FFmpeg).
"$E2E" run --config "$CONFIG" --device cuda --modes lossless,high,high-eager,lossless-after-unmount \
  --formats rgb24 --out "$OUT" 2>&1 | tee -a "$LOG"
[[ ${PIPESTATUS[0]} -eq 0 ]] || { log "nightly_e2e: pipeline run failed"; finish 2; }

# 5. Gate: the run's own gates always; the golden ones when this architecture has a golden file.
if [[ ! -f "$GOLDEN" ]]; then
  "$E2E" check --run-dir "$OUT" --json "$OUT/check.json" 2>&1 | tee -a "$LOG"
  own=${PIPESTATUS[0]}
  [[ $own -eq 0 ]] || { log "nightly_e2e: the run's own gates fail (no golden needed to see it)"; finish 1; }
  log "nightly_e2e: no golden file golden/e2e/$ARCH.json for $ARCH; bless one with:"
  log "  scripts/nightly_e2e.sh --export DIR   (here, on the $ARCH GPU), then, where FFmpeg and OpenCV are installed:"
  log "  scripts/bless_e2e.sh --run-dir DIR --arch $ARCH   (writes golden/e2e/$ARCH.json and docs/e2e/$ARCH.md)"
  finish 3
fi
"$E2E" check --run-dir "$OUT" --golden "$GOLDEN" --json "$OUT/check.json" 2>&1 | tee -a "$LOG"
rc=${PIPESTATUS[0]}
[[ $rc -eq 0 || $rc -eq 1 ]] || rc=2
finish "$rc"
