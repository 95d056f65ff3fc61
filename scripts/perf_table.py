#!/usr/bin/env python3
"""perf_table.py: renders a `fuseproof bench` bench.json as the Markdown tables of docs/PERFORMANCE.md (the one
renderer of bench.json; `fuseproof bench` writes only the JSON).

    scripts/perf_table.py bench.json > round.md

CUDA backend: the machine line, a summary (fused/copy per shape x dtype x vector, one column per math, the best
marked), the small-shape graph-replay table, and the full table. Rows that were not exact show NOT EXACT and no
ratio. Emulated backend: the CPU line and one table of Melem/s per variant.
"""
import json
import sys


def num(v, f):
    return "-" if v is None else f % v


def emulated(j):
    m, rs = j.get("machine", {}), j.get("results", [])
    print("Machine: %s, %s hardware threads, date %s; CPU emulation, settings `%s`.\n" % (
        m.get("cpu"), m.get("hardware_threads"), m.get("date"), json.dumps(j.get("settings", {}))))
    print("| shape | dtype | vector | math | Melem/s | ms per launch | same as first variant |")
    print("|---|---|---|---|---|---|---|")
    for r in rs:
        us = r.get("fused_us")
        print("| %d x %d | %s | %d | %s | %s | %s | %s |" % (
            r["rows"], r["width"], r["dtype"], r["vector_bytes"], r["math"], num(r.get("fused_GBps"), "%.1f"),
            num(None if us is None else us / 1000, "%.2f"), "yes" if r["exact"] else "**NO**"))


def main(path):
    j = json.load(open(path))
    if j.get("backend") == "emulated":
        emulated(j)
        return
    m, rs = j.get("machine", {}), j.get("results", [])
    print("Machine: %s, driver %s, CUDA runtime %s, torch %s, %s SMs, date %s; settings `%s`.\n" % (
        m.get("gpu"), m.get("driver"), m.get("cuda_runtime"), m.get("torch"), m.get("sms"), m.get("date"),
        json.dumps(j.get("settings", {}))))
    maths = []
    for r in rs:
        if r["math"] not in maths:
            maths.append(r["math"])
    keys = []
    for r in rs:
        k = (r["shape"], r["rows"], r["width"], r["dtype"], r["vector_bytes"])
        if k not in keys:
            keys.append(k)
    print("| shape | dtype | vector | " + " | ".join("%s fused/copy (x eager)" % x for x in maths) + " |")
    print("|---|---|---|" + "---|" * len(maths))
    for k in keys:
        cells, best = {}, None
        for r in rs:
            if (r["shape"], r["rows"], r["width"], r["dtype"], r["vector_bytes"]) != k:
                continue
            if not r["exact"]:
                cells[r["math"]] = "**NOT EXACT**"
                continue
            f = r.get("fused_over_copy")
            cells[r["math"]] = "%s (x%s)" % (num(f, "%.3f"), num(r.get("speedup_vs_eager"), "%.2f"))
            if f is not None and (best is None or f > best[1]):
                best = (r["math"], f)
        if best:
            cells[best[0]] = "**" + cells[best[0]] + "**"
        print("| %s (%d x %d) | %s | %d | %s |" % (k[0], k[1], k[2], k[3], k[4],
                                                   " | ".join(cells.get(x, "-") for x in maths)))
    graph = [r for r in rs if r.get("graph_fused_pdl_us") is not None]
    if graph:
        print("\nGraph replay, microseconds per launch (fused with PDL / without / copy launch):\n")
        print("| shape | dtype | vector | math | fused PDL | fused no-PDL | copy | PDL fused - copy |")
        print("|---|---|---|---|---|---|---|---|")
        for r in graph:
            d = r["graph_fused_pdl_us"] - r["graph_copy_us"] if r.get("graph_copy_us") is not None else None
            print("| %s | %s | %d | %s | %s | %s | %s | %s |" % (
                r["shape"], r["dtype"], r["vector_bytes"], r["math"], num(r["graph_fused_pdl_us"], "%.2f"),
                num(r.get("graph_fused_nopdl_us"), "%.2f"), num(r.get("graph_copy_us"), "%.2f"), num(d, "%+.2f")))
    print("\nFull table:\n")
    print("| shape | dtype | vector | math | exact | fused/copy | x eager | fused us | copy us | eager us |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rs:
        print("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
            r["shape"], r["dtype"], r["vector_bytes"], r["math"], "yes" if r["exact"] else "**NOT EXACT**",
            num(r.get("fused_over_copy"), "%.3f"), num(r.get("speedup_vs_eager"), "%.2f"), num(r.get("fused_us"), "%.2f"),
            num(r.get("copy_us"), "%.2f"), num(r.get("eager_us"), "%.2f")))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: perf_table.py bench.json")
    main(sys.argv[1])
