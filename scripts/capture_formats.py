#!/usr/bin/env python3
"""capture_formats.py: the device's narrow-format casts of every binary32 pattern, as the tree digests that
`fuseproof formats` computes from the reference (reference/format_cast.h).

Layout (the same on both sides): row r = 0x0000..0xFFFF holds the binary32 patterns (r << 16) | lo for lo = 0x0000..0xFFFF
in order, one output byte each; r(i) = lower-case hex SHA-256 of row i's 65,536 bytes; the tree digest = hex SHA-256
of r(first) || r(first+1) || ... (64 ASCII characters each), common/tree_digest.h's sweep_tree_digest_bytes.

Casts (--casts, comma-separated):
  e4m3-nan       eager `x.to(torch.float8_e4m3fn)` on --device (c10's fp8e4m3fn_from_fp32_value: NaN above 464)
  e4m3-saturate  CUDA's __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3) in a CuPy kernel (cvt.rn.satfinite.e4m3x2.f32
                 on sm_89+); eager torch has no saturating cast. CUDA only
  e2m1           CUDA's __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest) in a CuPy kernel, the code in the low
                 nibble: cvt.rn.satfinite.e2m1x2.f32 on sm_100+, CUDA's software emulation of it on sm_90. CUDA only
Prints one line per cast and, with --out, writes JSON: {"rows", "layout", "tree": {cast: digest}, "provenance"}, plus
"special": each cast's code for the special inputs below (hex binary32 -> hex code), the binary32 bits of every
E4M3 code widened by torch (`.to(torch.float32)`), and torch.sign of -0.0 and of the NaNs (vLLM's E2M1 table
multiplies by it).

--from-bytes FILE hashes a file of rows instead (as `fuseproof formats --out FILE` writes them): the self-test of this
script's tree code against the C++ one, needing no torch.

On the CPU (--device cpu), torch older than 2.1 has no torch.float8_e4m3fn: the script then says so on one line and
exits 3 (the capture is incomplete), which the CPU ctest reports as skipped.
"""
import argparse
import concurrent.futures
import datetime
import hashlib
import json
import os
import platform
import sys

ROW = 65536
CASTS = ("e4m3-saturate", "e4m3-nan", "e2m1")
LAYOUT = ("row r: binary32 patterns (r << 16) | lo, lo = 0..65535, one output byte each; "
          "tree = SHA-256 of the rows' hex SHA-256s in row order")

# CuPy kernels: one thread per input pattern of a block of rows. cuda_fp8.h / cuda_fp4.h choose the instruction where
# the architecture has it and CUDA's own software conversion elsewhere.
_CUPY_SOURCE = r"""
#include <cuda_fp8.h>
#include <cuda_fp4.h>
extern "C" __global__ void cast_rows(unsigned int first_row, unsigned long long n, int which, unsigned char* out) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned int bits = (first_row << 16) + (unsigned int)i;
  float x = __uint_as_float(bits);
  if (which == 0) out[i] = __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3);
  else out[i] = __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest) & 0xF;
}
"""


class Incomplete(Exception):
    """The capture cannot be made here (exit 3)."""


def parse_rows(text):
    try:
        a, b = (int(t, 0) for t in text.split(":"))
    except ValueError:
        a, b = -1, -1
    if not 0 <= a < b <= ROW:
        raise SystemExit(f"capture_formats: --rows must be FIRST:END with 0 <= FIRST < END <= 65536, got {text}")
    return a, b


