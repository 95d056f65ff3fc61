#!/usr/bin/env python3
"""capture_formats_test.py: scripts/capture_formats.py against `fuseproof formats` on a subset of rows.

  tree       the script's row hashing and tree code over the bytes the C++ command writes (--out), for every cast;
             negative control: one byte changed in the file changes the script's digest
  torch-cpu  the script's eager torch cast on the CPU (torch.float8_e4m3fn) against the C++ e4m3-nan digest; exit 77
             (skipped) where torch has no float8_e4m3fn (Debian's torch 1.13)
Usage: capture_formats_test.py MODE FUSEPROOF SCRIPT TMPDIR
"""
import json
import os
import subprocess
import sys

ROWS = "0x43E0:0x43F8"  # 448 .. 480 and the magnitudes around them: where the two E4M3 conventions part
CASTS = {"e4m3-saturate": ["--format", "e4m3", "--overflow", "saturate"],
         "e4m3-nan": ["--format", "e4m3", "--overflow", "nan"], "e2m1": ["--format", "e2m1"]}


def cpp(fuseproof, cast, out=None):
    args = [fuseproof, "formats", *CASTS[cast], "--rows", ROWS, "--json"] + (["--out", out] if out else [])
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)["tree"][cast]


def script(path, tmp, *args):
    j = os.path.join(tmp, "capture_formats_test.json")
    r = subprocess.run([sys.executable, path, "--rows", ROWS, "--out", j, *args], capture_output=True, text=True)
    return r.returncode, r.stderr.strip(), (json.load(open(j))["tree"] if r.returncode == 0 else None)


def main():
    mode, fuseproof, path, tmp = sys.argv[1:5]
    os.makedirs(tmp, exist_ok=True)
    failures = 0
    if mode == "tree":
        for cast in CASTS:
            rows = os.path.join(tmp, f"capture_formats_{cast}.bin")
            want = cpp(fuseproof, cast, rows)
            rc, err, got = script(path, tmp, "--from-bytes", rows, "--casts", cast)
            ok = rc == 0 and got[cast] == want
            print(f"{cast} rows {ROWS}: C++ {want}, script {got[cast] if got else err}: {'same' if ok else 'DIFFER'}")
            failures += not ok
            with open(rows, "r+b") as f:  # negative control: one output byte changed
                f.seek(12345)
                b = f.read(1)
                f.seek(12345)
                f.write(bytes([b[0] ^ 1]))
            rc, err, spoiled = script(path, tmp, "--from-bytes", rows, "--casts", cast)
            if rc != 0 or spoiled[cast] == want:
                print(f"{cast}: the digest of a changed file must differ from the C++ one ({err})")
                failures += 1
    elif mode == "torch-cpu":
        want = cpp(fuseproof, "e4m3-nan")
        rc, err, got = script(path, tmp, "--device", "cpu", "--casts", "e4m3-nan")
        if rc == 3:
            print(f"skipped: {err}")
            return 77
        ok = rc == 0 and got["e4m3-nan"] == want
        print(f"e4m3-nan rows {ROWS}: C++ {want}, torch CPU {got['e4m3-nan'] if got else err}: "
              f"{'same' if ok else 'DIFFER'}")
        failures += not ok
    else:
        raise SystemExit(f"capture_formats_test: MODE must be tree or torch-cpu, got {mode}")
    print(f"{failures} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
