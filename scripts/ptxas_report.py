#!/usr/bin/env python3
"""ptxas_report.py: registers, spills and stack of every kernel of the shipped CUDA sources, per architecture.

Compiles each source with `nvcc -Xptxas -v` for each architecture (no GPU needed), demangles the entry names and
prints one Markdown table: kernel x architecture -> registers / spill stores + loads / stack. Exit 1 when any kernel
spills or uses stack (the Blackwell-readiness check, docs/PERFORMANCE.md), 2 when nvcc fails.

  scripts/ptxas_report.py [--archs 90,100,103] [--nvcc PATH] [SOURCE.cu ...]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_SOURCES = ["kernels/bias_gelu_tanh.cu", "kernels/peers/seed_peer_cuda_plugin.cu"]


def demangle(names):
    cxxfilt = shutil.which("c++filt")
    if not cxxfilt:
        return names
    out = subprocess.run([cxxfilt], input="\n".join(names), capture_output=True, text=True, check=True).stdout
    return out.splitlines()


def short(name):
    name = name.replace("fuseproof::kernel::", "").replace("(anonymous namespace)::", "")
    name = name.replace("(Half)0", "bf16").replace("(Half)1", "fp16").replace("void ", "", 1)
    if name.endswith(")"):  # drop the parameter list: the last top-level parenthesis
        depth = 0
        for i in range(len(name) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(name[i], 0)
            if depth == 0:
                name = name[:i]
                break
    return name


def compile_report(nvcc, source, arch):
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [nvcc, "-std=c++17", "-O3", f"-arch=sm_{arch}", "--expt-relaxed-constexpr", "-Xptxas", "-v",
               "-I" + os.path.join(ROOT, "kernels"), "-I" + ROOT, f"-DFUSEPROOF_CUDA_ARCH_LIST=\"{arch}\"", "-cubin",
               "-o", os.path.join(tmp, "k.cubin"), os.path.join(ROOT, source)]
        r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(f"ptxas_report: nvcc failed for {source} sm_{arch}:\n{r.stderr}")
        sys.exit(2)
    rows, entry = {}, None
    for line in r.stderr.splitlines():
        m = re.search(r"Compiling entry function '([^']+)'", line)
        if m:
            entry = m.group(1)
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and entry:
            rows.setdefault(entry, {}).update(stack=int(m.group(1)), spill=int(m.group(2)) + int(m.group(3)))
        m = re.search(r"Used (\d+) registers", line)
        if m and entry:
            rows.setdefault(entry, {})["regs"] = int(m.group(1))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--archs", default="90,100,103")
    ap.add_argument("--nvcc", default=shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc")
    ap.add_argument("sources", nargs="*", default=DEFAULT_SOURCES)
    a = ap.parse_args()
    archs = [s.strip() for s in a.archs.split(",") if s.strip()]
    if not os.access(a.nvcc, os.X_OK):
        sys.stderr.write(f"ptxas_report: nvcc must be executable, got {a.nvcc}\n")
        return 2
    table, bad = {}, 0
    for src in a.sources:
        for arch in archs:
            for entry, v in compile_report(a.nvcc, src, arch).items():
                table.setdefault((src, entry), {})[arch] = v
    keys = sorted(table)
    names = demangle([k[1] for k in keys])
    nvcc_version = subprocess.run([a.nvcc, "--version"], capture_output=True, text=True).stdout.strip().splitlines()
    print(f"Resources per kernel from `{os.path.basename(a.nvcc)} -Xptxas -v` ({nvcc_version[-1] if nvcc_version else '?'}), "
          "registers / spill bytes (stores + loads) / stack bytes\n")
    print("| source | kernel | " + " | ".join(f"sm_{x}" for x in archs) + " |")
    print("|---|---|" + "---|" * len(archs))
    for (src, _), name in zip(keys, names):
        cells = []
        for arch in archs:
            v = table[(src, _)].get(arch)
            if v is None:
                cells.append("-")
                continue
            if v.get("spill", 0) or v.get("stack", 0):
                bad += 1
            cells.append(f"{v.get('regs', '?')} / {v.get('spill', 0)} / {v.get('stack', 0)}")
        print(f"| {os.path.basename(src)} | `{short(name)}` | " + " | ".join(cells) + " |")
    print(f"\n{len(keys)} kernels x {len(archs)} architectures: "
          + ("no spills, no stack" if bad == 0 else f"{bad} kernel builds spill or use stack"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
