#!/usr/bin/env python3
"""capture_formats.py: the device's narrow-format casts and rcp.approx.ftz of every binary32 pattern, as the tree
digests that `fuseproof formats` computes from the reference (reference/format_cast.h, reference/rcp_approx_model.h).

Layout (the same on both sides): row r = 0x0000..0xFFFF holds the binary32 patterns (r << 16) | lo for lo = 0x0000..0xFFFF
in order, BYTES_PER_OUTPUT[cast] output bytes each (little-endian); r(i) = lower-case hex SHA-256 of row i's
65,536 * BYTES_PER_OUTPUT[cast] bytes; the tree digest = hex SHA-256 of r(first) || r(first+1) || ... (64 ASCII
characters each), common/tree_digest.h's sweep_tree_digest_bytes. The JSON names each cast's width
("bytes_per_output").

Casts (--casts, comma-separated):
  e4m3-nan       eager `x.to(torch.float8_e4m3fn)` on --device (c10's fp8e4m3fn_from_fp32_value: NaN above 464)
  e4m3-saturate  CUDA's __nv_cvt_float_to_fp8(x, __NV_SATFINITE, __NV_E4M3) in a CuPy kernel (cvt.rn.satfinite.e4m3x2.f32
                 on sm_89+); eager torch has no saturating cast. CUDA only
  e2m1           CUDA's __nv_cvt_float_to_fp4(x, __NV_E2M1, cudaRoundNearest) in a CuPy kernel, the code in the low
                 nibble: cvt.rn.satfinite.e2m1x2.f32 on sm_100+, CUDA's software emulation of it on sm_90. CUDA only
  rcp-approx-ftz PTX `rcp.approx.ftz.f32` (inline asm in a CuPy kernel), the result's binary32 bits, four bytes
                 little-endian per input. CUDA only

--rcp-table FILE writes rcp.approx.ftz's table of the 2^23 mantissas of [1, 2) (the patterns 0x3F800000..0x3FFFFFFF,
rows 0x3F80:0x4000 of the rcp-approx-ftz capture) in reference/rcp_approx_model.h's file layout: the magic, then one
2-bit code per mantissa, the result against the correctly rounded 1/x (0 equal, 1 one binary32 pattern below, 2 one
above). A result further away cannot be held by that layout: the script then says so on one line and exits 4. On
CUDA the table comes from the device before any digest; with --from-bytes (cast rcp-approx-ftz, rows covering
0x3F80:0x4000) from the file's rows: the self-test of this table code against the C++ one.
Prints one line per cast and, with --out, writes JSON: {"rows", "layout", "tree": {cast: digest}, "provenance"}, plus
"special": each cast's code for the special inputs below (hex binary32 -> hex code; rcp-approx-ftz its own inputs:
RCP_SPECIAL), the binary32 bits of every
E4M3 code widened by torch (`.to(torch.float32)`), and torch.sign of -0.0 and of the NaNs (vLLM's E2M1 table
multiplies by it).

--from-bytes FILE hashes a file of rows instead (as `fuseproof formats --out FILE` writes them): the self-test of this
script's tree code against the C++ one, needing no torch or CuPy.

On the CPU (--device cpu), torch older than 2.1 has no torch.float8_e4m3fn: the script then says so on one line and
exits 3 (the capture is incomplete), which the CPU ctest reports as skipped; so do the CUDA casts and --rcp-table
without CUDA (CuPy).
"""
import argparse
import array
import concurrent.futures
import datetime
import hashlib
import json
import os
import platform
import sys

ROW = 65536
CASTS = ("e4m3-saturate", "e4m3-nan", "e2m1", "rcp-approx-ftz")
BYTES_PER_OUTPUT = {"e4m3-saturate": 1, "e4m3-nan": 1, "e2m1": 1, "rcp-approx-ftz": 4}
LAYOUT = ("row r: binary32 patterns (r << 16) | lo, lo = 0..65535, bytes_per_output[cast] output bytes each "
          "(little-endian); tree = SHA-256 of the rows' hex SHA-256s in row order")

# rcp.approx.ftz's table (reference/rcp_approx_model.h): the mantissas of [1, 2) are rows RCP_ROWS of the domain.
RCP_MANTISSAS = 1 << 23
RCP_ROWS = (0x3F80, 0x4000)
RCP_MAGIC = b"fuseproof rcp.approx.ftz.f32 v1\n"
RCP_TABLE_BYTES = len(RCP_MAGIC) + RCP_MANTISSAS // 4

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

