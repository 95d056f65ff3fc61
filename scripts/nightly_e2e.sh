#!/usr/bin/env bash
# nightly_e2e.sh: GPU nightly: build fuseproof-e2e, run the default config (lossless, high, high-eager, and lossless
# after mount/unmount) on the GPU in bf16 and in fp16, measure high vs high-eager (and lossless vs high) through the
# comparator (`fuseproof-e2e compare`: SHA-256, PSNR and SSIM per plane and All, FFmpeg's way), the MP4 container-hash
# gate where an ffmpeg binary is present, and gate the bf16 per-frame SHA-256 against golden/e2e/sm_<cc>.json. Then the
# same for the DiT configuration (<config>-dit: blocks that modulate and gate their residuals in the activation dtype,
# those sites fused in high) in bf16 and fp16, gated high == high-eager and against golden/e2e/sm_<cc>_<config>-dit.json.
# Then the config with --fc-out-nvfp4-input (the FFN's fc_out takes NVFP4 activations: high fuses bias + GELU + NVFP4
# quantization into one call, high-eager runs eager bias + GELU then nvfp4_quant) the same way, gated against
# golden/e2e/sm_<cc>_<config>-fc-out-nvfp4.json.
# Exit status: 0 pass, 1 mismatch, 2 error, 3 incomplete (no golden file for this GPU's architecture or for the DiT
# configuration, the message names the bless step; or a mounted site fell back to eager), 4 a golden file of another
# configuration or schema, or not valid JSON.
# Usage: scripts/nightly_e2e.sh [--out DIR] [--export DIR] [--config default|small] [--skip-build] [--commit HASH]
#                               [--build-dir DIR] [--device cuda|cpu] [--dit-config NAME|none] [--dtypes bf16,fp16|bf16]
#                               [--fc-out-nvfp4 on|off]
#                               (cpu: a dry run of this script; no golden; the fp16 gates fail there by design: CPU
#                               eager fp16 GELU is libtorch's SLEEF tanhf, not CUDA's, docs/E2E.md; --dtypes bf16 leaves
#                               fp16 out, so the dry run reaches the golden steps: exit 3, no golden file for cpu)
#   --out DIR     run directories (bf16 in DIR, fp16 in DIR/fp16), check.json and check.xml (JUnit, a testcase per
#                 gate), high_vs_high_eager.json/.md, lossless_vs_high.json, fp16/high_vs_high_eager.json,
#                 provenance.json, nightly.log
#   --export DIR  copy those reports and the lossless/high/high-eager RGB24 frames (3 x 14.2 MiB for the default config)
#                 to DIR, for scripts/bless_e2e.sh on a machine with FFmpeg and OpenCV.
#   --commit HASH the commit built (40 hex; default $FUSEPROOF_GIT_COMMIT, else `git rev-parse HEAD` when that works):
#                 recorded in provenance.json; scripts/bless_e2e.sh refuses a run without it.
#   --build-dir DIR the build tree (default build-gpu-e2e; with --skip-build, one already built, e.g. build-gpu)
#   --dit-config NAME the DiT configuration run after --config (default <config>-dit, none for a *-dit --config;
#                 none: skip it), in DIR/dit
#                 (bf16) and DIR/dit/fp16: run.json, check.json/.xml, high_vs_high_eager.json, lossless_vs_high.json;
#                 without its golden file, a candidate blessed from this run when the run's gates pass and a commit is
#                 known: DIR/dit/sm_<cc>_<NAME>.json
#   --fc-out-nvfp4 on|off  (default on) run --config with --fc-out-nvfp4-input last, in DIR/fc-out-nvfp4 (bf16) and
#                 DIR/fc-out-nvfp4/fp16, the same reports and candidate as the DiT configuration's
# Environment: FUSEPROOF_E2E_CMAKE_ARGS (extra configure arguments, e.g. -DOPENSSL_ROOT_DIR=...).
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT="$ROOT/out/e2e-nightly"
EXPORT=""
CONFIG="default"
SKIP_BUILD=0
BUILD="$ROOT/build-gpu-e2e"
COMMIT="${FUSEPROOF_GIT_COMMIT:-}"
DEVICE=cuda
DIT_CONFIG=""
DTYPES="bf16,fp16"
FC_OUT_NVFP4=on

