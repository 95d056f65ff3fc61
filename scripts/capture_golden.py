#!/usr/bin/env python3
"""capture_golden.py: captures eager PyTorch's half-precision behaviour on a CUDA GPU into golden/<arch>/.

What it captures is derived from the op spec (`fuseproof ops --json`, reference/op_registry.cpp): every op, contract
and dtype's composition is run as eager PyTorch by python/fuseproof/composition.py. Per dtype (bf16, fp16):
  <act>_<dtype>.bin         65,536 little-endian uint16: eager F.act on a T tensor, entry i for input bits i
  <act>_f32_<dtype>.bin     65,536 little-endian uint32: F.act(x.float()) for the same inputs (the fp32 contract)
  digests.json              SHA-256 over the whole 2^32 domain of each op and contract, canonical order (the second
                            input's bits outer, the first's inner, outputs little-endian uint16), and of eager `x + b`
                            ("add_round"); `<key>_tree`: SHA-256 of the 65,536 per-row digests (common/tree_digest.h)
  nan_observed.json         the output bits the device gives for NaN inputs of each class (conversion and add)
  mufu_tables.tar.xz        the device's ex2.approx.ftz.f32 and rcp.approx.ftz.f32 over every input in [1, 2), with
                            the scaling identities the reference relies on checked over the whole range it uses
  ex2_points.tar.xz         for each activation whose CUDA function calls ex2.approx.ftz below 1 (expf in silu, erff in
                            exact GELU): per input pattern, the ex2 argument the device computes (nvcc 13.0's sm_90
                            instruction sequence) and the device's ex2 of it
  provenance.json           GPU, compute capability, driver, CUDA, torch, command, date, SHA-256 of every file

--add-ops adds to an existing capture what the spec has and the capture lacks (tables, digests, ex2 points), touches
nothing that is there, and records the amendment in provenance.json. The ops of three or more inputs (gated_residual,
modulate) have no 2^32 domain; two more amendments capture what their audit compares against:
  --add-records   records.tar.xz: per op (eager contract) and dtype, <key>_<dtype>_in.bin (the op's inputs in declared
                  order, one little-endian uint16 each, the record format of `fuseproof eval --in`) and
                  <key>_<dtype>_out.bin (eager PyTorch's output per record, `fuseproof eval --out`'s format): every
                  extreme pattern in each slot (38^3 triples) and RECORDS seeded random triples
  --add-stages    digests.json "<key>.stage<k>" per dtype: SHA-256 of eager PyTorch's outputs (little-endian uint16) over
                  every pair of rounding boundary k, in canonical order (b's values outer, a's inner); the pairs are
                  `fuseproof stages --op OP --dtype D --out DIR`'s (stage<k>.json, stage<k>_a.bin, stage<k>_b.bin)
                  and "<key>.stage<k>_tree": the tree digest of the same outputs, a SHA-256 per b row (what the
                  audit's stages class compares on a GPU, hashing rows on every core)
  --derive-stage-trees
                  the "<key>.stage<k>_tree" entries a capture lacks, from the reference's rows (`fuseproof stages
                  --digests`), taken only where the reference's flat SHA-256 equals the captured "<key>.stage<k>":
                  the same bytes as eager's. No GPU; the amendment says so
  --add-formats FILE [FILE ...]
                  digests.json "format.<cast>_tree": the device's tree digests of the narrow-format casts of every
                  binary32 pattern, from scripts/capture_formats.py's JSON (its layout, captured on a GPU of this
                  folder's architecture), and formats.json: every capture's casts, special codes and provenance. A cast
                  already there with another digest is refused (exit 1): two devices disagree. Needs no CUDA here: the
                  capture ran on the device, this copies it with its provenance.
A dry run on the CPU (--device cpu, with --max-pairs N for the stages: the first N pairs of each stage, stored as
"<key>.stage<k>.first<N>") exercises the same code on torch's CPU kernels; it refuses to write into golden/.
"""
import argparse
import concurrent.futures
import datetime
import hashlib
import io
import json
import lzma
import os
import platform
import re
import subprocess
import sys
import tarfile
import tempfile
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from fuseproof.composition import ACTIVATIONS, composition_fn, eager_expressible  # noqa: E402
# The suite's one writer (common/atomic_file.h's rules): regular files only, links written through, atomic.
from fuseproof._output import write_file_atomically as write_atomically  # noqa: E402

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}
ROW_BYTES = 65536 * 2