# rcp.approx.ftz.f32 as the NVFP4 quantization kernels write it (reciprocal_approximate_ftz): inline PTX, the result's
# bits stored as they are (a little-endian device: four bytes, low first, per input).
_CUPY_RCP_SOURCE = r"""
extern "C" __global__ void rcp_rows(unsigned int first_row, unsigned long long n, unsigned int* out) {
  unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (i >= n) return;
  unsigned int bits = (first_row << 16) + (unsigned int)i;
  float y;
  asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(__uint_as_float(bits)));
  out[i] = __float_as_uint(y);
}
"""


class Incomplete(Exception):
    """The capture cannot be made here (exit 3)."""


class Corrupt(Exception):
    """The data cannot be what it claims, or cannot be held by the table layout (exit 4)."""


def parse_rows(text):
    try:
        a, b = (int(t, 0) for t in text.split(":"))
    except ValueError:
        a, b = -1, -1
    if not 0 <= a < b <= ROW:
        raise SystemExit(f"capture_formats: --rows must be FIRST:END with 0 <= FIRST < END <= 65536, got {text}")
    return a, b


def tree_of_rows(row_blocks, pool, row_bytes=ROW):
    """The tree digest of an ordered stream of row blocks (bytes-like, a whole number of row_bytes-byte rows each): row
    digests in parallel (hashlib releases the GIL on large buffers), joined in order."""
    tree = hashlib.sha256()
    for block in row_blocks:
        mv = memoryview(block).cast("B")
        if len(mv) % row_bytes:
            raise ValueError(f"a block of {len(mv)} bytes is not a whole number of {row_bytes}-byte rows")
        futures = [pool.submit(lambda m: hashlib.sha256(m).hexdigest(), mv[k * row_bytes:(k + 1) * row_bytes])
                   for k in range(len(mv) // row_bytes)]
        for f in futures:
            tree.update(f.result().encode("ascii"))
    return tree.hexdigest()


def file_blocks(path, first, end, row_bytes=ROW):
    size = os.path.getsize(path)
    if size != (end - first) * row_bytes:
        raise SystemExit(f"capture_formats: --from-bytes {path} must hold {(end - first) * row_bytes} bytes "
                         f"(rows {first}:{end}, {row_bytes} bytes each), got {size}")
    with open(path, "rb") as f:
        while True:
            block = f.read(64 * row_bytes)
            if not block:
                return
            yield block


def rcp_correctly_rounded_bits():
    """The binary32 patterns of the correctly rounded 1/m for the 2^23 mantissas m of [1, 2), in order: 1/m in double
    (correctly rounded), then to binary32 (array 'f'): the double rounding is exact for a quotient, 53 >= 2 * 24 + 2."""
    xs = array.array("f")
    xs.frombytes(array.array("I", range(0x3F800000, 0x40000000)).tobytes())
    q = array.array("f", (1.0 / v for v in xs))
    out = array.array("I")
    out.frombytes(q.tobytes())
    return out


def rcp_codes_from_results(results):
    """The 2^23 table codes (bytes, 0, 1 or 2) of the device's results on the mantissas of [1, 2): `results` is their
    binary32 patterns, four bytes little-endian each. Corrupt when one lies further than one pattern from 1/m."""
    got = array.array("I")
    got.frombytes(bytes(results))
    if sys.byteorder != "little":
        got.byteswap()
    if len(got) != RCP_MANTISSAS:
        raise Corrupt(f"rcp table: {RCP_MANTISSAS} results needed for [1, 2), got {len(got)}")
    cr = rcp_correctly_rounded_bits()
    codes = bytes(0 if r == c else 1 if r == c - 1 else 2 if r == c + 1 else 3 for r, c in zip(got, cr))
    k = codes.find(3)
    if k >= 0:
        raise Corrupt(f"rcp table: rcp.approx.ftz.f32(0x{0x3F800000 | k:08X}) = 0x{got[k]:08X} is "
                      f"{int(got[k]) - int(cr[k]):+d} binary32 patterns from the correctly rounded 1/x 0x{cr[k]:08X}: "
                      f"the 2-bit table layout holds 0 or +-1 only and must change")
    return codes


def pack_rcp_table(codes):
    """The table file's bytes: the magic, then the codes four to a byte, mantissa k in bits 2 (k % 4) of byte k / 4."""
    if len(codes) != RCP_MANTISSAS or max(codes) > 2:
        raise ValueError(f"pack_rcp_table: {RCP_MANTISSAS} codes of 0, 1 or 2 needed, got {len(codes)} "
                         f"up to {max(codes) if codes else None}")
    packed = 0
    for j in range(4):  # fields of 2 bits: no carry into the next byte
        packed |= int.from_bytes(codes[j::4], "little") << (2 * j)
    return RCP_MAGIC + packed.to_bytes(RCP_MANTISSAS // 4, "little")


_RCP_FIELD = [bytes((b >> (2 * j)) & 3 for b in range(256)) for j in range(4)]
_RCP_BAD = bytes(int(any((b >> (2 * j)) & 3 == 3 for j in range(4))) for b in range(256))


def unpack_rcp_table(data):
    """The codes (bytes) of a table file's bytes; Corrupt for a wrong size, magic or a code 3."""
    if len(data) != RCP_TABLE_BYTES:
        raise Corrupt(f"rcp table: the file must hold {RCP_TABLE_BYTES} bytes, got {len(data)}")
    if data[:len(RCP_MAGIC)] != RCP_MAGIC:
        raise Corrupt("rcp table: the file must start with the magic \"fuseproof rcp.approx.ftz.f32 v1\", it does not")
    packed = bytes(data[len(RCP_MAGIC):])
    i = packed.translate(_RCP_BAD).find(1)
    if i >= 0:
        j = next(j for j in range(4) if (packed[i] >> (2 * j)) & 3 == 3)
        raise Corrupt(f"rcp table: codes must be 0, 1 or 2, got 3 at mantissa {4 * i + j}")
    codes = bytearray(RCP_MANTISSAS)
    for j in range(4):
        codes[j::4] = packed.translate(_RCP_FIELD[j])
    return bytes(codes)


def write_rcp_table(path, results):
    """The table of the results on [1, 2) written to `path` (a temporary file, then a rename), read back and checked;
    returns its summary for the JSON."""
    codes = rcp_codes_from_results(results)
    data = pack_rcp_table(codes)
    if unpack_rcp_table(data) != codes:
        raise AssertionError("rcp table: the packed table does not read back as the codes")
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    return {"path": path, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
            "codes": {"equal": codes.count(0), "minus_one": codes.count(1), "plus_one": codes.count(2)}}


def torch_blocks(first, end, device, block):
    try:
        import torch
    except ImportError as e:
        raise Incomplete(f"no torch ({e}): the e4m3-nan cast cannot be captured here")
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


def cupy_rcp_blocks(first, end, block):
    """rcp.approx.ftz.f32 of rows first..end on the device: four bytes per input, little-endian (as stored)."""
    try:
        import cupy
    except ImportError as e:
        raise Incomplete(f"no CuPy ({e}): rcp.approx.ftz.f32 cannot be captured here")
    kernel = cupy.RawKernel(_CUPY_RCP_SOURCE, "rcp_rows", options=("--std=c++17",))
    for r0 in range(first, end, block):
        n = min(block, end - r0) * ROW
        out = cupy.empty(n, dtype=cupy.uint32)
        threads = 256
        kernel(((n + threads - 1) // threads,), (threads,), (cupy.uint32(r0), cupy.uint64(n), out))
        yield cupy.asnumpy(out.view(cupy.uint8))


def device_blocks(cast, first, end, device, block):
    """The cast's rows first..end on the device, in order."""
    if cast == "e4m3-nan":
        return torch_blocks(first, end, device, block)
    if device != "cuda":
        raise Incomplete(f"{cast} is CUDA's: it needs --device cuda, got {device}")
    if cast == "rcp-approx-ftz":
        return cupy_rcp_blocks(first, end, block)
    return cupy_blocks(first, end, 0 if cast == "e4m3-saturate" else 1, block)


SPECIAL = (0x00000000, 0x80000000, 0x3F800000, 0x43E00000, 0x43E7FFFF, 0x43E80000, 0x43E80001, 0xC3E80001, 0x43EFFFFF,
           0x43F00000, 0x7F7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FFFFFFF,
           0xFFFFFFFF, 0x3A800000, 0xBA800000, 0x3A800001, 0x3B000000, 0x3B400000, 0x3C700000, 0x3E800000,
           0xBE800000, 0x3F400000, 0x3FA00000, 0x3FE00000, 0x40200000, 0x40600000, 0x40A00000, 0x40C00000,
           0x40D00000, 0x40E00000, 0xC0E00001, 0x00000001, 0x80000001)


# rcp.approx.ftz: zeros, subnormals (flushed), the smallest and largest normals, Inf, NaNs, 1 and its neighbours, 2^126
# and above (the result becomes subnormal: flushed), the NVFP4 constants 6.0 and 448.0.
RCP_SPECIAL = (0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x00400000, 0x007FFFFF, 0x807FFFFF, 0x00800000,
               0x80800000, 0x00800001, 0x7F7FFFFF, 0xFF7FFFFF, 0x7F800000, 0xFF800000, 0x7FC00000, 0xFFC00000,
               0x7F800001, 0xFF800001, 0x7FFFFFFF, 0xFFFFFFFF, 0x3F800000, 0xBF800000, 0x3F800001, 0x3F7FFFFF,
               0x3FFFFFFF, 0x3FC00000, 0x40400000, 0x7E800000, 0x7E800001, 0x7E7FFFFF, 0x7EFFFFFF, 0x7F000000,
               0xFE800001, 0x40C00000, 0xC0C00000, 0x43E00000, 0x3DAAAAAB, 0x3B124925)


def special_values(casts, device):
    """{cast: {input hex: code hex}} for SPECIAL (RCP_SPECIAL, results as binary32 hex), by the same code paths as the
    digests (one row of 65,536 each)."""
    out = {}
    for c in casts:
        got, rows = {}, {}
        width = BYTES_PER_OUTPUT[c]
        for u in (RCP_SPECIAL if c == "rcp-approx-ftz" else SPECIAL):
            r = u >> 16
            if r not in rows:
                rows[r] = bytes(memoryview(next(iter(device_blocks(c, r, r + 1, device, 1)))).cast("B"))
            row = rows[r]
            lo = (u & 0xFFFF) * width
            got[f"0x{u:08X}"] = f"0x{int.from_bytes(row[lo:lo + width], 'little'):0{2 * width}X}"
        out[c] = got
    if not set(casts) & {"e4m3-nan", "e4m3-saturate", "e2m1"}:
        return out
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
    ap.add_argument("--rcp-table", help="write rcp.approx.ftz's table of [1, 2) here (reference/rcp_approx_model.h)")
    args = ap.parse_args()
    first, end = parse_rows(args.rows)
    casts = args.casts.split(",")
    for c in casts:
        if c not in CASTS:
            raise SystemExit(f"capture_formats: --casts entries must be one of {', '.join(CASTS)}, got {c}")
    if args.from_bytes and len(casts) != 1:
        raise SystemExit(f"capture_formats: --from-bytes needs exactly one cast, got {args.casts}")
    covers = first <= RCP_ROWS[0] and RCP_ROWS[1] <= end
    if args.from_bytes and args.rcp_table and (casts != ["rcp-approx-ftz"] or not covers):
        raise SystemExit(f"capture_formats: --rcp-table with --from-bytes needs --casts rcp-approx-ftz and --rows "
                         f"covering 0x{RCP_ROWS[0]:04X}:0x{RCP_ROWS[1]:04X}, got --casts {args.casts} "
                         f"--rows {args.rows}")
    tree, table = {}, None
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        try:
            if args.rcp_table and not args.from_bytes:  # the table first: a result it cannot hold stops the capture
                results = b"".join(bytes(memoryview(b).cast("B"))
                                   for b in device_blocks("rcp-approx-ftz", *RCP_ROWS, args.device, args.block))
                table = write_rcp_table(args.rcp_table, results)
                print(f"rcp-approx-ftz table {table['sha256']} {args.rcp_table} {table['codes']}", flush=True)
            for c in casts:
                width = BYTES_PER_OUTPUT[c]
                blocks = (file_blocks(args.from_bytes, first, end, ROW * width) if args.from_bytes
                          else device_blocks(c, first, end, args.device, args.block))
                tree[c] = tree_of_rows(blocks, pool, ROW * width)
                print(f"{c} tree {tree[c]} (rows {first}:{end}, {(end - first) * ROW} inputs)", flush=True)
            if args.rcp_table and args.from_bytes:  # the file's rows of [1, 2)
                with open(args.from_bytes, "rb") as f:
                    f.seek((RCP_ROWS[0] - first) * ROW * 4)
                    results = f.read(RCP_MANTISSAS * 4)
                table = write_rcp_table(args.rcp_table, results)
                print(f"rcp-approx-ftz table {table['sha256']} {args.rcp_table} {table['codes']}", flush=True)
        except Incomplete as e:
            print(f"capture_formats: {e}", file=sys.stderr)
            return 3
        except Corrupt as e:
            print(f"capture_formats: {e}", file=sys.stderr)
            return 4
    if args.out:
        doc = {"rows": f"{first}:{end}", "layout": LAYOUT, "bytes_per_output": {c: BYTES_PER_OUTPUT[c] for c in casts},
               "tree": tree,
               "provenance": provenance(args.device) if not args.from_bytes else {"from_bytes": args.from_bytes}}
        if table:
            doc["rcp_table"] = table
        if args.special and not args.from_bytes:
            doc["special"] = special_values(casts, args.device)
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