die() { echo "nightly_e2e: $*" >&2; exit 2; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --out) OUT="${2:?--out needs a directory}"; shift 2 ;;
    --export) EXPORT="${2:?--export needs a directory}"; shift 2 ;;
    --config) CONFIG="${2:?--config needs small or default}"; shift 2 ;;
    --skip-build) SKIP_BUILD=1; shift ;;
    --device) DEVICE="${2:?--device needs cuda or cpu}"; shift 2 ;;
    --commit) COMMIT="${2:?--commit needs a 40-hex commit hash}"; shift 2 ;;
    --build-dir) BUILD="${2:?--build-dir needs a directory}"; [[ "$BUILD" = /* ]] || BUILD="$ROOT/$BUILD"; shift 2 ;;
    --dtypes) DTYPES="${2:?--dtypes needs bf16,fp16 or bf16}"; shift 2 ;;
    --dit-config) DIT_CONFIG="${2:?--dit-config needs a config name or none}"; shift 2 ;;
    --fc-out-nvfp4) FC_OUT_NVFP4="${2:?--fc-out-nvfp4 needs on or off}"; shift 2 ;;
    -h|--help) sed -n '2,35p' "${BASH_SOURCE[0]}"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done

if [[ -z "$COMMIT" ]]; then
  # A copy without history answers "HEAD" or nothing: record only a real hash.
  COMMIT=$(git -C "$ROOT" rev-parse --verify -q 'HEAD^{commit}' 2>/dev/null || true)
fi
[[ -z "$COMMIT" || "$COMMIT" =~ ^[0-9a-f]{40}$ ]] || die "--commit must be a 40-hex commit hash, got '$COMMIT'"
mkdir -p "$OUT" || die "--out: cannot create '$OUT'"
LOG="$OUT/nightly.log"
: > "$LOG"
log() { echo "$*" | tee -a "$LOG"; }

export_files() {
  [[ -z "$EXPORT" ]] && return 0
  mkdir -p "$EXPORT" || { echo "nightly_e2e: --export: cannot create '$EXPORT'" >&2; return 0; }
  for f in run.json check.json check.xml provenance.json nightly.log high_vs_high_eager.json high_vs_high_eager.md \
           lossless_vs_high.json mp4_gate.txt lossless.rgb24 high.rgb24 high-eager.rgb24; do
    [[ -f "$OUT/$f" ]] && cp "$OUT/$f" "$EXPORT/"
  done
  if [[ -d "$OUT/fp16" ]]; then
    mkdir -p "$EXPORT/fp16"
    for f in run.json check.json high_vs_high_eager.json; do [[ -f "$OUT/fp16/$f" ]] && cp "$OUT/fp16/$f" "$EXPORT/fp16/"; done
  fi
  # The DiT and fc-out-nvfp4 configurations: reports and the candidate golden file (per-frame SHA-256 only; no frames).
  local d
  for d in dit dit/fp16 fc-out-nvfp4 fc-out-nvfp4/fp16; do
    [[ -d "$OUT/$d" ]] || continue
    mkdir -p "$EXPORT/$d"
    for f in run.json check.json check.xml high_vs_high_eager.json high_vs_high_eager.md lossless_vs_high.json "$OUT/$d"/sm_*.json; do
      f=${f##*/}
      [[ -f "$OUT/$d/$f" ]] && cp "$OUT/$d/$f" "$EXPORT/$d/"
    done
  done
  return 0
}
finish() { local rc=$1; log "nightly_e2e: exit $rc"; export_files; exit "$rc"; }

[[ "$DEVICE" == cuda || "$DEVICE" == cpu ]] || die "--device must be cuda or cpu, got '$DEVICE'"
[[ "$DTYPES" == bf16,fp16 || "$DTYPES" == bf16 ]] || die "--dtypes must be bf16,fp16 or bf16, got '$DTYPES'"
WITH_FP16=0; [[ "$DTYPES" == *fp16* ]] && WITH_FP16=1
# A DiT --config is its own DiT run: no second one after it.
[[ -n "$DIT_CONFIG" ]] || { [[ "$CONFIG" == *-dit ]] && DIT_CONFIG=none || DIT_CONFIG="$CONFIG-dit"; }
[[ "$DIT_CONFIG" =~ ^[a-z0-9-]+$ ]] || die "--dit-config must be a config name or none, got '$DIT_CONFIG'"
[[ "$FC_OUT_NVFP4" == on || "$FC_OUT_NVFP4" == off ]] || die "--fc-out-nvfp4 must be on or off, got '$FC_OUT_NVFP4'"
# Exit statuses combined as `e2e check` ranks them: error (2), then mismatch (1), then incomplete (3).
combine() { local a=$1 b=$2; for s in 2 1 3; do [[ $a -eq $s || $b -eq $s ]] && { echo "$s"; return; }; done; echo 0; }