def load_spec(args):
    if args.spec:
        with open(args.spec) as f:
            return json.load(f)
    out = subprocess.run([args.fuseproof, "ops", "--json"], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def spec_or_none(args):
    """load_spec, or None after one line on stderr."""
    try:
        return load_spec(args)
    except (OSError, subprocess.CalledProcessError, json.JSONDecodeError) as e:
        print(f"capture_golden: cannot read the op spec ({e}); build fuseproof or give --spec", file=sys.stderr)
        return None


def all_patterns(dtype, device):
    return torch.arange(65536, dtype=torch.int32, device=device).to(torch.int16).view(dtype)


def activation_tables(spec, dtype_name, device):
    """{file name: bytes} for every activation of the spec: eager on T, and on the float32 widening."""
    dt = DTYPES[dtype_name]
    x = all_patterns(dt, device)
    files = {}
    for act in spec["activations"]:
        f = ACTIVATIONS[act["name"]]
        files["%s_%s.bin" % (act["name"], dtype_name)] = f(x).view(torch.int16).cpu().numpy().astype("<u2").tobytes()
        files["%s_f32_%s.bin" % (act["name"], dtype_name)] = \
            f(x.float()).view(torch.int32).cpu().numpy().astype("<u4").tobytes()
    return files


def domain_digests(fn, dtype, device, pool, block=2048):
    """Flat and tree SHA-256 of fn(first, second) over all 2^32 pairs, the second input's bits outer: fn gets the
    first input as a [1, 65536] tensor of every pattern and the second as a [block, 1] one, and broadcasts, as eager
    does for a (rows, width) tensor and a (width,) bias. The flat stream is hashed in order on one thread while the
    next block computes; the row digests of the tree in parallel (hashlib releases the GIL)."""
    first = all_patterns(dtype, device).reshape(1, 65536)
    seconds = all_patterns(dtype, device)
    flat, tree = hashlib.sha256(), hashlib.sha256()
    pending = None
    for b0 in range(0, 65536, block):
        out = fn(first, seconds[b0:b0 + block].reshape(block, 1))
        host = np.ascontiguousarray(out.view(torch.int16).cpu().numpy())  # little-endian on the x86-64 host
        mv = memoryview(host).cast("B")
        rows = [pool.submit(lambda m: hashlib.sha256(m).hexdigest(), mv[r * ROW_BYTES:(r + 1) * ROW_BYTES])
                for r in range(block)]
        if pending:
            pending.result()
        pending = pool.submit(flat.update, mv)
        for r in rows:
            tree.update(r.result().encode("ascii"))
    pending.result()
    return flat.hexdigest(), tree.hexdigest()


def nan_observations(device):
    f32_nans = [0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FFFFFFF, 0xFFFFFFFF, 0x7FA5A5A5, 0xFFD0F00D]
    src = torch.tensor(np.array(f32_nans, dtype=np.uint32).view(np.int32), device=device).view(torch.float32)
    out = {"float32_to": {}, "add": {}}
    for name, dt in DTYPES.items():
        out["float32_to"][name] = {f"0x{u:08X}": f"0x{v & 0xFFFF:04X}"
                                   for u, v in zip(f32_nans, src.to(dt).view(torch.int16).cpu().tolist())}
        # Every 16-bit NaN pattern of this dtype plus a finite bias, and NaN + NaN with both signs.
        pats = all_patterns(dt, device)
        nans = pats[torch.isnan(pats)]
        res = (nans + torch.ones_like(nans)).view(torch.int16).cpu().numpy().astype(np.uint16)
        out["add"][name] = {"nan_inputs": int(nans.numel()),
                            "distinct_outputs": sorted(f"0x{v:04X}" for v in set(res.tolist()))}
        g = torch.nn.functional.gelu(nans, approximate="tanh").view(torch.int16).cpu().numpy().astype(np.uint16)
        out.setdefault("gelu", {})[name] = sorted(f"0x{v:04X}" for v in set(g.tolist()))
        cpu = torch.tensor(np.array(f32_nans, dtype=np.uint32).view(np.int32)).view(torch.float32)
        out.setdefault("host_torch_float32_to", {})[name] = {
            f"0x{u:08X}": f"0x{v & 0xFFFF:04X}" for u, v in zip(f32_nans, cpu.to(dt).view(torch.int16).tolist())}
    return out


def pack_tar_xz(files):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    return lzma.compress(buf.getvalue(), format=lzma.FORMAT_XZ,
                         filters=[{"id": lzma.FILTER_DELTA, "dist": 4}, {"id": lzma.FILTER_LZMA2, "preset": 9}])


def arch_options():
    return ("-arch=sm_90",) if torch.cuda.get_device_capability() == (9, 0) else ()


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
    kern = cp.RawKernel(MUFU_SRC, "mufu", options=arch_options())

    def run(bits):
        n = bits.size
        ex2 = cp.empty(n, dtype=cp.uint32)
        rcp = cp.empty(n, dtype=cp.uint32)
        kern((4096,), (256,), (bits, ex2, rcp, cp.uint64(n)))
        return ex2, rcp

    base = cp.arange(1 << 23, dtype=cp.uint32) + cp.uint32(0x3F800000)
    ex2_t, rcp_t = run(base)
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
    rcp_bad = 0
    for e in range(1, 27):
        bits = cp.arange(1 << 23, dtype=cp.uint32) + cp.uint32((127 + e) << 23)
        _, rcp_v = run(bits)
        rcp_bad += int((rcp_t - cp.uint32(e << 23) != rcp_v).sum())
    files = {"mufu_ex2_approx_ftz.bin": cp.asnumpy(ex2_t).astype("<u4").tobytes(),
             "mufu_rcp_approx_ftz.bin": cp.asnumpy(rcp_t).astype("<u4").tobytes()}
    write_atomically(os.path.join(outdir, "mufu_tables.tar.xz"), pack_tar_xz(files))
    return {"ex2_identity_checked_inputs": 4 << 23, "ex2_identity_mismatches": ex2_bad,
            "rcp_identity_checked_inputs": 26 << 23, "rcp_identity_mismatches": rcp_bad,
            "files": {k: hashlib.sha256(v).hexdigest() for k, v in files.items()}}


# The ex2.approx.ftz arguments of CUDA 13.0's expf and erff on sm_90, computed as `nvcc -arch=sm_90 -ptx` emits the
# functions (reference/expf_models.h, reference/erff_models.h), for the input each activation hands them: expf(-x) in
# silu, erff(x * M_SQRT1_2) in exact GELU. erff's polynomial r is recorded on both branches (ex2 is used only where
# |a| >= 1.00295). The reference checks that it computes the same arguments, and the activation tables that the
# functions really are these.
EX2_POINTS_SRC = r"""
// Every step is written as the PTX instruction nvcc emits, without .ftz: subnormals stay subnormal (as in PyTorch's
// build, which does not flush), whatever flags the runtime compiler is given.
__device__ float fma_rn(float a, float b, float c) { float d; asm("fma.rn.f32 %0, %1, %2, %3;" : "=f"(d) : "f"(a), "f"(b), "f"(c)); return d; }
__device__ float fma_rm(float a, float b, float c) { float d; asm("fma.rm.f32 %0, %1, %2, %3;" : "=f"(d) : "f"(a), "f"(b), "f"(c)); return d; }
__device__ float mul_rn(float a, float b) { float d; asm("mul.rn.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b)); return d; }
__device__ float add_rn(float a, float b) { float d; asm("add.rn.f32 %0, %1, %2;" : "=f"(d) : "f"(a), "f"(b)); return d; }
__device__ float sat(float a) { float d; asm("cvt.sat.f32.f32 %0, %1;" : "=f"(d) : "f"(a)); return d; }
__device__ float neg(float a) { float d; asm("neg.f32 %0, %1;" : "=f"(d) : "f"(a)); return d; }
__device__ float fabs_(float a) { float d; asm("abs.f32 %0, %1;" : "=f"(d) : "f"(a)); return d; }
extern "C" __global__ void ex2_points(int fp16, int which, unsigned* out) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 65536) return;
  const unsigned short h = (unsigned short)i;
  float x;
  if (fp16) asm("cvt.f32.f16 %0, %1;" : "=f"(x) : "h"(h));
  else x = __uint_as_float((unsigned)h << 16);
  float r;
  if (which == 0) {
    const float a = neg(x);
    const float s = sat(fma_rn(a, __uint_as_float(0x3BBB989Du), 0.5f));
    const float j = fma_rm(s, 252.0f, __uint_as_float(0x4B400001u));
    const float k = add_rn(j, __uint_as_float(0xCB40007Fu));
    r = fma_rn(a, __uint_as_float(0x3FB8AA3Bu), neg(k));
    r = fma_rn(a, __uint_as_float(0x32A57060u), r);
  } else {
    const float a = mul_rn(x, __uint_as_float(0x3F3504F3u));
    const float t = fabs_(a);
    const bool big = t >= __uint_as_float(0x3F8060FEu);
    const unsigned c[7][2] = {{0x38EB4C3Au, 0x38B1E96Au}, {0xBAAE005Bu, 0xBA574D20u}, {0x3C09919Fu, 0x3BAAD5EAu},
                              {0xBD24D99Au, 0xBCDC1BE7u}, {0x3E235519u, 0x3DE718AFu}, {0x3F69B4F9u, 0xBEC093ACu},
                              {0x3F210A14u, 0x3E0375D3u}};
    const int set = big ? 0 : 1;
    const float u = big ? t : mul_rn(a, a);
    float p = fma_rn(__uint_as_float(c[0][set]), u, __uint_as_float(c[1][set]));
    for (int k = 2; k < 7; ++k) p = fma_rn(p, u, __uint_as_float(c[k][set]));
    const float v = big ? neg(t) : a;
    r = fma_rn(p, v, v);
  }
  float e;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(e) : "f"(r));
  out[2 * i] = __float_as_uint(r);
  out[2 * i + 1] = __float_as_uint(e);
}
"""
EX2_FUNCTIONS = {"silu": 0, "gelu_erf": 1}


def ex2_points(spec):
    """{ex2_<act>_<dtype>.bin: bytes} for the spec's activations that need captured ex2 points."""
    import cupy as cp
    kern = cp.RawKernel(EX2_POINTS_SRC, "ex2_points", options=arch_options())
    files = {}
    for act in spec["activations"]:
        if not act["ex2_points"]:
            continue
        for name in DTYPES:
            out = cp.empty(2 * 65536, dtype=cp.uint32)
            kern((256,), (256,), (cp.int32(name == "fp16"), cp.int32(EX2_FUNCTIONS[act["name"]]), out))
            files["ex2_%s_%s.bin" % (act["name"], name)] = cp.asnumpy(out).astype("<u4").tobytes()
    return files


def sha_of(data):
    return hashlib.sha256(data).hexdigest()


def digest_jobs(spec):
    """(key, fn) for every contract of every 2-input op of the spec (the ops with a 2^32 domain), plus eager x + bias
    ("add_round"). The ops of more inputs have stage digests and records instead (--add-stages, --add-records)."""
    jobs = [("add_round", lambda a, b: a + b)]
    for op in spec["ops"]:
        if len(op["inputs"]) != 2:
            continue
        for c in op["contracts"]:
            jobs.append((c["digest_key"], composition_fn(c)))
    return jobs


def device_info(dev=None):
    if dev is not None and dev.type == "cpu":
        return {"gpu": "none (CPU dry run: " + platform.processor() + ")", "torch": torch.__version__,
                "cuda_runtime_of_torch": None}
    return {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
            "cuda_runtime_of_torch": torch.version.cuda}


def run_digests(jobs, digests, dev, timings, only_missing):
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
        for key, fn in jobs:
            for name, dt in DTYPES.items():
                if only_missing and name in digests.get(key, {}) and name in digests.get(key + "_tree", {}):
                    continue
                t = time.time()
                flat, tree = domain_digests(fn, dt, dev, pool)
                timings[f"digests_{key}_{name}_s"] = round(time.time() - t, 3)
                digests.setdefault(key, {})[name] = flat
                digests.setdefault(key + "_tree", {})[name] = tree
                print(f"{key} {name}: flat {flat} tree {tree} ({timings[f'digests_{key}_{name}_s']} s)", flush=True)


DIGESTS_HEADER = {
    "order": "second input bits 0x0000..0xFFFF outer (bias, up), first input bits inner (x, gate), output bits "
             "little-endian uint16",
    "tree": "SHA-256 over the 65,536 per-row digests (lower-case hex, row order); common/tree_digest.h",
    "keys": "<op> for the eager contract, <op>.<contract> for the others (common/golden_library.h)",
}


def add_ops(outdir, spec, dev, refresh_points=False):
    """--add-ops: adds what the spec has and the capture lacks; the files already there are not touched, and the
    amendment is recorded in provenance.json (which files it added, which digests.json keys, on which GPU)."""
    dpath, ppath = os.path.join(outdir, "digests.json"), os.path.join(outdir, "provenance.json")
    if not (os.path.isfile(dpath) and os.path.isfile(ppath)):
        print(f"capture_golden: --add-ops needs {dpath} and {ppath} from an earlier full capture", file=sys.stderr)
        return 2
    digests, prov = json.load(open(dpath)), json.load(open(ppath))
    for k in ("gpu", "torch"):
        if prov.get(k) != device_info()[k]:
            print(f"capture_golden: note: the original capture's {k} was {prov.get(k)}, this one is "
                  f"{device_info()[k]}", flush=True)
    timings, added = {}, []
    for name in DTYPES:
        t = time.time()
        for fname, data in activation_tables(spec, name, dev).items():
            path = os.path.join(outdir, fname)
            if os.path.exists(path):
                continue
            write_atomically(path, data)
            prov["files"][fname] = sha_of(data)
            added.append(fname)
        timings[f"tables_{name}_s"] = round(time.time() - t, 3)
    if refresh_points or not os.path.exists(os.path.join(outdir, "ex2_points.tar.xz")):
        t = time.time()
        files = ex2_points(spec)
        packed = pack_tar_xz(files)
        write_atomically(os.path.join(outdir, "ex2_points.tar.xz"), packed)
        prov["files"]["ex2_points.tar.xz"] = sha_of(packed)
        prov["ex2_points"] = {"files": {k: sha_of(v) for k, v in files.items()},
                              "how": "capture_golden.py EX2_POINTS_SRC: the arguments of nvcc 13.0's sm_90 expf and "
                                     "erff sequences for every input pattern, and ex2.approx.ftz.f32 of each"}
        added.append("ex2_points.tar.xz" + (" (captured again: --refresh-ex2-points)" if refresh_points else ""))
        timings["ex2_points_s"] = round(time.time() - t, 3)
    before = {k: dict(v) for k, v in digests.items() if isinstance(v, dict)}
    run_digests(digest_jobs(spec), digests, dev, timings, only_missing=True)
    keys = sorted(f"{k}.{d}" for k, v in digests.items() if isinstance(v, dict) for d in v
                  if d not in before.get(k, {}))
    for k, v in DIGESTS_HEADER.items():
        digests.setdefault(k, v)
    if keys:
        text = json.dumps(digests, indent=2)
        write_atomically(dpath, text)
        prov["files"]["digests.json"] = sha_of(text.encode())
    if not added and not keys:
        print("capture_golden: nothing to add: the capture has every op, contract and table of the spec")
        return 0
    record_amendment(ppath, prov, dev, "--add-ops: files " + ", ".join(added) + "; digests.json keys " +
                     ", ".join(keys), timings)
    return 0


def record_amendment(ppath, prov, dev, what, timings, device=None):
    """Appends one amendment (device, what, command, date, timings) to provenance.json and prints it. `device`: the
    device fields when the data came from another machine's capture (else this machine's, device_info(dev))."""
    prov.setdefault("amendments", []).append(dict(
        device if device is not None else device_info(dev), what=what,
        command=" ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]),
        date_utc=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), timings_s=timings))
    write_atomically(ppath, json.dumps(prov, indent=2))
    print(json.dumps(prov["amendments"][-1], indent=2))


