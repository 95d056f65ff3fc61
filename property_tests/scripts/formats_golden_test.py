#!/usr/bin/env python3
"""formats_golden_test.py: the negative controls of `fuseproof formats --check-golden` and of
scripts/capture_golden.py --add-formats, on a private golden folder (never golden/ itself).

    formats_golden_test.py FUSEPROOF GOLDEN_SM90 CAPTURE_GOLDEN WORKDIR

1. golden without format digests: --check-golden is exit 3, one line naming the missing key;
2. --add-formats of a capture whose e2m1 digest is one character off: written (exit 0), and --check-golden is then
   exit 1 with the line "e2m1 DIFFERS from ...";
3. --add-formats of the true digest on top of it: refused (exit 1, "the devices disagree"), nothing written;
4. a digests.json changed behind provenance.json's back: exit 4 (corrupt).
The passing side (every cast equal to the device) is Cli_Fuseproof.FormatsDigestEqualsTheDevice_*.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys


def fail(msg):
    print("formats_golden_test: FAIL: " + msg)
    sys.exit(1)


def main():
    fuseproof, golden, capture, work = sys.argv[1:5]
    root = os.path.join(work, "formats_golden")
    shutil.rmtree(root, ignore_errors=True)
    arch = os.path.join(root, "g", "sm_90")
    os.makedirs(arch)
    digests = json.load(open(os.path.join(golden, "digests.json")))
    true_e2m1 = digests.get("format.e2m1_tree")
    if not true_e2m1:
        fail("golden/sm_90/digests.json has no format.e2m1_tree")
    for k in [k for k in digests if k.startswith("format")]:
        del digests[k]
    text = json.dumps(digests, indent=2)
    open(os.path.join(arch, "digests.json"), "w").write(text)
    prov = json.load(open(os.path.join(golden, "provenance.json")))
    prov["files"] = {"digests.json": hashlib.sha256(text.encode()).hexdigest()}
    json.dump(prov, open(os.path.join(arch, "provenance.json"), "w"), indent=2)
    env = dict(os.environ, FUSEPROOF_GOLDEN_DIR=os.path.join(root, "g"))

    def formats():
        return subprocess.run([fuseproof, "formats", "--format", "e2m1", "--check-golden"], capture_output=True,
                              text=True, env=env)

    def add(tree):
        cap = os.path.join(root, "capture.json")
        json.dump({"rows": "0:65536", "layout": "control", "bytes_per_output": {"e2m1": 1}, "tree": {"e2m1": tree},
                   "provenance": {"gpu": "control (formats_golden_test.py)", "capability": "sm_90",
                                  "date": "control"}}, open(cap, "w"))
        return subprocess.run([sys.executable, capture, "--out", os.path.join(root, "g"), "--add-formats", cap],
                              capture_output=True, text=True)

    p = formats()
    if p.returncode != 3 or "has no format.e2m1_tree" not in p.stderr or len(p.stderr.strip().splitlines()) != 1:
        fail("no golden format digest: exit %d, stderr %r" % (p.returncode, p.stderr))
    off = true_e2m1[:-1] + ("0" if true_e2m1[-1] != "0" else "1")
    q = add(off)
    if q.returncode != 0:
        fail("--add-formats of a new digest: exit %d, %r" % (q.returncode, q.stderr))
    p = formats()
    if p.returncode != 1 or "e2m1 DIFFERS from golden/sm_90/digests.json format.e2m1_tree (%s)" % off not in p.stdout:
        fail("a golden digest one character off: exit %d, stdout %r" % (p.returncode, p.stdout))
    q = add(true_e2m1)
    if q.returncode != 1 or "the devices disagree" not in q.stderr:
        fail("--add-formats over a different digest: exit %d, %r" % (q.returncode, q.stderr))
    if json.load(open(os.path.join(arch, "digests.json")))["format.e2m1_tree"] != off:
        fail("a refused --add-formats changed digests.json")
    with open(os.path.join(arch, "digests.json"), "a") as f:
        f.write(" ")
    p = formats()
    if p.returncode != 4:
        fail("digests.json changed behind provenance.json: exit %d, %r" % (p.returncode, p.stderr))
    print("formats_golden_test: missing 3, differing 1, disagreeing capture refused, corrupt 4: ok")


if __name__ == "__main__":
    main()