# 1. The GPU's architecture, e.g. compute capability 9.0 -> sm_90.
if [[ "$DEVICE" == cpu ]]; then cc="cpu"; fi
[[ "$DEVICE" == cpu ]] || cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n1 | tr -d ' ')
[[ "$DEVICE" == cpu || -n "$cc" ]] || cc=$(python3 -c 'import torch; p = torch.cuda.get_device_capability(); print(f"{p[0]}.{p[1]}")' 2>/dev/null)
[[ "$DEVICE" == cpu ]] || [[ "$cc" =~ ^[0-9]+\.[0-9]+$ ]] || { log "nightly_e2e: no CUDA device found (nvidia-smi and torch.cuda both failed)"; finish 2; }
ARCH="sm_${cc/./}"
[[ "$DEVICE" == cpu ]] && ARCH="cpu"
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
python3 - "$OUT/provenance.json" "$ARCH" "$CONFIG" "$COMMIT" <<'PY' >> "$LOG" 2>&1 || log "nightly_e2e: provenance incomplete"
import json, subprocess, sys, datetime
out, arch, config, commit = sys.argv[1:5]
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
    "git_commit": commit or None,
    "command": f"scripts/nightly_e2e.sh --config {config}" + (f" --commit {commit}" if commit else ""),
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
}, open(out, "w"), indent=2)
PY

[[ -n "$COMMIT" ]] || log "nightly_e2e: no commit hash (pass --commit or FUSEPROOF_GIT_COMMIT): bless_e2e.sh will refuse this run"

# 4. Run every mode on the GPU (RGB24 frames: this machine may have no FFmpeg), bf16 then fp16.
"$E2E" run --config "$CONFIG" --device "$DEVICE" --modes lossless,high,high-eager,lossless-after-unmount \
  --formats rgb24 --out "$OUT" 2>&1 | tee -a "$LOG"
[[ ${PIPESTATUS[0]} -eq 0 ]] || { log "nightly_e2e: pipeline run failed"; finish 2; }
if [[ $WITH_FP16 -eq 1 ]]; then
  "$E2E" run --config "$CONFIG" --device "$DEVICE" --dtype fp16 --modes lossless,high,high-eager,lossless-after-unmount \
    --formats rgb24 --out "$OUT/fp16" 2>&1 | tee -a "$LOG"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || { log "nightly_e2e: fp16 pipeline run failed"; finish 2; }
fi

# 5. Measured, not asserted: high vs high-eager through the comparator (exit 0 identical, 1 different), and
#    lossless vs high, whose difference is the negative control (it must measure a difference: exit 1).
worst=0
"$E2E" compare --run-dir "$OUT" --baseline high --candidate high-eager --json "$OUT/high_vs_high_eager.json" \
  --markdown-file "$OUT/high_vs_high_eager.md" 2>&1 | tee -a "$LOG"
cmp_rc=${PIPESTATUS[0]}
[[ $cmp_rc -eq 0 ]] || { log "nightly_e2e: high vs high-eager measured different (exit $cmp_rc)"; worst=1; }
"$E2E" compare --run-dir "$OUT" --baseline lossless --candidate high --json "$OUT/lossless_vs_high.json" 2>&1 | tee -a "$LOG"
ctl_rc=${PIPESTATUS[0]}
[[ $ctl_rc -eq 1 ]] || { log "nightly_e2e: lossless vs high must measure a difference (exit 1), got exit $ctl_rc"; worst=1; }
if [[ $WITH_FP16 -eq 1 ]]; then
  "$E2E" compare --run-dir "$OUT/fp16" --baseline high --candidate high-eager --json "$OUT/fp16/high_vs_high_eager.json" \
    2>&1 | tee -a "$LOG"
  f16_rc=${PIPESTATUS[0]}
  [[ $f16_rc -eq 0 ]] || { log "nightly_e2e: fp16 high vs high-eager measured different (exit $f16_rc)"; worst=1; }
  "$E2E" check --run-dir "$OUT/fp16" --json "$OUT/fp16/check.json" --junit "$OUT/fp16/check.xml" 2>&1 | tee -a "$LOG"
  f16_check=${PIPESTATUS[0]}
  [[ $f16_check -eq 0 ]] || { log "nightly_e2e: the fp16 run's own gates fail (exit $f16_check)"; worst=$(combine "$worst" "$f16_check"); }