def load_capture(outdir, flag):
    """(digests, provenance) of an earlier capture in outdir, or None after one line on stderr."""
    dpath, ppath = os.path.join(outdir, "digests.json"), os.path.join(outdir, "provenance.json")
    if not (os.path.isfile(dpath) and os.path.isfile(ppath)):
        print(f"capture_golden: {flag} needs {dpath} and {ppath} from an earlier full capture", file=sys.stderr)
        return None
    with open(dpath) as f, open(ppath) as g:
        return json.load(f), json.load(g)


def multi_input_ops(spec):
    """(op, its eager contract) for every op of three or more inputs: no 2^32 domain, stages and records instead."""
    return [(op, c) for op in spec["ops"] if len(op["inputs"]) > 2 for c in op["contracts"]
            if c["name"] == "eager" and not eager_expressible(c)]


# The audit's extreme patterns (audit/audit_inputs.cpp extreme_patterns): 19 magnitudes, each with both signs.
def extreme_patterns(dtype_name):
    mant = 7 if dtype_name == "bf16" else 10
    m, exp_mask = (1 << mant) - 1, 0x7F80 if dtype_name == "bf16" else 0x7C00
    exact = [int(v) & 0xFFFF for v in torch.tensor([0.5, 1.0, 2.0, 3.0, 0.75, 5.0, 9.0, 10.0]).to(
        DTYPES[dtype_name]).view(torch.int16).tolist()]
    mags = [0x0000, 0x0001, m // 2, m, 1 << mant] + exact + [exp_mask - 1, exp_mask, exp_mask | 1,
                                                             exp_mask | (1 << (mant - 1)), exp_mask | m, exp_mask | 5]
    return sorted({v for mag in mags for v in (mag, mag | 0x8000)})


