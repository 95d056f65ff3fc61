#!/usr/bin/env python3
"""check_reports.py: runs a command (after --) and checks the reports it wrote against its JSON report.

  check_reports.py --code N [--expect pass|fail] --junit F --json J [--github G] [--e2e] -- COMMAND...
  check_reports.py --code 3 --missing --junit F [--github G] -- COMMAND...

The JUnit XML must parse with junitparser (Debian's python3-junitparser; xml.etree when it is missing) and hold
exactly one testcase per check of the JSON report (the audit: per class and dtype, `fuseproof.audit.<op>.<contract>`
`<class>[<dtype>]`; --e2e: per gate of `fuseproof-e2e check`), each with the JSON's verdict: a pass has no result, a
fail a <failure> with the first record and the reproduce command, an incomplete class a <failure type="incomplete">,
a skipped one <skipped>. --expect fail: at least one failure with a TestFloat record; pass: none. --github: the
GitHub summary's verdict line, its limits (60 lines, 65,000 characters) and a <details> block per shown failure.
--missing (an audit stopped by missing golden data, exit 3, no JSON): a failing `golden data` case of type
incomplete and no passing case, and a summary whose verdict is INCOMPLETE.
Exit 0 when every check holds, 1 with one line per violation.
"""
import argparse
import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

try:
    import junitparser
except ImportError:  # the minimum: the standard library's expat parser
    junitparser = None

RECORD = re.compile(r"=> 0x[0-9A-F]+ expected 0x[0-9A-F]+")
problems = []


def need(cond, what):
    if not cond:
        problems.append(what)


def read_cases(path):
    """[(classname, name, kind, type, message, text)] and the properties of each suite, via a real JUnit reader."""
    ET.parse(path)  # well-formed XML 1.0 first
    cases, props = [], {}
    if junitparser is not None:
        xml = junitparser.JUnitXml.fromfile(path)
        for suite in xml:
            props[suite.name] = {p.name: p.value for p in suite.properties()}
            for c in suite:
                kind, typ, msg, text = "pass", "", "", ""
                for res in c.result:
                    kind = {"Failure": "failure", "Error": "error", "Skipped": "skipped"}[type(res).__name__]
                    typ, msg, text = res.type or "", res.message or "", res.text or ""
                cases.append((c.classname, c.name, kind, typ, msg, text))
        return cases, props
    root = ET.parse(path).getroot()
    for suite in root.iter("testsuite"):
        props[suite.get("name")] = {p.get("name"): p.get("value") for p in suite.iter("property")}
        for c in suite.iter("testcase"):
            kind, typ, msg, text = "pass", "", "", ""
            for k in ("failure", "error", "skipped"):
                e = c.find(k)
                if e is not None:
                    kind, typ, msg, text = k, e.get("type", ""), e.get("message", ""), e.text or ""
            cases.append((c.get("classname"), c.get("name"), kind, typ, msg, text))
    return cases, props


def check_audit(cases, props, report, expect):
    audits = report.get("audits", [report])
    want = {}
    for a in audits:
        suite = "fuseproof.audit.%s.%s" % (a["op"], a["contract"])
        need(suite in props, "no testsuite %s" % suite)
        p = props.get(suite, {})
        for key, value in (("kernel", a["kernel"]["name"]), ("op", a["op"]), ("contract", a["contract"]),
                           ("device", a["hardware"])):
            need(p.get(key) == value, "%s: property %s is %r, the JSON says %r" % (suite, key, p.get(key), value))
        for c in a["checks"]:
            key = (suite, "%s[%s]" % (c["class"], c["dtype"]))
            need(key not in want, "the JSON lists %s twice" % (key,))
            want[key] = c
    got = [(c[0], c[1]) for c in cases if c[0] != "fuseproof.reference"]
    need(len(got) == len(set(got)), "duplicate testcases: %s" % sorted(k for k in got if got.count(k) > 1))
    need(set(got) == set(want), "testcases and the JSON's checks differ in %s" % sorted(set(got) ^ set(want)))
    failures_with_records = 0
    for classname, name, kind, typ, msg, text in cases:
        c = want.get((classname, name))
        if c is None:
            continue
        st = c["status"]
        where = "%s %s" % (classname, name)
        if st == "pass":
            need(kind == "pass", "%s: the JSON says pass, the JUnit %s" % (where, kind))
        elif st == "skipped":
            need(kind == "skipped", "%s: the JSON says skipped, the JUnit %s" % (where, kind))
        elif st == "incomplete":
            need(kind == "failure" and typ == "incomplete", "%s: incomplete must be a failure, got %s" % (where, kind))
        else:
            need(kind == "failure", "%s: the JSON says fail, the JUnit %s" % (where, kind))
            need(c["reproduce"] and ("Reproduce: " + c["reproduce"]) in text,
                 "%s: the failure lacks the reproduce command %r" % (where, c["reproduce"]))
            need("--only " + c["class"] in c["reproduce"], "%s: the reproduce command reruns more than the class"
                 % where)
            first = c["fault"] or (c["records"][0] if c["records"] else "")
            need(first and first.split("\n")[0][:60] in text,
                 "%s: the failure lacks the first record %r" % (where, first))
            if c["records"] and RECORD.search(text):
                failures_with_records += 1
    if expect == "fail":
        need(failures_with_records > 0, "expected a failure carrying TestFloat records; none has")
    elif expect == "pass":
        need(all(k in ("pass", "skipped") for _, _, k, _, _, _ in cases), "expected no failure")


