#!/usr/bin/env python3
"""capture_formats_test.py: scripts/capture_formats.py against `fuseproof formats` on a subset of rows.

  tree         the script's row hashing and tree code over the bytes the C++ command writes (--out), for every cast
               (rcp-approx-ftz: four bytes per input, with the synthetic table below); negative control: one byte
               changed in the file changes the script's digest
  torch-cpu    the script's eager torch cast on the CPU (torch.float8_e4m3fn) against the C++ e4m3-nan digest; exit 77
               (skipped) where torch has no float8_e4m3fn (Debian's torch 1.13)
  rcp          the rcp.approx.ftz table both ways: the script's writer gives the bytes the C++ serializer gives (one
               SHA-256, asserted by both tests); the C++ model reads the script's table, and the script derives the
               same table back from the C++ rows of [1, 2) (--from-bytes --rcp-table); rows outside [1, 2) against a
               model written here; refusals: a result 2 patterns away (exit 4), a code 3, a wrong size, a wrong magic
  cuda-source  the CuPy kernels' CUDA source compiles with nvcc for sm_90 and the PTX holds rcp.approx.ftz.f32; exit
               77 (skipped) without nvcc
  fake-cupy    the script's CUDA path for rcp-approx-ftz (--device cuda --rcp-table --special --out) end to end, with a
               stand-in CuPy module whose kernel scales the C++ model's results on [1, 2) of the synthetic table (not a
               device): the table, the digest, the JSON and the special values come out as the C++ model says
Usage: capture_formats_test.py MODE FUSEPROOF SCRIPT TMPDIR
"""
import hashlib
import importlib.util
import json
import os
import shutil
import struct
import subprocess
import sys

ROWS = "0x43E0:0x43F8"  # 448 .. 480 and the magnitudes around them: where the two E4M3 conventions part
CASTS = {"e4m3-saturate": ["--format", "e4m3", "--overflow", "saturate"],
         "e4m3-nan": ["--format", "e4m3", "--overflow", "nan"], "e2m1": ["--format", "e2m1"],
         "rcp-approx-ftz": ["--format", "rcp-approx-ftz", "--rcp-table", "{table}"]}
# The synthetic table (period 7 over the mantissas: every code in every position of a byte) and the SHA-256 of its file,
# which property_tests/reference/rcp_approx_model_test.cpp asserts for the C++ serializer too.
RCP_PERIOD = b"\x00\x01\x02\x00\x02\x01\x01"
RCP_SYNTHETIC_SHA256 = "637ba2212c193620eab039b2965f2f4e8510030a25eab89779cb7ffd8e163fbc"


