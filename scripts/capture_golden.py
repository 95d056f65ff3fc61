#!/usr/bin/env python3
"""capture_golden.py: captures eager PyTorch's half-precision behaviour on a CUDA GPU into golden/<arch>/.

Writes, per dtype (bf16, fp16):
  gelu_tanh_<dtype>.bin     65,536 little-endian uint16: entry i = eager gelu(x, approximate="tanh") bits for input bits i
  digests.json              SHA-256 over the whole 2^32 (x, bias) domain, canonical order (bias bits outer, x bits inner,
                            output bits as little-endian uint16) of eager `gelu(x + bias, "tanh")` and of eager `x + bias`;
                            and their tree digests (`*_tree`: SHA-256 of the 65,536 per-bias row digests)
  nan_observed.json         the output bits the device gives for NaN inputs of each class (conversion and add)
  mufu_tables.tar.xz        the device's ex2.approx.ftz.f32 and rcp.approx.ftz.f32 over every input in [1, 2), with
                            the scaling identities the reference relies on checked over the whole range it uses
  provenance.json           GPU, compute capability, driver, CUDA, torch, command, date, SHA-256 of every file
"""
import argparse
import datetime
import hashlib
import io
import json
import lzma
import os
import platform
import subprocess
import sys
import tarfile
import tempfile
import time

import numpy as np
import torch

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


def write_atomically(path, data):
    """Replaces path with data (bytes or str) through a temporary file in the same directory and os.replace, so a
    capture killed mid-write leaves the previous golden file intact."""
    mode = "wb" if isinstance(data, (bytes, bytearray)) else "w"
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".tmp.", dir=os.path.dirname(path) or ".")
    try:
        with os.fdopen(fd, mode) as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def all_patterns(dtype, device):
    return torch.arange(65536, dtype=torch.int32, device=device).to(torch.int16).view(dtype)


def gelu_table(dtype, device):
    x = all_patterns(dtype, device)
    y = torch.nn.functional.gelu(x, approximate="tanh")
    return y.view(torch.int16).cpu().numpy().astype("<u2").tobytes()


def domain_digests(dtype, device, block=2048):
    """SHA-256 of eager x + bias and gelu(x + bias) over all 2^32 pairs, bias bits outer, x bits inner: the flat
    digests (one stream) and the tree digests (SHA-256 over the 65,536 per-bias row digests as lower-case hex,
    common/tree_digest.h). Returns (add, gelu, add_tree, gelu_tree)."""
    x = all_patterns(dtype, device).reshape(1, 65536)
    biases = all_patterns(dtype, device)
    h_add, h_gelu = hashlib.sha256(), hashlib.sha256()
    t_add, t_gelu = hashlib.sha256(), hashlib.sha256()
    row = 65536 * 2
    for b0 in range(0, 65536, block):
        b = biases[b0:b0 + block].reshape(block, 1)
        # Same ops as eager `x + bias` on a (rows, width) tensor with a (width,) bias: one broadcast add, then gelu.
        s = x + b
        g = torch.nn.functional.gelu(s, approximate="tanh")
        s_bytes = s.view(torch.int16).cpu().numpy().astype("<u2").tobytes()
        g_bytes = g.view(torch.int16).cpu().numpy().astype("<u2").tobytes()
        h_add.update(s_bytes)
        h_gelu.update(g_bytes)
        for r in range(block):
            t_add.update(hashlib.sha256(s_bytes[r * row:(r + 1) * row]).hexdigest().encode("ascii"))
            t_gelu.update(hashlib.sha256(g_bytes[r * row:(r + 1) * row]).hexdigest().encode("ascii"))
    return h_add.hexdigest(), h_gelu.hexdigest(), t_add.hexdigest(), t_gelu.hexdigest()


def nan_observations(device):
    f32_nans = [0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FFFFFFF, 0xFFFFFFFF, 0x7FA5A5A5, 0xFFD0F00D]
    src = torch.tensor(np.array(f32_nans, dtype=np.uint32).view(np.int32), device=device).view(torch.float32)
    out = {"float32_to": {}, "add": {}}
    for name, dt in DTYPES.items():
        out["float32_to"][name] = {f"0x{u:08X}": f"0x{v & 0xFFFF:04X}"
                                   for u, v in zip(f32_nans, src.to(dt).view(torch.int16).cpu().tolist())}
        # Every 16-bit NaN pattern of this dtype plus a finite bias, and NaN + NaN with both signs.
        pats = all_patterns(dt, device)
        isnan = torch.isnan(pats)
        nans = pats[isnan]
        one = torch.ones_like(nans)
        res = (nans + one).view(torch.int16).cpu().numpy().astype(np.uint16)
        out["add"][name] = {"nan_inputs": int(nans.numel()),
                            "distinct_outputs": sorted(f"0x{v:04X}" for v in set(res.tolist()))}
        g = torch.nn.functional.gelu(nans, approximate="tanh").view(torch.int16).cpu().numpy().astype(np.uint16)
        out.setdefault("gelu", {})[name] = sorted(f"0x{v:04X}" for v in set(g.tolist()))
        cpu = torch.tensor(np.array(f32_nans, dtype=np.uint32).view(np.int32)).view(torch.float32)
        out.setdefault("host_torch_float32_to", {})[name] = {
            f"0x{u:08X}": f"0x{v & 0xFFFF:04X}" for u, v in zip(f32_nans, cpu.to(dt).view(torch.int16).tolist())}
    return out