def check_e2e(cases, report, expect):
    gates = report["gates"]
    names = [c[1] for c in cases]
    need(len(cases) == len(gates), "%d testcases for %d gates" % (len(cases), len(gates)))
    need(names == [g["gate"] for g in gates], "testcase names %s are not the gates %s"
         % (names, [g["gate"] for g in gates]))
    for (classname, name, kind, typ, msg, text), g in zip(cases, gates):
        want = {"PASS": "pass", "FAIL": "failure", "SKIP": "skipped"}[g["status"]]
        need(kind == want, "gate %s: %s in the JSON, %s in the JUnit" % (name, g["status"], kind))
        need(classname.startswith("fuseproof.e2e."), "gate %s: classname %s" % (name, classname))
        if kind == "failure":
            need(g["detail"] in text and "Reproduce: fuseproof-e2e check" in text,
                 "gate %s: the failure lacks its detail or the reproduce command" % name)
    if expect == "fail":
        need(any(c[2] == "failure" for c in cases), "expected a failing gate")
    elif expect == "pass":
        need(all(c[2] != "failure" for c in cases), "expected no failing gate")


def check_github(path, report, expect):
    text = open(path, encoding="utf-8").read()
    lines = text.splitlines()
    need(len(lines) <= 60, "the GitHub summary has %d lines (at most 60)" % len(lines))
    need(len(text) <= 65000, "the GitHub summary has %d characters (at most 65,000)" % len(text))
    verdict = report["verdict"].upper()
    need(lines and ("**fuseproof audit: %s**" % verdict) in lines[0], "verdict line %r does not say %s"
         % (lines[0] if lines else "", verdict))
    need(text.count("<details>") == text.count("</details>"), "unbalanced <details> blocks")
    need(text.count("```") % 2 == 0, "an unclosed code fence")
    if expect == "fail":
        need("<details>" in text and "Reproduce: `" in text and RECORD.search(text),
             "a failing audit's summary needs a <details> block with records and the reproduce command")


def check_missing(cases, github):
    golden = [c for c in cases if c[1] == "golden data"]
    need(len(golden) == 1 and golden[0][2] == "failure" and golden[0][3] == "incomplete",
         "expected one failing 'golden data' case of type incomplete, got %s" % golden)
    need(golden and "missing" in golden[0][4], "the incomplete case does not say what is missing")
    need(not [c for c in cases if c[2] == "pass" and c[0] != "fuseproof.reference"], "a pass beside missing data")
    if github:
        first = open(github, encoding="utf-8").readline()
        need("**fuseproof audit: INCOMPLETE**" in first, "verdict line %r is not INCOMPLETE" % first)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--code", type=int, required=True)
    ap.add_argument("--expect", choices=("pass", "fail"))
    ap.add_argument("--junit", required=True)
    ap.add_argument("--json")
    ap.add_argument("--missing", action="store_true")
    ap.add_argument("--github")
    ap.add_argument("--e2e", action="store_true")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if cmd:
        rc = subprocess.call(cmd)
        need(rc == a.code, "the command exited %d, expected %d: %s" % (rc, a.code, " ".join(cmd)))
    cases, props = read_cases(a.junit)
    if a.missing:
        check_missing(cases, a.github)
        return finish(cases)
    report = json.load(open(a.json))
    if a.e2e:
        check_e2e(cases, report, a.expect)
    else:
        check_audit(cases, props, report, a.expect)
    if a.github:
        check_github(a.github, report, a.expect)
    return finish(cases)


def finish(cases):
    for p in problems:
        print("check_reports: " + p)
    print("check_reports: %s (%d testcases, %s)" % ("FAIL" if problems else "ok", len(cases),
                                                   "junitparser" if junitparser else "xml.etree"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
