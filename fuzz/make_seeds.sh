#!/usr/bin/env bash
# make_seeds.sh: regenerates the committed seed corpora of fuzz/corpus/ (small valid inputs; the fuzzer mutates them).
# Usage: fuzz/make_seeds.sh BUILD_DIR   (a default build: its bad test plugin is the ELF seed). Needs the ffmpeg binary.
set -euo pipefail
build=$(realpath "${1:?usage: fuzz/make_seeds.sh BUILD_DIR}")
cd "$(dirname "$0")"
ff=(ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc2=size=16x16:rate=4 -frames:v 2)

c=corpus/fuzz_read_video_y4m
rm -rf "$c" && mkdir -p "$c"
for fmt in yuv420p yuv444p gray yuv422p; do "${ff[@]}" -pix_fmt $fmt -f yuv4mpegpipe "$c/testsrc2_$fmt.y4m"; done

c=corpus/fuzz_read_video_mp4
rm -rf "$c" && mkdir -p "$c"
"${ff[@]}" -c:v libx264rgb -qp 0 -preset medium -pix_fmt rgb24 -movflags +faststart "$c/lossless_rgb24.mp4"
"${ff[@]}" -c:v libx264 -crf 30 -pix_fmt yuv420p "$c/h264_yuv420p.mp4"
"${ff[@]}" -c:v mpeg4 -q:v 5 "$c/mpeg4_part2.mp4"

c=corpus/fuzz_golden_table
rm -rf "$c" && mkdir -p "$c"
head -c 131072 /dev/zero > "$c/zeros_full_size.bin"
head -c 64 ../golden/sm_90/gelu_tanh_bf16.bin > "$c/first_32_entries.bin"

c=corpus/fuzz_golden_json
rm -rf "$c" && mkdir -p "$c"
cp ../golden/sm_90/digests.json ../golden/sm_90/provenance.json ../golden/sm_90/nan_observed.json "$c/"
cat > "$c/e2e_golden_small.json" <<'JSON'
{"schema": "fuseproof.e2e.golden/1", "arch": "sm_90", "config": {"name": "fuzz", "frames": 2},
 "high": {"frames": 2, "width": 4, "height": 2, "frame_sha256": ["2222", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"],
          "mp4_sha256": "00", "mp4_encoder": "x"},
 "lossless": {"frames": 2, "width": 4, "height": 2, "frame_sha256": ["1111", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"]}}
JSON

c=corpus/fuzz_run_manifest
rm -rf "$c" && mkdir -p "$c"
python3 - "$c" <<'PY'
# fuzz_run_manifest's run directory holds a.rgb24 (one 4x2 frame, bytes 0..23), inside.rgb24 -> a.rgb24 and
# escape.rgb24 -> ../run2/a.rgb24: a valid run on them, and one seed per refusal.
import copy, hashlib, json, os, sys
h = hashlib.sha256(bytes(range(24))).hexdigest()
mode = lambda f: {"frames": 1, "width": 4, "height": 2, "frame_sha256": [h], "rgb24_sha256": h, "files": {"rgb24": f}}
run = {"schema": "fuseproof.e2e.run/1", "config": {"name": "fuzz", "fps": 4},
       "runs": {"lossless": mode("a.rgb24"), "high": mode("inside.rgb24"), "high-eager": mode("a.rgb24")}}
def seed(name, r):
    with open(os.path.join(sys.argv[1], name), "w") as f:
        json.dump(r, f)
seed("valid_run.json", run)
for name, edit in [("escape_symlink.json", lambda r: r["runs"]["high"]["files"].update(rgb24="escape.rgb24")),
                   ("escape_dotdot.json", lambda r: r["runs"]["high"]["files"].update(rgb24="../run2/a.rgb24")),
                   ("absolute_path.json", lambda r: r["runs"]["high"]["files"].update(rgb24="/etc/passwd")),
                   ("evil_mode.json", lambda r: r["runs"].update({"../evilmode": mode("a.rgb24")})),
                   ("short_frame_list.json", lambda r: r["runs"]["high"].update(frame_sha256=[])),
                   ("altered_hash.json", lambda r: r["runs"]["high"].update(frame_sha256=["0" * 64]))]:
    r = copy.deepcopy(run)
    edit(r)
    seed(name, r)
PY

c=corpus/fuzz_plugin_elf
rm -rf "$c" && mkdir -p "$c"
strip -o "$c/bad_no_symbol.so" "$build/property_tests/audit/bad_plugins/libbad_no_symbol.so"

c=corpus/fuzz_cli
rm -rf "$c" && mkdir -p "$c"
printf 'audit\n--op\nbias_gelu_tanh\n--dtype\nbf16\n--backend\nemulated\n--quick' > "$c/audit"
printf 'audit\n--op\nbias_gelu_tanh\n--plugin\n/x.so\n--report\nr.md\n--json\nr.json\n--only\nwidths' > "$c/audit_plugin"
printf 'reference-audit\n--golden-dir\n/tmp' > "$c/reference_audit"
printf 'sweep\n--op\nadd_round\n--dtype\nfp16\n--backend\nreference\n--bias-first\n5\n--bias-count\n2' > "$c/sweep"
printf 'gelu-table\n--dtype\nbf16\n--tanh\ncuda\n--out\nt.bin' > "$c/gelu_table"
printf 'bench\n--backend\nemulated\n--json\nb.json' > "$c/bench"
printf 'video\ncompare\na.mp4\nb.y4m\n--expect-frames\n81\n--json\nc.json\n--markdown' > "$c/video_compare"
printf 'video\nencode\n--run-dir\nd\n--modes\nhigh,lossless\n--y4m' > "$c/video_encode"
du -sh corpus
