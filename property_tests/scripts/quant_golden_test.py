#!/usr/bin/env python3
"""quant_golden_test.py: `fuseproof eval` reproduces, bit for bit, the projects' torch references of the quantization
ops as captured on an H100 (golden/sm_90/quant_references.tar, scripts/capture_quant.py; docs/OPS.md).

    quant_golden_test.py FUSEPROOF GOLDEN_ARCH_DIR CAPTURE_QUANT_PY WORK_DIR

The archive is checked against provenance.json (its SHA-256 and every member's), unpacked into WORK_DIR, and
`capture_quant.py --check-only` runs eval on every captured input file of every op, contract and dtype and compares
every output byte (exit 0). The negative control flips one scale byte of one reference output (its SHA-256 in the
capture's JSON updated, so that only the comparison can notice it): the check must then exit 1 naming that block.
"""
import hashlib
import gzip
import json
import os
import shutil
import subprocess
import sys
import tarfile


def fail(msg):
    print("quant_golden_test: FAIL: " + msg)
    sys.exit(1)


def main():
    fuseproof, arch_dir, script, work = sys.argv[1:5]
    prov = json.load(open(os.path.join(arch_dir, "provenance.json")))
    tar_path = os.path.join(arch_dir, "quant_references.tar")
    data = open(tar_path, "rb").read()
    if hashlib.sha256(data).hexdigest() != prov["files"]["quant_references.tar"]:
        fail("quant_references.tar differs from provenance.json")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    with tarfile.open(tar_path) as t:
        for m in t.getmembers():
            if m.isfile() and hashlib.sha256(t.extractfile(m).read()).hexdigest() != prov["quant_references"]["files"][m.name]:
                fail("member %s differs from provenance.json" % m.name)
        t.extractall(work)
    cap = os.path.join(work, "quant_references")
    run = lambda: subprocess.run([sys.executable, script, "--check-only", cap, "--check-with", fuseproof, "--show", "3"],
                                 capture_output=True, text=True)
    p = run()
    print(p.stdout[-3000:])
    if p.returncode != 0 or "total: in" not in p.stdout or "no errors found" not in p.stdout.splitlines()[-1]:
        fail("eval does not reproduce the capture (exit %d): %s" % (p.returncode, p.stderr.strip()[-500:]))
    # Negative control: one scale byte of one output flipped, the JSON's hash kept consistent.
    name = "nvfp4_quant_vllm-ref_bf16_out.bin.gz"
    path = os.path.join(cap, name)
    raw = bytearray(gzip.decompress(open(path, "rb").read()))
    raw[16] ^= 0x01  # block 0's scale byte (16 codes, then the scale)
    blob = gzip.compress(bytes(raw), mtime=0)
    open(path, "wb").write(blob)
    j = json.load(open(os.path.join(cap, "capture_quant.json")))
    j["files"][name]["sha256"] = hashlib.sha256(bytes(raw)).hexdigest()
    j["files"][name]["gz_sha256"] = hashlib.sha256(blob).hexdigest()
    json.dump(j, open(os.path.join(cap, "capture_quant.json"), "w"))
    q = run()
    if q.returncode not in (1, 4) or "nvfp4_quant vllm-ref bf16" not in q.stdout + q.stderr:
        fail("a flipped scale byte was not reported (exit %d): %s" % (q.returncode, (q.stdout + q.stderr)[-800:]))
    print("quant_golden_test: eval reproduces every captured block; the flipped byte is reported (exit %d)" %
          q.returncode)


if __name__ == "__main__":
    main()
