#!/usr/bin/env python3
"""subjects_table.py: the docs/SUBJECTS.md table from gpu_subjects.sh's reports: subject x dtype x verdict x
mismatches (exact) x first records x time.
Usage: scripts/subjects_table.py DIR        (DIR holds subject_<name>.<dtype>.json and .status)"""

import glob
import json
import os
import sys

ORDER = ["eager", "torch-compile", "torch-compile-emulated", "triton"]


def row(d, name, dt):
    rc, secs = open(os.path.join(d, "subject_%s.%s.status" % (name, dt))).read().split()
    path = os.path.join(d, "subject_%s.%s.json" % (name, dt))
    try:
        with open(path) as f:
            r = json.load(f)
    except (OSError, ValueError):
        r = {}
    if r.get("verdict") == "unavailable":
        return "| %s | %s | unavailable | | | %s | %s |" % (name, dt, r.get("reason", ""), secs)
    checks = [c for c in r.get("checks", []) if c["dtype"] == dt]
    if not checks:
        return "| %s | %s | no report (exit %s) | | | see subject_%s.%s.log | %s |" % (name, dt, rc, name, dt, secs)
    failed = [c for c in checks if c["status"] == "fail"]
    dom = next((c for c in checks if c["class"] == "domain"), None)
    dom_text = ("%d of %d%s" % (dom["mismatches"], dom["cases"], " (stopped early)" if dom["stopped_early"] else "")
                if dom else "not run")
    records = ["%s: %s" % (c["class"], line) for c in failed for line in c["records"][:2]]
    verdict = "FAIL (%s)" % ", ".join(c["class"] for c in failed) if failed else "PASS"
    return "| %s | %s | %s | %s | %d | %s | %s |" % (name, dt, verdict, dom_text, sum(c["mismatches"] for c in checks),
                                                    "<br>".join("`%s`" % x for x in records[:3]), secs)


def main(d):
    found = {}
    for p in glob.glob(os.path.join(d, "subject_*.status")):
        name, dt = os.path.basename(p)[len("subject_"):-len(".status")].rsplit(".", 1)
        found.setdefault(name, []).append(dt)
    print("| subject | dtype | verdict | mismatches (domain, exact) | mismatches (all classes) | first records "
          "| time (s) |")
    print("|---|---|---|---:|---:|---|---:|")
    for name in sorted(found, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n)):
        for dt in sorted(found[name]):
            print(row(d, name, dt))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
