#!/usr/bin/env bash
# check_junit_test.sh: `fuseproof-e2e check --junit` on a real CPU run of the small config: one testcase per gate,
# read back by a JUnit parser against the check's JSON (support/check_reports.py); a golden file with one frame hash
# changed gives a failing gate with its detail and reproduce command (the negative control); a missing golden file
# exits 3 and its JUnit shows the missing file as incomplete, never a pass.
# Usage: check_junit_test.sh E2E_BINARY PYTHON CHECK_REPORTS_PY WORKDIR
set -euo pipefail
E2E=$1 PY=$2 CHECK=$3 D=$4
rm -rf "$D" && mkdir -p "$D"
"$E2E" run --config small --device cpu --modes lossless,high,high-eager,lossless-after-unmount --formats rgb24 \
  --out "$D/run" > "$D/run.log"
"$E2E" bless --run-dir "$D/run" --arch sm_90 --out "$D/golden.json" > "$D/bless.log"
"$PY" "$CHECK" --code 0 --expect pass --e2e --junit "$D/pass.xml" --json "$D/pass.json" -- \
  "$E2E" check --run-dir "$D/run" --golden "$D/golden.json" --json "$D/pass.json" --junit "$D/pass.xml"
"$PY" -c 'import json, sys; g = json.load(open(sys.argv[1])); g["high"]["frame_sha256"][40] = "0" * 64
json.dump(g, open(sys.argv[2], "w"))' "$D/golden.json" "$D/bad.json"
"$PY" "$CHECK" --code 1 --expect fail --e2e --junit "$D/fail.xml" --json "$D/fail.json" -- \
  "$E2E" check --run-dir "$D/run" --golden "$D/bad.json" --json "$D/fail.json" --junit "$D/fail.xml"
grep -q 'frame 40 0000000000000000 vs' "$D/fail.xml" || { echo "the failure does not name frame 40"; exit 1; }
set +e
"$E2E" check --run-dir "$D/run" --golden "$D/none.json" --junit "$D/missing.xml" > /dev/null 2>&1
rc=$?
set -e
[[ $rc -eq 3 ]] || { echo "a missing golden file must exit 3, got $rc"; exit 1; }
"$PY" -c 'import sys, xml.etree.ElementTree as E
f = [c.find("failure") for c in E.parse(sys.argv[1]).getroot().iter("testcase") if c.find("failure") is not None]
assert len(f) == 1 and f[0].get("type") == "incomplete" and "no golden file" in f[0].get("message"), f
print("missing golden: exit 3, one incomplete testcase")' "$D/missing.xml"
echo "check_junit_test: ok"