fi

# 6. The MP4 container-hash gate wherever an ffmpeg binary is present: the same frames, the same bytes.
if command -v ffmpeg >/dev/null 2>&1; then
  w=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"]["high"]; print("%dx%d" % (r["width"], r["height"]))' "$OUT/run.json")
  for m in high high-eager; do
    ffmpeg -nostdin -v error -y -f rawvideo -pix_fmt rgb24 -s "$w" -r 16 -i "$OUT/$m.rgb24" -c:v libx264rgb -qp 0 \
      -preset medium -threads 1 -fflags +bitexact -flags:v +bitexact -map_metadata -1 "$OUT/$m.mp4" >> "$LOG" 2>&1
  done
  h1=$(sha256sum "$OUT/high.mp4" | cut -d' ' -f1); h2=$(sha256sum "$OUT/high-eager.mp4" | cut -d' ' -f1)
  if [[ -n "$h1" && "$h1" == "$h2" ]]; then
    echo "PASS high.mp4 == high-eager.mp4 (container SHA-256 $h1, $(ffmpeg -version | head -n1))" | tee "$OUT/mp4_gate.txt" | tee -a "$LOG"
  else
    echo "FAIL high.mp4 $h1 vs high-eager.mp4 $h2" | tee "$OUT/mp4_gate.txt" | tee -a "$LOG"; worst=1
  fi
  rm -f "$OUT/high.mp4" "$OUT/high-eager.mp4"
else
  echo "SKIP MP4 container-hash gate: no ffmpeg binary here (scripts/bless_e2e.sh runs it where FFmpeg is)" | tee "$OUT/mp4_gate.txt" | tee -a "$LOG"
fi

# 7. Gate: the run's own gates always; the golden ones when this architecture has a golden file.
main_rc=0
if [[ ! -f "$GOLDEN" ]]; then
  "$E2E" check --run-dir "$OUT" --json "$OUT/check.json" --junit "$OUT/check.xml" 2>&1 | tee -a "$LOG"
  own=${PIPESTATUS[0]}
  if [[ $own -ne 0 ]]; then
    log "nightly_e2e: the run's own gates fail (no golden needed to see it)"; main_rc=$(combine "$own" "$worst")
  elif [[ $worst -ne 0 ]]; then
    main_rc=$worst
  else
    log "nightly_e2e: INCOMPLETE: no golden file golden/e2e/$ARCH.json for $ARCH; bless one with:"
    log "  scripts/nightly_e2e.sh --export DIR   (here, on the $ARCH GPU), then, where FFmpeg and OpenCV are installed:"
    log "  scripts/bless_e2e.sh --run-dir DIR --arch $ARCH   (writes golden/e2e/$ARCH.json and records/e2e/$ARCH.md)"
    main_rc=3
  fi
else
  "$E2E" check --run-dir "$OUT" --golden "$GOLDEN" --json "$OUT/check.json" --junit "$OUT/check.xml" 2>&1 | tee -a "$LOG"
  rc=${PIPESTATUS[0]}
  [[ $rc -le 3 ]] || rc=2
  main_rc=$(combine "$rc" "$worst")
fi
log "nightly_e2e: $CONFIG: exit $main_rc"

