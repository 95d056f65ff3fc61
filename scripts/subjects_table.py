#!/usr/bin/env python3
"""subjects_table.py: the docs/SUBJECTS.md table from gpu_subjects.sh's reports: subject x dtype x verdict x
mismatches (exact) x first records x time.   Usage: scripts/subjects_table.py DIR (with subject_<name>.json/.status)"""

import glob
import json
import os
import sys

ORDER = ["eager", "torch-compile", "torch-compile-emulated", "triton"]


def main(d):
    names = sorted((os.path.basename(p)[len("subject_"):-len(".status")] for p in glob.glob(os.path.join(d, "subject_*.status"))),
                   key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))
    print("| subject | dtype | verdict | mismatches (domain, exact) | mismatches (all classes) | first records | time (s) |")
    print("|---|---|---|---:|---:|---|---:|")
    for n in names:
        rc, secs = open(os.path.join(d, "subject_%s.status" % n)).read().split()
        path = os.path.join(d, "subject_%s.json" % n)
        r = json.load(open(path)) if os.path.exists(path) else {}
        if r.get("verdict") == "unavailable":
            print("| %s | all | unavailable | | | %s | %s |" % (n, r.get("reason", ""), secs))
            continue
        if not r.get("checks"):
            print("| %s | all | no report (exit %s) | | | see subject_%s.log | %s |" % (n, rc, n, secs))
            continue
        for dt in ("bf16", "fp16"):
            checks = [c for c in r["checks"] if c["dtype"] == dt]
            if not checks:
                continue
            failed = [c for c in checks if c["status"] == "fail"]
            domain = [c for c in checks if c["class"] == "domain"]
            dom = domain[0] if domain else None
            dom_text = ("%d of %d%s" % (dom["mismatches"], dom["cases"], " (stopped early)" if dom["stopped_early"] else "")
                        if dom else "not run")
            total = sum(c["mismatches"] for c in checks)
            records = []
            for c in failed:
                records += ["%s: %s" % (c["class"], line) for line in c["records"][:2]]
            verdict = "FAIL (%s)" % ", ".join(c["class"] for c in failed) if failed else "PASS"
            secs_dt = sum(c["seconds"] for c in checks)
            print("| %s | %s | %s | %s | %d | %s | %.1f |" % (n, dt, verdict, dom_text, total,
                                                             "<br>".join("`%s`" % x for x in records[:3]), secs_dt))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
