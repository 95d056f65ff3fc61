#!/usr/bin/env python3
"""perf_table.py: renders a `fuseproof bench` bench.json as the Markdown tables of docs/PERFORMANCE.md (the one
renderer of bench.json; `fuseproof bench` writes only the JSON).

    scripts/perf_table.py bench.json > round.md
    scripts/perf_table.py --as-shipped table-bulk@134217728,table-range-bulk@8388608,direct@0 bench.json

    scripts/perf_table.py --as-shipped auto bench.json

--as-shipped RULES: the headline table (docs/PERFORMANCE.md) instead: per row (shape x dtype x distribution) the
built-in math kAuto resolves to for that many elements (the first NAME@MIN_ELEMENTS rule whose minimum the shape
reaches, as kernels/bias_gelu_tanh_launcher.h says), beside every plugin, eager and copy, the worst case per shape x
dtype first. RULES = auto takes the run's own `auto=MATH` rows instead (what kAuto launched in that process; the bench
ran --maths auto).

    scripts/perf_table.py --protocols alternate/bench.json after-gemm/bench.json blocks/bench.json

--protocols: the same variants timed under several `--timing`/`--pdl` protocols (one bench.json each, one column each):
the worst fused/copy over distributions, and the median fused and copy microseconds, per shape x dtype x variant.

CUDA backend: the machine line, the worst case over input distributions per shape x dtype (one column per variant:
the built-in kernel's vector x math, each plugin; the lowest fused/copy over the distributions and which one; the
headline figure), the per-distribution table (fused/copy per shape x dtype x distribution, same columns), the
small-shape graph-replay table, and the full table. Rows that were not exact show NOT EXACT and no ratio. Emulated
backend: the CPU line, the worst case (Melem/s) and one table of Melem/s per variant.
"""
import json
import statistics
import sys


def num(v, f):
    return "-" if v is None else f % v


def dist(r):
    """The row's input distribution; bench.json files from before --dist used torch.randn, i.e. N(0, 1)."""
    return r.get("dist", "randn")


def variant(r):
    """The column a row belongs to: the built-in kernel's vector x math, or a plugin's kernel name and vector."""
    kernel = r.get("kernel", "built-in")
    math = r.get("math", "-")
    return "%s %dB%s" % (kernel, r["vector_bytes"], "" if math in ("", "-") else " " + math)


def worst_case(rs, value, fmt, higher_is_better=True):
    """Per shape x dtype, one column per variant: the worst value over distributions and its distribution. A
    distribution on which the variant is not exact is its worst case (NOT EXACT)."""
    variants, keys = [], []
    for r in rs:
        if variant(r) not in variants:
            variants.append(variant(r))
        k = (r["shape"], r["rows"], r["width"], r["dtype"])
        if k not in keys:
            keys.append(k)
    print("| shape | dtype | " + " | ".join("%s: worst (distribution)" % v for v in variants) + " |")
    print("|---|---|" + "---|" * len(variants))
    for k in keys:
        cells = []
        for v in variants:
            mine = [r for r in rs if (r["shape"], r["rows"], r["width"], r["dtype"]) == k and variant(r) == v]
            if not mine:
                cells.append("-")
                continue
            bad = [r for r in mine if not r["exact"]]
            if bad:
                cells.append("**NOT EXACT** (%s)" % dist(bad[0]))
                continue
            measured = [r for r in mine if r.get(value) is not None]
            if not measured:
                cells.append("-")
                continue
            w = min(measured, key=lambda r: r[value]) if higher_is_better else max(measured, key=lambda r: r[value])
            cells.append("%s (%s, %d dists)" % (fmt % w[value], dist(w), len(mine)))
        print("| %s (%d x %d) | %s | %s |" % (k[0], k[1], k[2], k[3], " | ".join(cells)))


