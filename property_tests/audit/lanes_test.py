"""lanes_test.py: `fuseproof audit --lanes 2` (the two dtypes side by side) reports what `--lanes 1` reports.

Runs one audit per lane count on the same subject and scope and compares every check of the JSON reports in order:
class, dtype, status, cases, mismatches, records, scope, reproduce (not the seconds, nor the streams class's measured
overlap, which is timing). With --expect-differ (the negative control) the second run gets another seed, and the
comparison must then find a difference.
Usage: lanes_test.py [--expect-differ] AUDIT_EXE OUT_DIR -- AUDIT_ARGS...
"""
import json
import subprocess
import sys

KEYS = ("class", "dtype", "status", "cases", "mismatches", "records", "scope", "reproduce", "fault")


def run(exe, out, args, lanes, extra):
    cmd = [exe] + args + ["--lanes", str(lanes), "--json", out] + extra
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    with open(out) as f:
        report = json.load(f)
    checks = report["checks"] if "checks" in report else report["audits"][0]["checks"]
    return rc, [{k: c.get(k) for k in KEYS if not (k == "scope" and c.get("class") == "streams")} for c in checks]


def main():
    argv = sys.argv[1:]
    differ = argv[0] == "--expect-differ"
    if differ:
        argv = argv[1:]
    exe, out_dir, sep, args = argv[0], argv[1], argv[2], argv[3:]
    assert sep == "--"
    rc1, one = run(exe, out_dir + "/lanes1.json", args, 1, [])
    rc2, two = run(exe, out_dir + "/lanes2.json", args, 2, ["--seed", "7"] if differ else [])
    if len(one) < 2:
        print("lanes_test: the audit reported %d checks; nothing to compare" % len(one))
        return 1
    diffs = [(a["class"], a["dtype"], k) for a, b in zip(one, two) for k in a if a.get(k) != b.get(k)]
    if rc1 != rc2 or len(one) != len(two):
        diffs.append(("exit", rc1, rc2))
    if differ:
        print("lanes_test: %d differences with another seed (the comparison can fail)" % len(diffs))
        return 0 if diffs else 1
    for d in diffs[:10]:
        print("lanes_test: --lanes 2 differs from --lanes 1 at %s %s: %s" % d)
    print("lanes_test: %d checks, exit %d, %s" % (len(one), rc1, "identical" if not diffs else "DIFFERENT"))
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