# 8. A further configuration (run_extra LABEL CONFIG DIR GOLDEN_NAME [run arguments]): bf16 and fp16 on this device,
#    high == high-eager measured through the comparator, lossless vs high must differ, the run's own gates, then its
#    golden file golden/e2e/GOLDEN_NAME.json; without one, INCOMPLETE with the bless command (and a candidate written
#    from this run when its gates pass on CUDA and the commit is known). Sets extra_rc.
run_extra() {
  local label=$1 config=$2 dir=$3 golden_name=$4
  shift 4
  local golden="$ROOT/golden/e2e/$golden_name.json" dt d c
  extra_rc=0
  for dt in ${DTYPES//,/ }; do
    d="$dir"; [[ $dt == fp16 ]] && d="$dir/fp16"
    "$E2E" run --config "$config" "$@" --device "$DEVICE" --dtype "$dt" \
      --modes lossless,high,high-eager,lossless-after-unmount --formats rgb24 --out "$d" 2>&1 | tee -a "$LOG"
    [[ ${PIPESTATUS[0]} -eq 0 ]] || { log "nightly_e2e: $label $dt pipeline run failed"; finish 2; }
    "$E2E" compare --run-dir "$d" --baseline high --candidate high-eager --json "$d/high_vs_high_eager.json" \
      --markdown-file "$d/high_vs_high_eager.md" 2>&1 | tee -a "$LOG"
    c=${PIPESTATUS[0]}
    [[ $c -eq 0 ]] || { log "nightly_e2e: $label $dt high vs high-eager measured different (exit $c)"; extra_rc=$(combine "$extra_rc" 1); }
    "$E2E" compare --run-dir "$d" --baseline lossless --candidate high --json "$d/lossless_vs_high.json" 2>&1 | tee -a "$LOG"
    c=${PIPESTATUS[0]}
    [[ $c -eq 1 ]] || { log "nightly_e2e: $label $dt lossless vs high must measure a difference (exit 1), got exit $c"; extra_rc=$(combine "$extra_rc" 1); }
    # The run's own gates (fp16 always; bf16 here only when there is no golden file, else with it below).
    if [[ $dt == fp16 || ! -f "$golden" ]]; then
      "$E2E" check --run-dir "$d" --json "$d/check.json" --junit "$d/check.xml" 2>&1 | tee -a "$LOG"
      c=${PIPESTATUS[0]}
      [[ $c -eq 0 ]] || { log "nightly_e2e: the $label $dt run's own gates fail (exit $c)"; extra_rc=$(combine "$extra_rc" "$c"); }
    fi
  done
  if [[ -f "$golden" ]]; then
    "$E2E" check --run-dir "$dir" --golden "$golden" --json "$dir/check.json" --junit "$dir/check.xml" 2>&1 | tee -a "$LOG"
    c=${PIPESTATUS[0]}
    [[ $c -le 3 ]] || c=2
    extra_rc=$(combine "$extra_rc" "$c")
  elif [[ $extra_rc -eq 0 ]]; then
    local bless="\"$E2E\" bless --run-dir $dir --arch $ARCH --out golden/e2e/$golden_name.json --comparison $dir/lossless_vs_high.json --high-comparison $dir/high_vs_high_eager.json --provenance $OUT/provenance.json"
    if [[ -n "$COMMIT" && "$DEVICE" == cuda ]]; then
      "$E2E" bless --run-dir "$dir" --arch "$ARCH" --out "$dir/$golden_name.json" --comparison "$dir/lossless_vs_high.json" \
        --high-comparison "$dir/high_vs_high_eager.json" --provenance "$OUT/provenance.json" >> "$LOG" 2>&1 &&
        log "nightly_e2e: a candidate golden file blessed from this run: $dir/$golden_name.json (exported with --export)"
    fi
    log "nightly_e2e: INCOMPLETE: no golden file golden/e2e/$golden_name.json for $label on $ARCH; bless it from this run"
    log "  (its own gates pass) with, in the repository root:"
    log "  $bless"
    log "  or commit the candidate $dir/$golden_name.json when this run wrote one; the next nightly then gates against it"
    extra_rc=3
  fi
  log "nightly_e2e: $label: exit $extra_rc"
}

# The DiT configuration: its blocks modulate and gate their residuals in the activation dtype, and high fuses those
# sites (blocks.<i>.modulate_attn, gate_attn, modulate_ffn, gate_ffn) besides the FFN's.
dit_rc=0
if [[ "$DIT_CONFIG" != none ]]; then
  run_extra "$DIT_CONFIG" "$DIT_CONFIG" "$OUT/dit" "${ARCH}_${DIT_CONFIG}"
  dit_rc=$extra_rc
fi
# The FFN's fc_out on NVFP4 activations: high makes them in one fused call (bias + GELU + NVFP4 quantization, static
# global scale), high-eager by eager bias + GELU then the quantizer alone.
fp4_rc=0
if [[ "$FC_OUT_NVFP4" == on ]]; then
  run_extra "$CONFIG --fc-out-nvfp4-input" "$CONFIG" "$OUT/fc-out-nvfp4" "${ARCH}_${CONFIG}-fc-out-nvfp4" --fc-out-nvfp4-input
  fp4_rc=$extra_rc
fi
finish "$(combine "$main_rc" "$(combine "$dit_rc" "$fp4_rc")")"
