#!/usr/bin/env python3
"""gpu_runner_test.py: scripts/gpu_runner.py's dry run over the whole plan, without a GPU.

    gpu_runner_test.py FUSEPROOF_BINARY BUILD_DIR

Checks: every step of scripts/gpu_plan.toml expands and prints its commands; the per-op steps cover exactly the ops
of `fuseproof ops --json` (the op spec, not a list in a script) for the contracts they name; the mutation step uses
the named scope; refusals (an unknown step, an unknown plan key, a step naming a value it lacks) are one line and exit
2. A runner that skipped ops or steps would fail here (the negative controls run a plan with one op filtered out).
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "..", "..", "scripts", "gpu_runner.py")
PLAN = os.path.join(HERE, "..", "..", "scripts", "gpu_plan.toml")


def run(*args):
    env = {k: v for k, v in os.environ.items() if k not in ("OUT", "BUDGET", "BUILD_DIR")}
    return subprocess.run([sys.executable, RUNNER] + list(args), capture_output=True, text=True, env=env)


def fail(msg):
    print("gpu_runner_test: FAIL: " + msg)
    sys.exit(1)


def main():
    fuseproof, build = sys.argv[1], sys.argv[2]
    spec = json.loads(subprocess.run([fuseproof, "ops", "--json"], check=True, capture_output=True, text=True).stdout)
    ops = {o["name"]: [c["name"] for c in o["contracts"]] for o in spec["ops"]}
    steps = [line.split()[0] for line in run("--list").stdout.splitlines()]
    if len(steps) < 10:
        fail("the plan lists %d steps: %s" % (len(steps), steps))
    p = run("--dry-run", "--build", build, "--fuseproof", fuseproof, *steps)
    if p.returncode != 0:
        fail("dry run exit %d: %s" % (p.returncode, p.stderr.strip()))
    lines = [l for l in p.stdout.splitlines() if l.startswith("+ [")]
    by_step = {}
    for l in lines:
        by_step.setdefault(l[3:l.index("]")], []).append(l)
    missing = [s for s in steps if s not in by_step]
    if missing:
        fail("steps without a command: %s" % missing)
    # The eager audit: one job per op of the spec, no more, no fewer.
    audited = sorted(l.split("--op ")[1].split()[0] for l in by_step["audit"])
    if audited != sorted(ops):
        fail("audit step ops %s, spec %s" % (audited, sorted(ops)))
    # The other contracts: exactly the ops declaring fp32 or fma.
    want = sorted("lib%s_%s_cuda.so" % (o, c) for o, cs in ops.items() for c in cs if c in ("fp32", "fma"))
    got = sorted(os.path.basename(l.split("--plugin ")[1].split()[0]) for l in by_step["audit_other"])
    if got != want:
        fail("audit_other plugins %s, want %s" % (got, want))
    if not any("--scope mutant" in l for l in by_step["mutants"]):
        fail("the mutants step does not use --scope mutant: %s" % by_step["mutants"])
    if not any("check_cuda_mutants.py" in l for l in by_step["mutants"]):
        fail("the mutants step does not check the kills")
    # Subjects: ops x 3 subjects x 2 dtypes.
    if sum("--subject " in l for l in by_step["subjects"]) != len(ops) * 3 * 2:
        fail("subjects: %d jobs for %d ops" % (len(by_step["subjects"]), len(ops)))

    # Negative controls and refusals.
    with tempfile.TemporaryDirectory() as d:
        text = open(PLAN).read()
        bad = os.path.join(d, "bad.toml")
        open(bad, "w").write(text.replace('jobs = 4\nmin_seconds = 200', 'jobs = 4\nrepeat = 2\nmin_seconds = 200', 1))
        q = run("--dry-run", "--plan", bad, "--build", build, "--fuseproof", fuseproof, "audit")
        if q.returncode != 2 or "unknown keys repeat" not in q.stderr or len(q.stderr.strip().splitlines()) != 1:
            fail("an unknown plan key: exit %d, %r" % (q.returncode, q.stderr))
        one = os.path.join(d, "one.toml")
        first = sorted(ops)[0]
        open(one, "w").write(text.replace('contract = "eager"\nscope = "default"',
                                          'contract = "eager"\nscope = "default"\nops = ["%s"]' % first, 1))
        q = run("--dry-run", "--plan", one, "--build", build, "--fuseproof", fuseproof, "audit")
        n = sum(1 for l in q.stdout.splitlines() if l.startswith("+ [audit]"))
        if q.returncode != 0 or n != 1:
            fail("a plan filtered to one op ran %d jobs (exit %d): the count check above would miss a skip" % (n, q.returncode))
        unknown_var = os.path.join(d, "var.toml")
        open(unknown_var, "w").write(text.replace('"--scope", "{scope}"', '"--scope", "{scop}"', 1))
        q = run("--dry-run", "--plan", unknown_var, "--build", build, "--fuseproof", fuseproof, "audit")
        if q.returncode != 2 or "{scop}" not in q.stderr:
            fail("an unknown {name}: exit %d, %r" % (q.returncode, q.stderr))
    # --match: only the jobs whose name it finds; a bad expression is refused on one line.
    q = run("--dry-run", "--build", build, "--fuseproof", fuseproof, "--match", r"^fp8_group_quant\.", "quant_audit")
    picked = [l for l in q.stdout.splitlines() if l.startswith("+ [quant_audit]")]
    want = [c["name"] for o in spec["quant_ops"] if o["name"] == "fp8_group_quant" for c in o["contracts"]]
    if q.returncode != 0 or len(picked) != len(want) or not all("--op fp8_group_quant " in l for l in picked):
        fail("--match picked %d jobs (exit %d), want %d of fp8_group_quant" % (len(picked), q.returncode, len(want)))
    q = run("--dry-run", "--build", build, "--fuseproof", fuseproof, "--match", "(", "quant_audit")
    if q.returncode != 2 or len(q.stderr.strip().splitlines()) != 1 or "--match" not in q.stderr:
        fail("a bad --match: exit %d, %r" % (q.returncode, q.stderr))
    q = run("--dry-run", "--build", build, "--fuseproof", fuseproof, "nope")
    if q.returncode != 2 or len(q.stderr.strip().splitlines()) != 1 or "unknown step nope" not in q.stderr:
        fail("an unknown step: exit %d, %r" % (q.returncode, q.stderr))
    q = run("build")  # no --out and not a dry run
    if q.returncode != 2 or "--out" not in q.stderr:
        fail("no --out: exit %d, %r" % (q.returncode, q.stderr))
    check_split_archive()
    print("gpu_runner_test: %d steps, %d commands, %d ops from the spec: ok" % (len(steps), len(lines), len(ops)))


def check_split_archive():
    """The archive's parts: split(1)'s names, in order, their bytes the archive's; a small archive left whole."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("gpu_runner", RUNNER)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    with tempfile.TemporaryDirectory() as d:
        data = os.urandom(1000 * 27 + 5)  # 28 parts of 1,000 bytes: past "az" into "ba"
        path = os.path.join(d, "runner.tar.gz")
        open(path, "wb").write(data)
        parts = mod.split_archive(path, 1000)
        names = [os.path.basename(p) for p in parts]
        if len(parts) != 28 or names[0] != "runner.tar.gz.part-aa" or names[26] != "runner.tar.gz.part-ba":
            fail("split_archive: parts %s" % names)
        if sorted(names) != names or os.path.exists(path):
            fail("split_archive: parts out of order, or the whole archive left beside them")
        if b"".join(open(p, "rb").read() for p in sorted(parts)) != data:
            fail("split_archive: the parts do not join back into the archive")
        small = os.path.join(d, "small.tar.gz")
        open(small, "wb").write(data[:1000])
        if mod.split_archive(small, 1000) != [small] or open(small, "rb").read() != data[:1000]:
            fail("split_archive: an archive of one part's size was split or changed")


if __name__ == "__main__":
    main()