def random_records(n_inputs, count, dtype_name, seed):
    """count records of n_inputs patterns: half every bit pattern alike, half finite values of moderate size (exponent
    in [2^-8, 2^4), as the audit's random patterns mostly are), from numpy's PCG64 with `seed`."""
    rng = np.random.Generator(np.random.PCG64(seed))
    anyp = rng.integers(0, 65536, size=(count - count // 2, n_inputs), dtype=np.uint32)
    mant = 7 if dtype_name == "bf16" else 10
    bias = 127 if dtype_name == "bf16" else 15
    shape = (count // 2, n_inputs)
    e = rng.integers(-8, 4, size=shape, dtype=np.int64) + bias
    moderate = (rng.integers(0, 2, size=shape, dtype=np.uint32) << 15) | (e.astype(np.uint32) << mant) | \
        rng.integers(0, 1 << mant, size=shape, dtype=np.uint32)
    return np.concatenate([anyp, moderate]).astype(np.uint16)


def eager_on_records(fn, recs, dtype, dev, block=1 << 22):
    """fn over records [N, n] of patterns (columns in declared order) in blocks; the outputs as uint16 [N]."""
    out = []
    for r0 in range(0, recs.shape[0], block):
        cols = torch.from_numpy(recs[r0:r0 + block].astype(np.int16)).to(dev).view(dtype)
        y = fn(*[cols[:, i] for i in range(recs.shape[1])])
        out.append(y.view(torch.int16).cpu().numpy().astype(np.uint16))
    return np.concatenate(out) if out else np.zeros(0, dtype=np.uint16)


def record_set(op, dtype_name, count, seed):
    """The records of one op and dtype: every extreme pattern in each slot (38^n), then `count` random ones."""
    n = len(op["inputs"])
    ext = np.array(extreme_patterns(dtype_name), dtype=np.uint16)
    grid = np.stack(np.meshgrid(*([ext] * n), indexing="ij"), axis=-1).reshape(-1, n)
    return np.concatenate([grid, random_records(n, count, dtype_name, seed)]).astype(np.uint16)


def add_records(outdir, spec, dev, count, seed):
    """--add-records: records.tar.xz with every multi-input op's records and eager outputs, per dtype; members already
    there are kept as they are."""
    loaded = load_capture(outdir, "--add-records")
    if loaded is None:
        return 2
    digests, prov = loaded
    path = os.path.join(outdir, "records.tar.xz")
    members = {}
    if os.path.exists(path):
        with tarfile.open(path, "r:xz") as tar:
            members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
    timings, added = {}, []
    for op, c in multi_input_ops(spec):
        fn = composition_fn(c)
        for name, dt in DTYPES.items():
            stem = "%s_%s" % (c["digest_key"], name)
            if stem + "_in.bin" in members and stem + "_out.bin" in members:
                continue
            t = time.time()
            recs = record_set(op, name, count, seed)
            outs = eager_on_records(fn, recs, dt, dev)
            members[stem + "_in.bin"] = recs.astype("<u2").tobytes()
            members[stem + "_out.bin"] = outs.astype("<u2").tobytes()
            timings[f"records_{stem}_s"] = round(time.time() - t, 3)
            added.append(f"{stem} ({recs.shape[0]} records)")
            print(f"records {stem}: {recs.shape[0]} records, out sha256 {sha_of(members[stem + '_out.bin'])}",
                  flush=True)
    if not added:
        print("capture_golden: nothing to add: records.tar.xz has every multi-input op of the spec")
        return 0
    packed = pack_tar_xz(dict(sorted(members.items())))
    write_atomically(path, packed)
    prov["files"]["records.tar.xz"] = sha_of(packed)
    prov["records"] = {"files": {k: sha_of(v) for k, v in sorted(members.items())},
                       "how": "capture_golden.py --add-records: per op and dtype, every extreme pattern of the audit "
                              "in each input slot, then seeded random records (numpy PCG64 seed %d: half any bit "
                              "pattern, half exponents in [2^-8, 2^4)); <key>_<dtype>_in.bin: the inputs in declared "
                              "order, <key>_<dtype>_out.bin: eager PyTorch's outputs (fuseproof eval's formats)" % seed}
    record_amendment(os.path.join(outdir, "provenance.json"), prov, dev,
                     "--add-records: records.tar.xz members " + ", ".join(added), timings)
    return 0


def load_stage(folder, k, n_inputs):
    """(json, a records [Na, n], b records [Nb, n]) of `fuseproof stages`' stage k in folder, or None when absent."""
    jpath = os.path.join(folder, "stage%d.json" % k)
    if not os.path.exists(jpath):
        return None
    with open(jpath) as f:
        meta = json.load(f)
    recs = []
    for side in ("a", "b"):
        raw = np.fromfile(os.path.join(folder, "stage%d_%s.bin" % (k, side)), dtype="<u2")
        if raw.size % n_inputs:
            raise ValueError("stage%d_%s.bin holds %d patterns, not a whole number of %d-input records"
                             % (k, side, raw.size, n_inputs))
        recs.append(raw.reshape(-1, n_inputs))
    return meta, recs[0], recs[1]


def stage_digest(fn, meta, a, b, dtype, dev, max_pairs=None, block_pairs=1 << 26):
    """(SHA-256, tree digest, pair count) of fn's outputs over the stage's pairs (b outer, a inner; uint16
    little-endian). The tree (common/tree_digest.h, tree_of_row_digests) is the SHA-256 of each b row's Na outputs'
    hex SHA-256 in b order; None for a dry run's partial stage (max_pairs). Pair (ia, ib)'s inputs: a's record ia with
    the inputs in b_depends taken from b's record ib. Computed in blocks of whole b rows: input i is a [1, Na] row
    (from a) or a [B, 1] column (from b), broadcast by the eager ops. The hashing of a block overlaps the next block's
    computation."""
    n = a.shape[1]
    na, nb = a.shape[0], b.shape[0]
    total = na * nb if max_pairs is None else min(na * nb, max_pairs)
    ta = torch.from_numpy(a.astype(np.int16)).to(dev).view(dtype)
    tb = torch.from_numpy(b.astype(np.int16)).to(dev).view(dtype)
    bdep = meta["b_depends"] if isinstance(meta["b_depends"], int) else int(str(meta["b_depends"]), 0)
    rows = max(1, min(block_pairs // max(1, na), -(-total // max(1, na))))
    h = hashlib.sha256()
    row_hex = []
    whole = max_pairs is None  # a dry run's first pairs have no tree, even where they are the whole stage

    def hash_block(host):
        view = memoryview(host).cast("B")
        h.update(view)
        if whole:
            row_hex.extend(hashlib.sha256(view[r * na * 2:(r + 1) * na * 2]).hexdigest()
                           for r in range(host.size // na))

    done = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        pending = None
        for b0 in range(0, nb, rows):
            if done >= total:
                break
            b1 = min(nb, b0 + rows)
            ins = [tb[b0:b1, i].reshape(-1, 1) if bdep >> i & 1 else ta[:, i].reshape(1, -1) for i in range(n)]
            out = fn(*ins).expand(b1 - b0, na).reshape(-1)[:total - done]
            host = np.ascontiguousarray(out.view(torch.int16).cpu().numpy())  # little-endian on the x86-64 host
            done += host.size
            if pending:
                pending.result()
            pending = pool.submit(hash_block, host)
        if pending:
            pending.result()
    tree = hashlib.sha256("".join(row_hex).encode()).hexdigest() if whole else None
    return h.hexdigest(), tree, done


def run_stages(fuseproof, op_name, dtype_name, folder):
    """`fuseproof stages --op OP --dtype D --out FOLDER`; raises CalledProcessError with its stderr."""
    subprocess.run([fuseproof, "stages", "--op", op_name, "--dtype", dtype_name, "--out", folder], check=True,
                   capture_output=True, text=True)


def add_stages(outdir, spec, dev, fuseproof, stages_dir, max_pairs, jobs):
    """--add-stages: digests.json "<key>.stage<k>" per dtype for every stage of every multi-input op that lacks one
    (with max_pairs: "<key>.stage<k>.first<N>", a dry run's prefix). Stages come from stages_dir/<op>/<dtype>/ when
    given, else from `fuseproof stages` into a temporary folder. Jobs (op, dtype, stage) run `jobs` at a time."""
    loaded = load_capture(outdir, "--add-stages")
    if loaded is None:
        return 2
    digests, prov = loaded
    tmp = None if stages_dir else tempfile.TemporaryDirectory(prefix="fuseproof_stages_")
    root = stages_dir or tmp.name
    work = []
    try:
        for op, c in multi_input_ops(spec):
            for name in DTYPES:
                folder = os.path.join(root, op["name"], name)
                if not stages_dir:
                    os.makedirs(folder, exist_ok=True)
                    run_stages(fuseproof, op["name"], name, folder)
                k = 0
                while True:
                    st = load_stage(folder, k, len(op["inputs"]))
                    if st is None:
                        break
                    key = "%s.stage%d" % (c["digest_key"], k) + ("" if max_pairs is None else ".first%d" % max_pairs)
                    if name not in digests.get(key, {}) or (max_pairs is None and
                                                            name not in digests.get(key + "_tree", {})):
                        work.append((key, name, c, st))
                    k += 1
                if k == 0:
                    print(f"capture_golden: no stage files for {op['name']} {name} in {folder}", file=sys.stderr)
                    return 2
    except subprocess.CalledProcessError as e:
        print(f"capture_golden: `{' '.join(e.cmd)}` failed: {(e.stderr or '').strip().splitlines()[-1:]}",
              file=sys.stderr)
        return 2
    timings = {}

    def one(job):
        key, name, c, (meta, a, b) = job
        t = time.time()
        digest, tree, pairs = stage_digest(composition_fn(c), meta, a, b, DTYPES[name], dev, max_pairs)
        if max_pairs is None and "pairs" in meta and int(meta["pairs"]) != pairs:
            raise ValueError(f"{key} {name}: stage{key} json says {meta['pairs']} pairs, the files give {pairs}")
        timings[f"{key}.{name}_s"] = round(time.time() - t, 3)
        print(f"{key} {name}: {pairs} pairs, sha256 {digest}" + (f", tree {tree}" if tree else "") +
              f" ({timings[f'{key}.{name}_s']} s)", flush=True)
        return key, name, digest, tree, pairs

    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        results = list(pool.map(one, work))
    if tmp:
        tmp.cleanup()
    if not results:
        print("capture_golden: nothing to add: digests.json has every stage of the spec's multi-input ops")
        return 0
    for key, name, digest, tree, pairs in results:
        # A digest already there is evidence: another capture that disagrees is refused, never overwritten.
        for k, v in ((key, digest), (key + "_tree", tree)):
            if v is not None and digests.get(k, {}).get(name, v) != v:
                print(f"capture_golden: {k} {name}: this device gives {v}, digests.json holds {digests[k][name]}: "
                      "two captures disagree; nothing written", file=sys.stderr)
                return 1
        digests.setdefault(key, {})[name] = digest
        if tree is not None:
            digests.setdefault(key + "_tree", {})[name] = tree
        digests.setdefault("stage_pairs", {})[f"{key}.{name}"] = pairs
    digests.setdefault("stage_order", "per stage: b's values outer, a's inner (fuseproof stages' stage<k>_b.bin, "
                                      "stage<k>_a.bin); pair (ia, ib): a's record with b_depends' inputs from b's; "
                                      "eager PyTorch's outputs, little-endian uint16")
    text = json.dumps(digests, indent=2)
    write_atomically(os.path.join(outdir, "digests.json"), text)
    prov["files"]["digests.json"] = sha_of(text.encode())
    record_amendment(os.path.join(outdir, "provenance.json"), prov, dev, "--add-stages: digests.json keys " +
                     ", ".join(sorted(f"{k}.{n} ({p} pairs)" for k, n, _, _, p in results)) +
                     (" (each with its _tree)" if max_pairs is None else ""), timings)
    return 0


def derive_stage_trees(outdir, spec, fuseproof):
    """--derive-stage-trees: digests.json "<key>.stage<k>_tree" per dtype where only the flat "<key>.stage<k>" is
    there, from the reference's rows: `fuseproof stages --digests` gives both digests of OpPlan::stage_row over
    every pair; the tree is taken only when the reference's flat SHA-256 equals the captured one, so that it digests
    the same bytes as eager on the device. Needs no GPU; recorded in provenance.json as derived."""
    loaded = load_capture(outdir, "--derive-stage-trees")
    if loaded is None:
        return 2
    digests, prov = loaded
    added, timings = [], {}
    with tempfile.TemporaryDirectory(prefix="fuseproof_stage_trees_") as root:
        for op, c in multi_input_ops(spec):
            for name in DTYPES:
                # The stages whose flat digest golden holds for this dtype without a tree beside it.
                prefix = c["digest_key"] + ".stage"
                wanted = sorted(int(k[len(prefix):]) for k in digests
                                if k.startswith(prefix) and k[len(prefix):].isdigit() and name in digests[k]
                                and name not in digests.get(k + "_tree", {}))
                if not wanted:
                    continue
                folder = os.path.join(root, op["name"], name)
                t = time.time()
                try:
                    subprocess.run([fuseproof, "stages", "--op", op["name"], "--dtype", name, "--out", folder,
                                    "--digests"], check=True, capture_output=True, text=True)
                except (OSError, subprocess.CalledProcessError) as e:
                    tail = (getattr(e, "stderr", "") or str(e)).strip().splitlines()[-1:]
                    print(f"capture_golden: `{fuseproof} stages --op {op['name']} --dtype {name} --digests` failed: "
                          f"{tail}", file=sys.stderr)
                    return 2
                timings[f"{op['name']}.{name}_s"] = round(time.time() - t, 3)
                for k in wanted:
                    key, jpath = prefix + str(k), os.path.join(folder, "stage%d.json" % k)
                    if not os.path.exists(jpath):
                        print(f"capture_golden: {key} {name}: golden has it, `fuseproof stages` wrote no stage {k}",
                              file=sys.stderr)
                        return 2
                    with open(jpath) as f:
                        ref = json.load(f)["reference_digests"]
                    flat = digests[key][name]
                    if ref["sha256"] != flat:
                        print(f"capture_golden: {key} {name}: the reference's SHA-256 {ref['sha256']} differs from the "
                              f"captured {flat}: no tree derived (the reference disagrees with eager here)",
                              file=sys.stderr)
                        return 1
                    digests.setdefault(key + "_tree", {})[name] = ref["tree"]
                    added.append(f"{key}_tree.{name}")
                    print(f"{key} {name}: sha256 {flat} (the captured one), tree {ref['tree']}", flush=True)
    if not added:
        print("capture_golden: nothing to derive: every stage digest has its tree")
        return 0
    text = json.dumps(digests, indent=2)
    write_atomically(os.path.join(outdir, "digests.json"), text)
    prov["files"]["digests.json"] = sha_of(text.encode())
    host = {"derived_on": platform.platform(), "gpu": None,
            "source": "the reference (fuseproof stages --digests: OpPlan::stage_row over every pair), whose flat "
                      "SHA-256 equals each captured <key>.stage<k>: the tree digests the same bytes as eager"}
    record_amendment(os.path.join(outdir, "provenance.json"), prov, None, "--derive-stage-trees: digests.json keys " +
                     ", ".join(sorted(added)), timings, device=host)
    return 0



FORMAT_LAYOUT_ROWS = "0:65536"
FORMAT_CASTS = ("e4m3-nan", "e4m3-saturate", "e2m1", "rcp-approx-ftz")


def add_formats(outdir, files):
    """--add-formats: capture_formats.py's JSON files into digests.json ("format.<cast>_tree") and formats.json, each
    checked (whole-domain rows, 64-hex digests, a GPU of the folder's architecture); 1 on a disagreeing digest."""
    loaded = load_capture(outdir, "--add-formats")
    if loaded is None:
        return 2
    digests, prov = loaded
    arch = os.path.basename(os.path.normpath(outdir))
    fpath = os.path.join(outdir, "formats.json")
    kept = json.load(open(fpath)) if os.path.isfile(fpath) else {"layout": None, "captures": []}
    added = []
    for path in files:
        try:
            with open(path) as f:
                cap = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            print(f"capture_golden: --add-formats {path}: {e}", file=sys.stderr)
            return 2
        pv = cap.get("provenance", {})
        tree = cap.get("tree", {})
        if cap.get("rows") != FORMAT_LAYOUT_ROWS or not tree or not pv.get("gpu"):
            print(f"capture_golden: --add-formats {path}: not a whole-domain capture_formats.py capture (rows "
                  f"{cap.get('rows')!r}, casts {sorted(tree)}, gpu {pv.get('gpu')!r})", file=sys.stderr)
            return 2
        if pv.get("capability") != arch:
            print(f"capture_golden: --add-formats {path}: captured on {pv.get('capability')}, this folder is {arch}",
                  file=sys.stderr)
            return 2
        for cast, d in tree.items():
            if cast not in FORMAT_CASTS or not re.fullmatch(r"[0-9a-f]{64}", str(d)):
                print(f"capture_golden: --add-formats {path}: cast {cast!r} digest {d!r}", file=sys.stderr)
                return 2
            key = f"format.{cast}_tree"
            have = digests.get(key)
            if have is not None and have != d:
                print(f"capture_golden: --add-formats {path}: {key} is {have} in {outdir}, the capture on "
                      f"{pv['gpu']} gives {d}: the devices disagree; nothing written", file=sys.stderr)
                return 1
            if have is None:
                digests[key] = d
                added.append(f"{key} ({pv['gpu']}, {pv.get('date')})")
        kept["layout"] = cap.get("layout")
        kept["captures"].append({"from": os.path.basename(path), "sha256": sha_of(open(path, "rb").read()),
                                 "tree": tree, "bytes_per_output": cap.get("bytes_per_output"),
                                 "special": cap.get("special"), "provenance": pv})
    digests.setdefault("format_keys", "format.<cast>_tree: tree digest over all 2^32 binary32 inputs, row r = "
                              "patterns (r << 16) | lo, lo = 0..65535, bytes_per_output little-endian outputs each "
                              "(formats.json; scripts/capture_formats.py)")
    dtext, ftext = json.dumps(digests, indent=2), json.dumps(kept, indent=2)
    write_atomically(os.path.join(outdir, "digests.json"), dtext)
    write_atomically(fpath, ftext)
    prov["files"]["digests.json"] = sha_of(dtext.encode())
    prov["files"]["formats.json"] = sha_of(ftext.encode())
    gpus = sorted({c["provenance"]["gpu"] for c in kept["captures"][-len(files):]})
    record_amendment(os.path.join(outdir, "provenance.json"), prov, None,
                     "--add-formats: digests.json keys " + (", ".join(added) or "none new (every digest equal)") +
                     "; formats.json captures " + ", ".join(os.path.basename(f) for f in files), {},
                     device={"gpu": ", ".join(gpus), "torch": None, "cuda_runtime_of_torch": None})
    return 0


def capture_all(outdir, spec, dev, cc, arch):
    os.makedirs(outdir, exist_ok=True)
    timings = {}
    for name in DTYPES:
        t = time.time()
        for fname, data in activation_tables(spec, name, dev).items():
            write_atomically(os.path.join(outdir, fname), data)
        timings[f"tables_{name}_s"] = round(time.time() - t, 3)
    digests = dict(DIGESTS_HEADER)
    run_digests(digest_jobs(spec), digests, dev, timings, only_missing=False)
    write_atomically(os.path.join(outdir, "digests.json"), json.dumps(digests, indent=2))
    write_atomically(os.path.join(outdir, "nan_observed.json"), json.dumps(nan_observations(dev), indent=2))
    t = time.time()
    mufu = mufu_tables(outdir)
    points = ex2_points(spec)
    write_atomically(os.path.join(outdir, "ex2_points.tar.xz"), pack_tar_xz(points))
    timings["mufu_s"] = round(time.time() - t, 3)

    def sh(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
        except Exception as exc:  # provenance must not fail the capture
            return f"unavailable: {exc}"

    files = sorted(n for n in os.listdir(outdir) if n != "provenance.json" and ".tmp." not in n)
    prov = dict(device_info(), **{
        "compute_capability": f"{cc[0]}.{cc[1]}", "arch": arch,
        "driver": sh(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"]),
        "cudnn": torch.backends.cudnn.version(), "python": platform.python_version(),
        "nvcc": sh(["nvcc", "--version"]).splitlines()[-1] if sh(["nvcc", "--version"]) else "",
        "host": platform.platform(), "command": " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]),
        "date_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "timings_s": timings, "mufu": mufu,
        "ex2_points": {"files": {k: sha_of(v) for k, v in points.items()}},
        "files": {n: sha_of(open(os.path.join(outdir, n), "rb").read()) for n in files},
    })
    write_atomically(os.path.join(outdir, "provenance.json"), json.dumps(prov, indent=2))
    print(json.dumps(prov, indent=2))
    return 0


def arch_name(text):
    """--arch: the architecture grammar of common/golden_library.h (is_arch_name): a folder name, never a path."""
    if not re.fullmatch(r"sm_[0-9]{2,3}[af]?", text):
        raise argparse.ArgumentTypeError(f"must be sm_<digits> (e.g. sm_90), got '{text}'")
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="golden root; files go to OUT/sm_<cc>/")
    ap.add_argument("--add-ops", action="store_true",
                    help="add to an existing capture what the op spec has and it lacks; touches nothing else")
    ap.add_argument("--add-records", action="store_true",
                    help="add records.tar.xz: the multi-input ops' records and eager outputs (fuseproof eval's format)")
    ap.add_argument("--add-stages", action="store_true",
                    help="add the multi-input ops' stage digests to digests.json (pairs from `fuseproof stages`)")
    ap.add_argument("--derive-stage-trees", action="store_true",
                    help="add each stage's tree digest (<key>.stage<k>_tree) from the reference, where its flat SHA-256 "
                         "equals the captured one (no GPU; --fuseproof with --digests in its stages command)")
    ap.add_argument("--add-formats", nargs="+", metavar="FILE",
                    help="add the device's narrow-format digests from scripts/capture_formats.py's JSON files")
    ap.add_argument("--records", type=int, default=65536, help="random records per op and dtype (--add-records)")
    ap.add_argument("--seed", type=int, default=23, help="seed of the random records (--add-records)")
    ap.add_argument("--stages-dir", help="--add-stages: read STAGES_DIR/<op>/<dtype>/stage<k>.* instead of running "
                                         "`fuseproof stages`")
    ap.add_argument("--max-pairs", type=int, help="--add-stages dry run: only the first N pairs of each stage, stored "
                                                  "as <key>.stage<k>.first<N>")
    ap.add_argument("--jobs", type=int, default=4, help="--add-stages: stages digested at once")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                    help="cpu: a dry run on torch's CPU kernels (--add-records, --add-stages; never into golden/)")
    ap.add_argument("--arch", default="sm_90", type=arch_name,
                    help="with --device cpu or --add-formats: the folder under --out to amend (sm_<digits>)")
    ap.add_argument("--refresh-ex2-points", action="store_true",
                    help="with --add-ops: capture ex2_points.tar.xz again even where it exists (recorded as such)")
    ap.add_argument("--spec", help="the op spec as `fuseproof ops --json` writes it (default: run --fuseproof)")
    ap.add_argument("--fuseproof", default="build-gpu/bin/fuseproof", help="the fuseproof binary that prints the spec")
    args = ap.parse_args()
    if args.add_formats:
        if args.add_ops or args.add_records or args.add_stages:
            print("capture_golden: --add-formats runs alone", file=sys.stderr)
            return 2
        return add_formats(os.path.join(args.out, args.arch), args.add_formats)
    if args.derive_stage_trees:
        if args.add_ops or args.add_records or args.add_stages:
            print("capture_golden: --derive-stage-trees runs alone", file=sys.stderr)
            return 2
        spec = spec_or_none(args)
        return 2 if spec is None else derive_stage_trees(os.path.join(args.out, args.arch), spec, args.fuseproof)
    if args.device == "cpu":
        golden = os.path.realpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "golden"))
        if not (args.add_records or args.add_stages) or args.add_ops:
            print("capture_golden: --device cpu is a dry run of --add-records and --add-stages only", file=sys.stderr)
            return 2
        if os.path.realpath(args.out) == golden:
            print(f"capture_golden: --device cpu never writes into {golden} (a dry run, not golden data)",
                  file=sys.stderr)
            return 2
    elif not torch.cuda.is_available():
        print("capture_golden: no CUDA device visible to torch", file=sys.stderr)
        return 2
    spec = spec_or_none(args)
    if spec is None:
        return 2
    dev = torch.device(args.device)
    if args.device == "cpu":
        arch = args.arch
    else:
        cc = torch.cuda.get_device_capability()
        arch = f"sm_{cc[0]}{cc[1]}"
    outdir = os.path.join(args.out, arch)
    if args.add_ops or args.add_records or args.add_stages:
        rc = 0
        if args.add_ops:
            rc = rc or add_ops(outdir, spec, dev, args.refresh_ex2_points)
        if args.add_records:
            rc = rc or add_records(outdir, spec, dev, args.records, args.seed)
        if args.add_stages:
            rc = rc or add_stages(outdir, spec, dev, args.fuseproof, args.stages_dir, args.max_pairs,
                                  max(1, args.jobs))
        return rc
    return capture_all(outdir, spec, dev, cc, arch)


if __name__ == "__main__":
    sys.exit(main())
