#!/usr/bin/env python3
"""subjects_table.py: the docs/SUBJECTS.md table from the Python subjects' audit reports: op x subject x contract x
dtype x verdict x exact mismatches x distance from the contract and from the correctly rounded value x first records.
Usage: scripts/subjects_table.py DIR
DIR holds one NAME.json (the audit's --json) and NAME.status ("exit-status seconds") per audit, NAME being
OP.CONTRACT.SUBJECT.DTYPE (`scripts/gpu_runner.py subjects`: OUT/runner/subjects/)."""

import glob
import json
import os
import sys

SUBJECT_ORDER = ["eager", "torch-compile", "torch-compile-emulated", "triton"]


def histogram(h):
    """'1: n, 2: n, ...': the report's nonzero buckets other than 0, in the report's order."""
    if not h:
        return "–"
    parts = ["%s: %s" % (k, format(v, ",")) for k, v in h.items() if k != "0" and v]
    return ", ".join(parts) if parts else "0 everywhere"


def load(d, base):
    rc, secs = open(os.path.join(d, base + ".status")).read().split()
    try:
        with open(os.path.join(d, base + ".json")) as f:
            return rc, secs, json.load(f)
    except (OSError, ValueError):
        return rc, secs, {}


def row(d, base, key):
    op, subject, contract, dt = key
    rc, secs, r = load(d, base)
    op, contract = r.get("op", op), r.get("contract", contract)
    head = "| %s | %s | %s | %s |" % (op, subject, contract, dt)
    if r.get("verdict") == "unavailable":
        return head + " unavailable | | | | %s | %s |" % (r.get("reason", ""), secs)
    checks = [c for c in r.get("checks", []) if c["dtype"] == dt]
    if not checks:
        return head + " no report (exit %s) | | | | see %s.log | %s |" % (rc, base, secs)
    failed = [c for c in checks if c["status"] == "fail"]
    dom = next((c for c in checks if c["class"] == "domain"), None)
    verdict = "**FAIL** (%s)" % ", ".join(c["class"] for c in failed) if failed else "PASS"
    if dom:
        mism = "%s of %s%s" % (format(dom["mismatches"], ","), format(dom["cases"], ","),
                               " (stopped early)" if dom["stopped_early"] else "")
        ulp = histogram(dom.get("ulp_vs_contract")) if dom["mismatches"] else "–"
        cr_s, cr_c = dom.get("ulp_vs_correctly_rounded"), dom.get("contract_ulp_vs_correctly_rounded")
        cr = ("subject %s; contract %s" % (histogram(cr_s), histogram(cr_c))) if cr_s and dom["mismatches"] else "–"
    else:
        mism, ulp, cr = "not run", "–", "–"
    records = ["%s: %s" % (c["class"], line.split(" ", 2)[2] if line.count(" ") >= 2 else line)
               for c in failed for line in c["records"][:1]]
    return head + " %s | %s | %s | %s | %s | %s |" % (verdict, mism, ulp, cr,
                                                      "<br>".join("`%s`" % x for x in records[:2]) or "–", secs)


def main(d):
    rows = {}
    for p in glob.glob(os.path.join(d, "*.status")):
        base = os.path.basename(p)[:-len(".status")]
        parts = base.split(".")
        if len(parts) == 4:  # OP.CONTRACT.SUBJECT.DTYPE, the GPU runner's subjects step
            key = (parts[0], parts[2], parts[1], parts[3])
        else:
            print("subjects_table: %s: not a report name this script knows" % p, file=sys.stderr)
            return 2
        rows[key] = base
    if not rows:
        print("subjects_table: no *.status in %s" % d, file=sys.stderr)
        return 2
    print("| op | subject | contract | dtype | verdict | mismatches (exact) | distance from the contract (ulps) "
          "| distance from the correctly rounded value (ulps) | first record | time (s) |")
    print("|---|---|---|---|---|---:|---|---|---|---:|")
    order = lambda k: (k[0], SUBJECT_ORDER.index(k[1]) if k[1] in SUBJECT_ORDER else len(SUBJECT_ORDER), k[1],
                       k[2], k[3])
    for key in sorted(rows, key=order):
        print(row(d, rows[key], key))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