MUFU_SRC = r"""
extern "C" __global__ void mufu(const unsigned* in, unsigned* ex2, unsigned* rcp, unsigned long long n) {
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    float x = __uint_as_float(in[i]), e, r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(x));
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    ex2[i] = __float_as_uint(e);
    rcp[i] = __float_as_uint(r);
  }
}
"""


def mufu_tables(outdir):
    """ex2/rcp.approx.ftz over [1, 2), and the identities ex2(i + f) = 2^(i-1) ex2(1 + f), rcp(2^k m) = 2^-k rcp(m)."""
    import cupy as cp
    kern = cp.RawKernel(MUFU_SRC, "mufu", options=("-arch=sm_90",) if torch.cuda.get_device_capability() == (9, 0) else ())

    def run(bits):
        n = bits.size
        ex2 = cp.empty(n, dtype=cp.uint32)
        rcp = cp.empty(n, dtype=cp.uint32)
        kern((4096,), (256,), (bits, ex2, rcp, cp.uint64(n)))
        return ex2, rcp

    base = cp.arange(1 << 23, dtype=cp.uint32) + cp.uint32(0x3F800000)
    ex2_t, rcp_t = run(base)
    # ex2 over [1, 32): x = i + f, table holds ex2(1 + f).
    ex2_bad = 0
    for e in range(1, 5):  # binades [2,4) [4,8) [8,16) [16,32)
        bits = cp.arange(1 << 23, dtype=cp.uint32) + cp.uint32((127 + e) << 23)
        ex2_v, _ = run(bits)
        x = bits.view(cp.float32)
        i = cp.floor(x)
        f1 = (x - i + 1.0).astype(cp.float32)
        idx = f1.view(cp.uint32) - cp.uint32(0x3F800000)
        pred = ex2_t[idx] + ((i.astype(cp.int64) - 1).astype(cp.uint32) << 23)
        ex2_bad += int((pred != ex2_v).sum())
    # rcp over [1, 2^27): d = 2^k m.
    rcp_bad = 0
    for e in range(1, 27):
        bits = cp.arange(1 << 23, dtype=cp.uint32) + cp.uint32((127 + e) << 23)
        _, rcp_v = run(bits)
        pred = rcp_t - cp.uint32(e << 23)
        rcp_bad += int((pred != rcp_v).sum())
    files = {"mufu_ex2_approx_ftz.bin": cp.asnumpy(ex2_t).astype("<u4").tobytes(),
             "mufu_rcp_approx_ftz.bin": cp.asnumpy(rcp_t).astype("<u4").tobytes()}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    packed = lzma.compress(buf.getvalue(), format=lzma.FORMAT_XZ,
                           filters=[{"id": lzma.FILTER_DELTA, "dist": 4}, {"id": lzma.FILTER_LZMA2, "preset": 9}])
    write_atomically(os.path.join(outdir, "mufu_tables.tar.xz"), packed)
    return {"ex2_identity_checked_inputs": 4 << 23, "ex2_identity_mismatches": ex2_bad,
            "rcp_identity_checked_inputs": 26 << 23, "rcp_identity_mismatches": rcp_bad,
            "files": {k: hashlib.sha256(v).hexdigest() for k, v in files.items()}}