def emulated(j):
    m, rs = j.get("machine", {}), j.get("results", [])
    print("Machine: %s, %s hardware threads, date %s; CPU emulation, settings `%s`.\n" % (
        m.get("cpu"), m.get("hardware_threads"), m.get("date"), json.dumps(j.get("settings", {}))))
    print("Worst case over distributions, Melem/s:\n")
    worst_case(rs, "fused_GBps", "%.1f")
    print("\nEvery row:\n")
    print("| shape | dtype | distribution | variant | Melem/s | ms per launch | same as first variant |")
    print("|---|---|---|---|---|---|---|")
    for r in rs:
        us = r.get("fused_us")
        print("| %d x %d | %s | %s | %s | %s | %s | %s |" % (
            r["rows"], r["width"], r["dtype"], dist(r), variant(r), num(r.get("fused_GBps"), "%.1f"),
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
    print("Worst case over input distributions: fused/copy (same-run device copy of the same bytes), the lowest over "
          "the distributions measured, and which distribution gave it.\n")
    worst_case(rs, "fused_over_copy", "%.3f")
    variants, keys = [], []
    for r in rs:
        if variant(r) not in variants:
            variants.append(variant(r))
        k = (r["shape"], r["rows"], r["width"], r["dtype"], dist(r))
        if k not in keys:
            keys.append(k)
    print("\nPer distribution: fused/copy (x eager); bold = the best variant of the row.\n")
    print("| shape | dtype | distribution | " + " | ".join(variants) + " | eager us | copy us |")
    print("|---|---|---|" + "---|" * len(variants) + "---|---|")
    for k in keys:
        cells, best, eager, copy = {}, None, None, None
        for r in rs:
            if (r["shape"], r["rows"], r["width"], r["dtype"], dist(r)) != k:
                continue
            eager = r.get("eager_us") if eager is None else eager
            copy = r.get("copy_us") if copy is None else copy
            if not r["exact"]:
                cells[variant(r)] = "**NOT EXACT**"
                continue
            f = r.get("fused_over_copy")
            cells[variant(r)] = "%s (x%s)" % (num(f, "%.3f"), num(r.get("speedup_vs_eager"), "%.2f"))
            if f is not None and (best is None or f > best[1]):
                best = (variant(r), f)
        if best:
            cells[best[0]] = "**" + cells[best[0]] + "**"
        print("| %s (%d x %d) | %s | %s | %s | %s | %s |" % (k[0], k[1], k[2], k[3], k[4],
                                                           " | ".join(cells.get(x, "-") for x in variants),
                                                           num(eager, "%.2f"), num(copy, "%.2f")))
    graph = [r for r in rs if r.get("graph_fused_pdl_us") is not None]
    if graph:
        print("\nGraph replay, microseconds per launch (fused with PDL / without / copy launch):\n")
        print("| shape | dtype | distribution | variant | fused PDL | fused no-PDL | copy | PDL fused - copy |")
        print("|---|---|---|---|---|---|---|---|")
        for r in graph:
            d = r["graph_fused_pdl_us"] - r["graph_copy_us"] if r.get("graph_copy_us") is not None else None
            print("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
                r["shape"], r["dtype"], dist(r), variant(r), num(r["graph_fused_pdl_us"], "%.2f"),
                num(r.get("graph_fused_nopdl_us"), "%.2f"), num(r.get("graph_copy_us"), "%.2f"), num(d, "%+.2f")))
    print("\nFull table:\n")
    print("| shape | dtype | distribution | variant | exact | fused/copy | x eager | fused us | copy us | eager us |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rs:
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["shape"], r["dtype"], dist(r), variant(r), "yes" if r["exact"] else "**NOT EXACT**",
            num(r.get("fused_over_copy"), "%.3f"), num(r.get("speedup_vs_eager"), "%.2f"), num(r.get("fused_us"), "%.2f"),
            num(r.get("copy_us"), "%.2f"), num(r.get("eager_us"), "%.2f")))


def as_shipped(path, rules_text):
    rules = []
    for item in ([] if rules_text == "auto" else rules_text.split(",")):
        name, _, least = item.partition("@")
        if not name or not least.isdigit():
            sys.exit("perf_table.py: --as-shipped entries must be NAME@MIN_ELEMENTS, got %r" % item)
        rules.append((name, int(least)))
    rules.sort(key=lambda r: -r[1])
    j = json.load(open(path))
    m, rs = j.get("machine", {}), j.get("results", [])
    keys = []
    for r in rs:
        k = (r["shape"], r["rows"], r["width"], r["dtype"], dist(r))
        if k not in keys:
            keys.append(k)
    plugins = []
    for r in rs:
        if r.get("kernel", "built-in") != "built-in" and variant(r) not in plugins:
            plugins.append(variant(r))

    def shipped_math(rows, width):
        return next(name for name, least in rules if rows * width >= least)

    table, missing = [], []
    for k in keys:
        mine = [r for r in rs if (r["shape"], r["rows"], r["width"], r["dtype"], dist(r)) == k]
        built_in = [r for r in mine if r.get("kernel", "built-in") == "built-in"]
        if rules:
            math = shipped_math(k[1], k[2])
            b = [r for r in built_in if r.get("math") == math]
        else:
            b = [r for r in built_in if r.get("math", "").startswith("auto=")]
            math = b[0]["math"][len("auto="):] if b else "auto"
        if not b:
            missing.append("%s %s %s (%s)" % (k[0], k[3], k[4], math))
            continue
        table.append((k, math, b[0], {p: next((r for r in mine if variant(r) == p), None) for p in plugins}))
    if missing:
        sys.exit("perf_table.py: no row of the shipped math for " + "; ".join(missing))
    f = lambda r: None if r is None or not r["exact"] else r.get("fused_over_copy")
    print("Machine: %s, driver %s, CUDA runtime %s, torch %s, %s SMs, date %s; settings `%s`. Built-in as shipped: %s.\n"
          % (m.get("gpu"), m.get("driver"), m.get("cuda_runtime"), m.get("torch"), m.get("sms"), m.get("date"),
             json.dumps(j.get("settings", {})),
             ", ".join("%s from %d elements" % r for r in rules) if rules else "what kAuto launched in this run"))
    print("Worst case over input distributions (fused/copy, same-run device copy; the distribution that gave it):\n")
    print("| shape | dtype | built-in as shipped | " + " | ".join(plugins) + " |")
    print("|---|---|---|" + "---|" * len(plugins))
    for sk in dict.fromkeys((k[0], k[1], k[2], k[3]) for k, _, _, _ in table):
        rows = [t for t in table if (t[0][0], t[0][1], t[0][2], t[0][3]) == sk]
        def worst(get):
            vals = [(get(t), t[0][4]) for t in rows]
            if any(v is None for v, _ in vals):
                return "**NOT EXACT**"
            v, d = min(vals)
            return "%.3f (%s)" % (v, d)
        cells = [worst(lambda t: f(t[2])) + " " + rows[0][1]] + [worst(lambda t, p=p: f(t[3][p])) for p in plugins]
        print("| %s (%d x %d) | %s | %s |" % (sk[0], sk[1], sk[2], sk[3], " | ".join(cells)))
    print("\nEvery row: fused/copy (x eager); the built-in as shipped against each plugin.\n")
    print("| shape | dtype | distribution | built-in (math) | " + " | ".join(plugins) +
          " | built-in >= every plugin | eager us | copy us | built-in us |")
    print("|---|---|---|---|" + "---|" * len(plugins) + "---|---|---|---|")
    wins = 0
    for k, math, b, ps in table:
        cell = lambda r: "**NOT EXACT**" if r is not None and not r["exact"] else (
            "-" if r is None else "%s (x%s)" % (num(r.get("fused_over_copy"), "%.3f"), num(r.get("speedup_vs_eager"), "%.2f")))
        ok = f(b) is not None and all(f(r) is None or f(b) >= f(r) for r in ps.values())
        wins += ok
        print("| %s | %s | %s | %s (%s) | %s | %s | %s | %s | %s |" % (
            k[0], k[3], k[4], cell(b), math, " | ".join(cell(ps[p]) for p in plugins), "yes" if ok else "**NO**",
            num(b.get("eager_us"), "%.1f"), num(b.get("copy_us"), "%.1f"), num(b.get("fused_us"), "%.1f")))
    print("\nThe built-in as shipped is at or above every plugin in %d of %d rows." % (wins, len(table)))