def load_script(path):
    spec = importlib.util.spec_from_file_location("capture_formats", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def synthetic_codes(cf):
    return (RCP_PERIOD * (cf.RCP_MANTISSAS // len(RCP_PERIOD) + 1))[:cf.RCP_MANTISSAS]


def write_synthetic_table(cf, tmp):
    path = os.path.join(tmp, "capture_formats_rcp_table.bin")
    with open(path, "wb") as f:
        f.write(cf.pack_rcp_table(synthetic_codes(cf)))
    return path


def cpp(fuseproof, cast, out=None, table=None, rows=ROWS):
    args = [fuseproof, "formats", *(a.format(table=table) for a in CASTS[cast]), "--rows", rows, "--json"]
    args += ["--out", out] if out else []
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)["tree"][cast]


def script(path, tmp, *args, rows=ROWS):
    j = os.path.join(tmp, "capture_formats_test.json")
    if os.path.exists(j):
        os.remove(j)
    r = subprocess.run([sys.executable, path, "--rows", rows, "--out", j, *args], capture_output=True, text=True)
    return r.returncode, r.stderr.strip(), (json.load(open(j))["tree"] if r.returncode == 0 else None)


def rcp_model(x, results):
    """rcp.approx.ftz.f32 of pattern x from the results on [1, 2), written from the definition (reference/
    rcp_approx_model.h's table): scale the result of the mantissa by 2^(127 - E), flush what is not normal."""
    sign, e, k = x & 0x80000000, (x >> 23) & 0xFF, x & 0x7FFFFF
    if e == 0xFF:
        return 0x7FFFFFFF if k else sign
    if e == 0:
        return sign | 0x7F800000
    y = results[k]
    e_out = (y >> 23) + 127 - e
    return sign | (e_out << 23) | (y & 0x7FFFFF) if e_out >= 1 else sign


def rcp_mode(fuseproof, path, tmp):
    cf = load_script(path)
    failures = 0

    def check(ok, what):
        nonlocal failures
        print(f"{'ok' if ok else 'FAILED'}: {what}")
        failures += not ok

    codes = synthetic_codes(cf)
    data = cf.pack_rcp_table(codes)
    check(hashlib.sha256(data).hexdigest() == RCP_SYNTHETIC_SHA256,
          "the script's writer gives the C++ serializer's bytes")
    check(cf.unpack_rcp_table(data) == codes, "the script's reader gives the codes back")
    for bad, want in ((data[:-1], "must hold 2097184 bytes, got 2097183"), (b"X" + data[1:], "magic"),
                      (data[:32] + bytes([0x30]) + data[33:], "got 3 at mantissa 2")):
        try:
            cf.unpack_rcp_table(bad)
            check(False, f"the script's reader refuses ({want})")
        except cf.Corrupt as e:
            check(want in str(e), f"the script's reader refuses: {e}")

    table = write_synthetic_table(cf, tmp)
    rcp_rows = f"0x{cf.RCP_ROWS[0]:04X}:0x{cf.RCP_ROWS[1]:04X}"
    rows_file = os.path.join(tmp, "capture_formats_rcp_rows.bin")
    want = cpp(fuseproof, "rcp-approx-ftz", rows_file, table, rcp_rows)
    back = os.path.join(tmp, "capture_formats_rcp_back.bin")
    rc, err, got = script(path, tmp, "--from-bytes", rows_file, "--casts", "rcp-approx-ftz", "--rcp-table", back,
                          rows=rcp_rows)
    check(rc == 0 and got["rcp-approx-ftz"] == want, f"rows {rcp_rows}: C++ {want}, script {got or err}")
    check(rc == 0 and open(back, "rb").read() == data,
          "the table the script derives from the C++ rows of [1, 2) is the table the C++ model read")

    # The C++ rows outside [1, 2) against the model written above, from the same results.
    with open(rows_file, "rb") as f:
        results = struct.unpack(f"<{cf.RCP_MANTISSAS}I", f.read())
    other = os.path.join(tmp, "capture_formats_rcp_other.bin")
    for r in (0x8000, 0x0080, 0x4040, 0x7E7F, 0xFE80, 0x7F80):
        cpp(fuseproof, "rcp-approx-ftz", other, table, f"{r}:{r + 1}")
        with open(other, "rb") as f:
            row = struct.unpack("<65536I", f.read())
        bad = [lo for lo in range(65536) if row[lo] != rcp_model((r << 16) | lo, results)]
        check(not bad, f"row 0x{r:04X}: C++ against the model here" +
              (f": x=0x{(r << 16) | bad[0]:08X} => 0x{row[bad[0]]:08X} expected "
               f"0x{rcp_model((r << 16) | bad[0], results):08X} ({len(bad)} differ)" if bad else ""))

    # Controls: one result moved one pattern moves that code alone (in this process); two patterns cannot be held: the
    # script exits 4 with one line and writes no table.
    k = 12348  # code 0 in the synthetic table (k % 7 == 0)
    raw = bytearray(open(rows_file, "rb").read())
    moved = bytearray(raw)
    moved[4 * k:4 * k + 4] = struct.pack("<I", results[k] + 1)
    new = cf.rcp_codes_from_results(moved)
    alone = new[:k] == codes[:k] and new[k + 1:] == codes[k + 1:] and new[k:k + 1] == b"\x02"
    check(alone, f"a result moved +1 pattern changes mantissa {k}'s code alone, to 2")
    moved[4 * k:4 * k + 4] = struct.pack("<I", results[k] + 2)
    moved_file = os.path.join(tmp, "capture_formats_rcp_moved.bin")
    with open(moved_file, "wb") as f:
        f.write(moved)
    out = os.path.join(tmp, "capture_formats_rcp_moved_table.bin")
    if os.path.exists(out):
        os.remove(out)
    rc, err, _ = script(path, tmp, "--from-bytes", moved_file, "--casts", "rcp-approx-ftz", "--rcp-table", out,
                        rows=rcp_rows)
    check(rc == 4 and "\n" not in err and "+2 binary32 patterns" in err and not os.path.exists(out),
          f"a result moved +2 patterns: exit {rc}, {err}")

    # The C++ reader refuses a code 3 (exit 4, one line).
    bad_table = os.path.join(tmp, "capture_formats_rcp_bad.bin")
    with open(bad_table, "wb") as f:
        f.write(data[:40] + bytes([data[40] | 0xC0]) + data[41:])
    r = subprocess.run([fuseproof, "formats", "--format", "rcp-approx-ftz", "--rcp-table", bad_table, "--rows", "0:1"],
                       capture_output=True, text=True)
    check(r.returncode == 4 and r.stderr.count("\n") == 1 and "got 3 at mantissa 35" in r.stderr,
          f"the C++ reader refuses a code 3: exit {r.returncode}, {r.stderr.strip()}")
    return failures


FAKE_CUPY = r'''"""A stand-in for CuPy: the rcp_rows kernel computes rcp.approx.ftz from the results on [1, 2) that
`fuseproof formats --out` wrote (FAKE_CUPY_RESULTS): the model, not a device."""
import array
import os

_Y = array.array("I")
_Y.frombytes(open(os.environ["FAKE_CUPY_RESULTS"], "rb").read())


class _Type(str):
    def __call__(self, v):
        return int(v)


uint8, uint32, uint64, int32 = _Type("B"), _Type("I"), _Type("Q"), _Type("i")


class _Array:
    def __init__(self, a):
        self.a = a

    def view(self, dtype):
        b = array.array(str(dtype))
        b.frombytes(self.a.tobytes())
        return _Array(b)


def empty(n, dtype):
    return _Array(array.array(str(dtype), [0]) * n)


def asnumpy(x):
    return x.a


def _rcp(x):
    s, e, k = x & 0x80000000, (x >> 23) & 0xFF, x & 0x7FFFFF
    if e == 0xFF:
        return 0x7FFFFFFF if k else s
    if e == 0:
        return s | 0x7F800000
    y = _Y[k]
    e_out = (y >> 23) + 127 - e
    return s | (e_out << 23) | (y & 0x7FFFFF) if e_out >= 1 else s


class RawKernel:
    def __init__(self, source, name, options=()):
        assert name == "rcp_rows" and "rcp.approx.ftz.f32" in source, name

    def __call__(self, grid, block, args):
        first, n, out = int(args[0]), int(args[1]), args[2]
        lo = (first << 16) - 0x3F800000
        if 0 <= lo and lo + n <= len(_Y):  # the rows of [1, 2): the results themselves
            out.a = _Y[lo:lo + n]
        else:
            out.a = array.array("I", (_rcp((first << 16) + i) for i in range(n)))
'''


def fake_cupy_mode(fuseproof, path, tmp):
    cf = load_script(path)
    failures = 0

    def check(ok, what):
        nonlocal failures
        print(f"{'ok' if ok else 'FAILED'}: {what}")
        failures += not ok

    table = write_synthetic_table(cf, tmp)
    results = os.path.join(tmp, "fake_cupy_results.bin")
    cpp(fuseproof, "rcp-approx-ftz", results, table, f"0x{cf.RCP_ROWS[0]:04X}:0x{cf.RCP_ROWS[1]:04X}")
    fake = os.path.join(tmp, "fake_cupy")
    os.makedirs(fake, exist_ok=True)
    with open(os.path.join(fake, "cupy.py"), "w") as f:
        f.write(FAKE_CUPY)
    env = dict(os.environ, PYTHONPATH=fake, FAKE_CUPY_RESULTS=results)
    out_table, j = os.path.join(tmp, "fake_cupy_table.bin"), os.path.join(tmp, "fake_cupy.json")
    rows = "0x7E7F:0x7E81"
    r = subprocess.run([sys.executable, path, "--device", "cuda", "--casts", "rcp-approx-ftz", "--rcp-table", out_table,
                        "--special", "--rows", rows, "--out", j], capture_output=True, text=True, env=env)
    check(r.returncode == 0, f"--device cuda with the stand-in: exit {r.returncode} {r.stderr.strip()[-300:]}")
    if r.returncode:
        return failures
    doc = json.load(open(j))
    check(open(out_table, "rb").read() == open(table, "rb").read(), "the table written is the stand-in's table")
    check(doc["rcp_table"]["sha256"] == RCP_SYNTHETIC_SHA256, f"the JSON's table SHA-256 {doc['rcp_table']['sha256']}")
    check(doc["bytes_per_output"] == {"rcp-approx-ftz": 4}, f"bytes_per_output {doc['bytes_per_output']}")
    want = cpp(fuseproof, "rcp-approx-ftz", None, table, rows)
    check(doc["tree"]["rcp-approx-ftz"] == want, f"rows {rows}: C++ {want}, script {doc['tree']}")
    special = doc["special"]["rcp-approx-ftz"]
    check(len(special) == len(cf.RCP_SPECIAL), f"{len(special)} special values of {len(cf.RCP_SPECIAL)}")
    for x, y in (("0x00000000", "0x7F800000"), ("0x807FFFFF", "0xFF800000"), ("0xFF800000", "0x80000000"),
                 ("0xFFC00000", "0x7FFFFFFF"), ("0x7E800000", "0x00800000"), ("0x7E800001", "0x00000000")):
        check(special.get(x) == y, f"special {x} => {special.get(x)}, the model gives {y}")
    return failures


def cuda_source_mode(path, tmp):
    """The CuPy sources through nvcc (CuPy compiles them with NVRTC on the device; nvcc is the same front end)."""
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
    if not nvcc:
        print("skipped: no nvcc")
        return None
    cf = load_script(path)
    failures = 0
    for name, source in (("cast", cf._CUPY_SOURCE), ("rcp", cf._CUPY_RCP_SOURCE)):
        cu = os.path.join(tmp, f"capture_formats_{name}.cu")
        with open(cu, "w") as f:
            f.write(source)
        for kind in ("-c", "-ptx"):
            out = os.path.join(tmp, f"capture_formats_{name}{'.o' if kind == '-c' else '.ptx'}")
            r = subprocess.run([nvcc, "-arch=sm_90", "-std=c++17", kind, cu, "-o", out], capture_output=True, text=True)
            ok = r.returncode == 0
            print(f"{'ok' if ok else 'FAILED'}: nvcc -arch=sm_90 {kind} {name}: {r.stderr.strip()[-300:]}")
            failures += not ok
    ptx = open(os.path.join(tmp, "capture_formats_rcp.ptx")).read()
    ok = "rcp.approx.ftz.f32" in ptx
    print(f"{'ok' if ok else 'FAILED'}: the rcp kernel's PTX holds rcp.approx.ftz.f32")
    return failures + (not ok)


def main():
    mode, fuseproof, path, tmp = sys.argv[1:5]
    # A folder per mode: ctest runs the modes side by side, and each writes files of the same names (the synthetic
    # table, the script's JSON).
    tmp = os.path.join(tmp, mode)
    os.makedirs(tmp, exist_ok=True)
    failures = 0
    if mode == "tree":
        table = write_synthetic_table(load_script(path), tmp)
        for cast in CASTS:
            rows = os.path.join(tmp, f"capture_formats_{cast}.bin")
            want = cpp(fuseproof, cast, rows, table)
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
    elif mode == "rcp":
        failures += rcp_mode(fuseproof, path, tmp)
    elif mode == "fake-cupy":
        failures += fake_cupy_mode(fuseproof, path, tmp)
    elif mode == "cuda-source":
        n = cuda_source_mode(path, tmp)
        if n is None:
            return 77
        failures += n
    else:
        raise SystemExit(f"capture_formats_test: MODE must be tree, torch-cpu, rcp, fake-cupy or cuda-source, "
                         f"got {mode}")
    print(f"{failures} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