def amend_digests(outdir, dev):
    """--digests-only: recomputes the whole-domain digests on this GPU, refuses (exit 1) unless the flat digests equal
    the ones already in OUT/sm_<cc>/digests.json, then writes the file again with the tree digests beside them and
    records the amendment in provenance.json (the file's new SHA-256, and who added what, when, on which GPU). The
    other golden files are not touched."""
    dpath, ppath = os.path.join(outdir, "digests.json"), os.path.join(outdir, "provenance.json")
    if not (os.path.isfile(dpath) and os.path.isfile(ppath)):
        print(f"capture_golden: --digests-only needs {dpath} and {ppath} from an earlier full capture",
              file=sys.stderr)
        return 2
    digests, prov = json.load(open(dpath)), json.load(open(ppath))
    timings = {}
    for name, dt in DTYPES.items():
        t = time.time()
        add_d, gelu_d, add_t, gelu_t = domain_digests(dt, dev)
        timings[f"domain_digests_{name}_s"] = round(time.time() - t, 3)
        for key, got in (("bias_gelu_tanh", gelu_d), ("add_round", add_d)):
            if digests.get(key, {}).get(name) != got:
                print(f"capture_golden: {key} {name} digest {got} differs from the golden "
                      f"{digests.get(key, {}).get(name)}: not amending", file=sys.stderr)
                return 1
        digests.setdefault("bias_gelu_tanh_tree", {})[name] = gelu_t
        digests.setdefault("add_round_tree", {})[name] = add_t
        print(f"{name}: flat digests equal golden; tree gelu {gelu_t} add {add_t}", flush=True)
    digests["tree"] = "SHA-256 over the 65,536 per-bias row digests (lower-case hex, bias order); common/tree_digest.h"
    write_atomically(dpath, json.dumps(digests, indent=2))
    prov["files"]["digests.json"] = hashlib.sha256(open(dpath, "rb").read()).hexdigest()
    prov.setdefault("amendments", []).append({
        "what": "digests.json: tree digests added (bias_gelu_tanh_tree, add_round_tree); flat digests recomputed and "
                "found equal",
        "gpu": torch.cuda.get_device_name(), "torch": torch.__version__, "cuda_runtime_of_torch": torch.version.cuda,
        "command": " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]),
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), "timings_s": timings})
    write_atomically(ppath, json.dumps(prov, indent=2))
    print(json.dumps(prov["amendments"][-1], indent=2))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="golden root; files go to OUT/sm_<cc>/")
    ap.add_argument("--digests-only", action="store_true",
                    help="add the tree digests to an existing capture (amend_digests); touches nothing else")
    args = ap.parse_args()
    if not torch.cuda.is_available():
        print("capture_golden: no CUDA device visible to torch", file=sys.stderr)
        return 2
    dev = torch.device("cuda")
    cc = torch.cuda.get_device_capability()
    arch = f"sm_{cc[0]}{cc[1]}"
    outdir = os.path.join(args.out, arch)
    if args.digests_only:
        return amend_digests(outdir, dev)
    os.makedirs(outdir, exist_ok=True)
    timings = {}
    digests = {"order": "bias bits 0x0000..0xFFFF outer, x bits 0x0000..0xFFFF inner, output bits little-endian uint16",
               "tree": "SHA-256 over the 65,536 per-bias row digests (lower-case hex, bias order); common/tree_digest.h",
               "bias_gelu_tanh": {}, "add_round": {}, "bias_gelu_tanh_tree": {}, "add_round_tree": {}}
    for name, dt in DTYPES.items():
        t = time.time()
        write_atomically(os.path.join(outdir, f"gelu_tanh_{name}.bin"), gelu_table(dt, dev))
        timings[f"gelu_table_{name}_s"] = round(time.time() - t, 3)
        t = time.time()
        add_d, gelu_d, add_t, gelu_t = domain_digests(dt, dev)
        timings[f"domain_digests_{name}_s"] = round(time.time() - t, 3)
        digests["bias_gelu_tanh"][name] = gelu_d
        digests["add_round"][name] = add_d
        digests["bias_gelu_tanh_tree"][name] = gelu_t
        digests["add_round_tree"][name] = add_t
        print(f"{name}: gelu(x+bias) sha256 {gelu_d}  x+bias sha256 {add_d}", flush=True)
    write_atomically(os.path.join(outdir, "digests.json"), json.dumps(digests, indent=2))
    write_atomically(os.path.join(outdir, "nan_observed.json"), json.dumps(nan_observations(dev), indent=2))
    t = time.time()
    mufu = mufu_tables(outdir)
    timings["mufu_s"] = round(time.time() - t, 3)
    print("mufu:", json.dumps(mufu), flush=True)

    def sh(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
        except Exception as exc:  # provenance must not fail the capture
            return f"unavailable: {exc}"

    files = sorted(n for n in os.listdir(outdir) if n != "provenance.json" and ".tmp." not in n)
    prov = {
        "gpu": torch.cuda.get_device_name(), "compute_capability": f"{cc[0]}.{cc[1]}", "arch": arch,
        "driver": sh(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]),
        "cuda_runtime_of_torch": torch.version.cuda, "torch": torch.__version__,
        "cudnn": torch.backends.cudnn.version(), "python": platform.python_version(),
        "nvcc": sh(["nvcc", "--version"]).splitlines()[-1] if sh(["nvcc", "--version"]) else "",
        "host": platform.platform(), "command": " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]),
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "timings_s": timings, "mufu": mufu,
        "files": {n: hashlib.sha256(open(os.path.join(outdir, n), "rb").read()).hexdigest() for n in files},
    }
    write_atomically(os.path.join(outdir, "provenance.json"), json.dumps(prov, indent=2))
    print(json.dumps(prov, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
