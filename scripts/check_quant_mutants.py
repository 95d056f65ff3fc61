#!/usr/bin/env python3
"""check_quant_mutants.py AUDIT MUTANT_DIR OUT [--backend cuda|emulated]: every quantization mutant of
kernels/mutants/quant_bugs.h (each row names the ops it applies to and the class that must kill it) audited at the
mutant scope with `--only <that class>`; each must be killed by it. The GPU runner's quant_mutants step
(scripts/gpu_plan.toml); ctest's Mutation_Quant.* do the same for the host mutants. Writes OUT/<mutant>.json and
OUT/quant_mutants.json (one row per mutant). Exit 0 when every mutant is killed by its class; 1 otherwise; 2 on bad
arguments or an unreadable catalogue."""

import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROW = re.compile(r'X\((k[A-Za-z0-9]+), "([a-z0-9_]+)", ([0-9]+), "([a-z0-9-]+)", "([a-z]+)",')


def catalogue(ops):
    """[(op, bug, class)] from quant_bugs.h; the mask's bit i is quantization op i of `fuseproof ops`."""
    text = open(os.path.join(HERE, "..", "kernels", "mutants", "quant_bugs.h")).read()
    rows = []
    for _, name, mask, _, klass in ROW.findall(text):
        if name == "control":
            continue
        rows += [(op, name, klass) for i, op in enumerate(ops) if int(mask) >> i & 1]
    return rows


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    backend = "cuda"
    if "--backend" in argv:
        backend = argv[argv.index("--backend") + 1]
        args.remove(backend)
    if len(args) != 3 or backend not in ("cuda", "emulated"):
        print("usage: check_quant_mutants.py AUDIT MUTANT_DIR OUT [--backend cuda|emulated]", file=sys.stderr)
        return 2
    audit, mutant_dir, out = args
    memory = "cuda" if backend == "cuda" else "host"
    fuseproof = os.path.join(os.path.dirname(audit), "fuseproof")
    ops = [o["name"] for o in json.loads(subprocess.run([fuseproof, "ops", "--json"], check=True, capture_output=True,
                                                           text=True).stdout)["quant_ops"]]
    rows = catalogue(ops)
    if not rows:
        print("check_quant_mutants.py: kernels/mutants/quant_bugs.h lists no mutant", file=sys.stderr)
        return 2
    os.makedirs(out, exist_ok=True)
    results, bad = [], 0
    for op, bug, klass in rows:
        plugin = os.path.join(mutant_dir, memory, "lib%s_%s_%s.so" % (memory, op, bug))
        report = os.path.join(out, "%s_%s.json" % (op, bug))
        if not os.path.exists(plugin):
            row = {"mutant": op + " " + bug, "expected": klass, "status": "not built", "plugin": plugin}
        else:
            p = subprocess.run([audit, "audit", "--plugin", plugin, "--backend", backend, "--dtype", "all", "--scope",
                                "mutant", "--only", klass, "--no-reference", "--json", report],
                               capture_output=True, text=True)
            killed = json.load(open(report)).get("killed_by") if os.path.exists(report) else None
            ok = p.returncode == 1 and killed and killed.get("class") == klass
            row = {"mutant": op + " " + bug, "expected": klass, "exit": p.returncode,
                   "killed_by": killed.get("class") if killed else None, "status": "killed" if ok else "BAD",
                   "first_record": (killed or {}).get("first_record", "")}
        bad += row["status"] != "killed"
        results.append(row)
        print("  %s %-42s %-8s exit %s killed by %s" % ("ok " if row["status"] == "killed" else "BAD", row["mutant"],
                                                         klass, row.get("exit"), row.get("killed_by")), flush=True)
    json.dump({"backend": backend, "mutants": results}, open(os.path.join(out, "quant_mutants.json"), "w"), indent=1)
    print("  %d quantization mutants, %d not killed by their class" % (len(results), bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