def protocol_name(j):
    """A run's timing protocol, from its settings: --timing, and ", no PDL" for --pdl off."""
    st = j.get("settings", {})
    return st.get("timing", "blocks (before --timing)") + ("" if st.get("pdl", "on") == "on" else ", no PDL")


def protocols(paths):
    """The same variants timed under several protocols, one bench.json each: per shape x dtype and variant, the worst
    fused/copy over the distributions under each protocol, and the medians over the distributions of the fused and
    the copy microseconds, so that a protocol's effect shows as a cost of the fused kernel or of the copy."""
    runs = [(protocol_name(j), j) for j in (json.load(open(p)) for p in paths)]
    names = [n for n, _ in runs]
    if len(set(names)) != len(names):
        sys.exit("perf_table.py: --protocols needs one bench.json per protocol, got %s" % ", ".join(names))
    m = runs[0][1].get("machine", {})
    print("Machine: %s, driver %s, CUDA runtime %s, torch %s, %s SMs; %d runs of one session, dates %s.\n" % (
        m.get("gpu"), m.get("driver"), m.get("cuda_runtime"), m.get("torch"), m.get("sms"), len(runs),
        ", ".join(j.get("machine", {}).get("date", "?") for _, j in runs)))
    print("Per protocol: worst fused/copy over the distributions (which one) / median fused us / median copy us.\n")
    print("| shape | dtype | variant | " + " | ".join(names) + " |")
    print("|---|---|---|" + "---|" * len(names))
    keys = []
    for _, j in runs:
        for r in j.get("results", []):
            k = (r["shape"], r["rows"], r["width"], r["dtype"], variant(r))
            if k not in keys:
                keys.append(k)
    for k in keys:
        cells = []
        for _, j in runs:
            mine = [r for r in j.get("results", []) if (r["shape"], r["rows"], r["width"], r["dtype"], variant(r)) == k]
            if not mine:
                cells.append("-")
            elif any(not r["exact"] for r in mine):
                cells.append("**NOT EXACT**")
            else:
                w = min(mine, key=lambda r: r["fused_over_copy"])
                med = lambda key: statistics.median(r[key] for r in mine)
                cells.append("%.3f (%s) / %.1f / %.1f" % (w["fused_over_copy"], dist(w), med("fused_us"), med("copy_us")))
        print("| %s (%d x %d) | %s | %s | %s |" % (k[0], k[1], k[2], k[3], k[4], " | ".join(cells)))


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) == 3 and args[0] == "--as-shipped":
        as_shipped(args[2], args[1])
    elif len(args) >= 3 and args[0] == "--protocols":
        protocols(args[1:])
    elif len(args) == 1:
        main(args[0])
    else:
        sys.exit("usage: perf_table.py [--as-shipped NAME@MIN_ELEMENTS,...] bench.json | --protocols A.json B.json ...")