def tree_of_rows(row_blocks, pool):
    """The tree digest of an ordered stream of row blocks (bytes-like, a whole number of 65,536-byte rows each): row
    digests in parallel (hashlib releases the GIL on large buffers), joined in order."""
    tree = hashlib.sha256()
    for block in row_blocks:
        mv = memoryview(block).cast("B")
        if len(mv) % ROW:
            raise ValueError(f"a block of {len(mv)} bytes is not a whole number of {ROW}-byte rows")
        futures = [pool.submit(lambda m: hashlib.sha256(m).hexdigest(), mv[k * ROW:(k + 1) * ROW])
                   for k in range(len(mv) // ROW)]
        for f in futures:
            tree.update(f.result().encode("ascii"))
    return tree.hexdigest()


def file_blocks(path, first, end):
    size = os.path.getsize(path)
    if size != (end - first) * ROW:
        raise SystemExit(f"capture_formats: --from-bytes {path} must hold {(end - first) * ROW} bytes "
                         f"(rows {first}:{end}), got {size}")
    with open(path, "rb") as f:
        while True:
            block = f.read(256 * ROW)
            if not block:
                return
            yield block


def torch_blocks(first, end, device, block):
    import torch
    if not hasattr(torch, "float8_e4m3fn"):
        raise Incomplete(f"torch {torch.__version__} has no torch.float8_e4m3fn: the e4m3-nan cast cannot be captured "
                         f"here (torch 2.1 or newer has it)")
    lo = torch.arange(ROW, dtype=torch.int64, device=device)
    for r0 in range(first, end, block):
        n = min(block, end - r0)
        bits = (torch.arange(r0, r0 + n, dtype=torch.int64, device=device) << 16).unsqueeze(1) | lo
        bits = torch.where(bits >= 2 ** 31, bits - 2 ** 32, bits).to(torch.int32)  # the int32 of the same 32 bits
        codes = bits.view(torch.float32).to(torch.float8_e4m3fn).view(torch.uint8)
        yield codes.contiguous().cpu().numpy()


def cupy_blocks(first, end, which, block):
    try:
        import cupy
    except ImportError as e:
        raise Incomplete(f"no CuPy ({e}): the CUDA conversions cannot be captured here")
    kernel = cupy.RawKernel(_CUPY_SOURCE, "cast_rows", options=("--std=c++17",))
    for r0 in range(first, end, block):
        n = min(block, end - r0) * ROW
        out = cupy.empty(n, dtype=cupy.uint8)
        threads = 256
        kernel(((n + threads - 1) // threads,), (threads,), (cupy.uint32(r0), cupy.uint64(n), cupy.int32(which), out))
        yield cupy.asnumpy(out)


SPECIAL = (0x00000000, 0x80000000, 0x3F800000, 0x43E00000, 0x43E7FFFF, 0x43E80000, 0x43E80001, 0xC3E80001, 0x43EFFFFF,
           0x43F00000, 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FFFFFFF,
           0xFFFFFFFF, 0x3A800000, 0xBA800000, 0x3A800001, 0x3B000000, 0x3B400000, 0x3C700000, 0x3E800000,
           0xBE800000, 0x3F400000, 0x3FA00000, 0x3FE00000, 0x40200000, 0x40600000, 0x40A00000, 0x40C00000,
           0x40D00000, 0x40E00000, 0xC0E00001, 0x00000001, 0x80000001)


def special_values(casts, device):
    """{cast: {input hex: code hex}} for SPECIAL, by the same code paths as the digests (one row of 65,536 each)."""
    out = {}
    for c in casts:
        got = {}
        for u in SPECIAL:
            r = u >> 16
            blocks = (torch_blocks(r, r + 1, device, 1) if c == "e4m3-nan"
                      else cupy_blocks(r, r + 1, 0 if c == "e4m3-saturate" else 1, 1))
            row = next(iter(blocks))
            got[f"0x{u:08X}"] = f"0x{int(row.reshape(-1)[u & 0xFFFF]):02X}"
        out[c] = got
    import torch
    if "e4m3-nan" in casts:
        codes = torch.arange(256, dtype=torch.int32, device=device).to(torch.uint8).view(torch.float8_e4m3fn)
        wide = codes.to(torch.float32).view(torch.int32).cpu().tolist()
        out["e4m3_to_float32"] = {f"0x{c:02X}": f"0x{w & 0xFFFFFFFF:08X}" for c, w in enumerate(wide)}
    x = torch.tensor([-0.0, 0.0, float("nan"), -float("nan")], device=device)
    out["torch_sign"] = {k: f"0x{v & 0xFFFFFFFF:08X}" for k, v in
                         zip(("-0.0", "+0.0", "nan", "-nan"), torch.sign(x).view(torch.int32).cpu().tolist())}
    return out


def provenance(device):
    p = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
         "host": platform.node(), "python": platform.python_version(), "command": " ".join(sys.argv)}
    try:
        import torch
        p["torch"] = torch.__version__
        if device == "cuda" and torch.cuda.is_available():
            p["gpu"] = torch.cuda.get_device_name(0)
            p["capability"] = "sm_%d%d" % torch.cuda.get_device_capability(0)
            p["cuda"] = torch.version.cuda
    except ImportError:
        pass
    return p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--casts", default="e4m3-nan", help="comma-separated: " + ", ".join(CASTS))
    ap.add_argument("--rows", default="0:65536", help="FIRST:END, row r = binary32 patterns r << 16 .. + 0xFFFF")
    ap.add_argument("--block", type=int, default=1024, help="rows per device block")
    ap.add_argument("--from-bytes", help="hash this file of rows (`fuseproof formats --out`) as the one cast given")
    ap.add_argument("--out", help="write the digests as JSON here")
    ap.add_argument("--special", action="store_true", help="add the special inputs' codes to --out's JSON")
    args = ap.parse_args()
    first, end = parse_rows(args.rows)
    casts = args.casts.split(",")
    for c in casts:
        if c not in CASTS:
            raise SystemExit(f"capture_formats: --casts entries must be one of {', '.join(CASTS)}, got {c}")
    if args.from_bytes and len(casts) != 1:
        raise SystemExit(f"capture_formats: --from-bytes needs exactly one cast, got {args.casts}")
    tree = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        try:
            for c in casts:
                if args.from_bytes:
                    blocks = file_blocks(args.from_bytes, first, end)
                elif c == "e4m3-nan":
                    blocks = torch_blocks(first, end, args.device, args.block)
                elif args.device != "cuda":
                    raise Incomplete(f"{c} is CUDA's conversion: it needs --device cuda, got {args.device}")
                else:
                    blocks = cupy_blocks(first, end, 0 if c == "e4m3-saturate" else 1, args.block)
                tree[c] = tree_of_rows(blocks, pool)
                print(f"{c} tree {tree[c]} (rows {first}:{end}, {(end - first) * ROW} inputs)", flush=True)
        except Incomplete as e:
            print(f"capture_formats: {e}", file=sys.stderr)
            return 3
    if args.out:
        doc = {"rows": f"{first}:{end}", "layout": LAYOUT, "tree": tree,
               "provenance": provenance(args.device) if not args.from_bytes else {"from_bytes": args.from_bytes}}
        if args.special and not args.from_bytes:
            doc["special"] = special_values(casts, args.device)
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
