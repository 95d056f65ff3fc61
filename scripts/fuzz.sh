#!/usr/bin/env bash
# fuzz.sh: builds the libFuzzer targets (fuzz/, `fuzz` preset, clang) and runs each one for a while on its seed corpus;
# writes OUTDIR/fuzz_summary.md (target, seconds, executions, corpus, crashes) and one log per target.
#   scripts/fuzz.sh [SECONDS_PER_TARGET (default 300)] [OUTDIR (default build-fuzz/long)] [TARGET...]
# New corpus inputs stay in OUTDIR/corpus/<target> (the committed seeds are never written); a crash is saved as
# OUTDIR/crashes/<target>-crash-<sha1>: add it to fuzz/regressions/<target>/ with the fix (it then runs under ctest).
# Exit: 0 no crash, 1 a target crashed, 2 setup error.
set -uo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER=${1:-300}
OUT=${2:-build-fuzz/long}
shift $(( $# > 2 ? 2 : $# ))
mkdir -p "$OUT/crashes"
OUT=$(cd "$OUT" && pwd)
cmake --preset fuzz > "$OUT/configure.log" 2>&1 || { tail -n 20 "$OUT/configure.log"; exit 2; }
cmake --build --preset fuzz -j"$(nproc)" > "$OUT/build.log" 2>&1 || { grep -E "error" "$OUT/build.log" | head; exit 2; }
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for d in fuzz/corpus/*/; do t=$(basename "$d"); [ -x "build-fuzz/bin/$t" ] && targets+=("$t"); done
fi
status=0
rows=()
for t in "${targets[@]}"; do
  mkdir -p "$OUT/corpus/$t"
  len=()
  case $t in fuzz_golden_table) len=(-max_len=131100) ;; fuzz_read_video_*) len=(-max_len=16384) ;; esac
  t0=$SECONDS
  "build-fuzz/bin/$t" -max_total_time="$SECONDS_PER" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 "${len[@]}" \
    -artifact_prefix="$OUT/crashes/$t-" "$OUT/corpus/$t" "fuzz/corpus/$t" > "$OUT/$t.log" 2>&1
  rc=$?
  execs=$(grep -oE "stat::number_of_executed_units: *[0-9]+" "$OUT/$t.log" | grep -oE "[0-9]+$" | tail -n 1)
  crashes=$(find "$OUT/crashes" -name "$t-*" | wc -l)
  units=$(find "$OUT/corpus/$t" -type f | wc -l)
  [ $rc -eq 0 ] || status=1
  rows+=("| $t | $((SECONDS - t0)) | ${execs:-?} | $(ls "fuzz/corpus/$t" | wc -l) seeds + $units new | $crashes | exit $rc |")
  echo "fuzz: $t: exit $rc, ${execs:-?} executions, $crashes crash files"
done
{
  echo "# scripts/fuzz.sh $SECONDS_PER ($(date -u +%Y-%m-%dT%H:%MZ), commit $(git rev-parse --short HEAD 2>/dev/null))"
  echo
  echo "| target | seconds | executions | corpus | crash files | result |"
  echo "|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
} > "$OUT/fuzz_summary.md"
cat "$OUT/fuzz_summary.md"
exit $status
