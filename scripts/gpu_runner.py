#!/usr/bin/env python3
"""gpu_runner.py: one GPU session from a plan of steps written as data (scripts/gpu_plan.toml).

    OUT=<dir> scripts/gpu_runner.py [--plan FILE] [--budget S] [--match REGEX] [--dry-run] [STEP[+STEP...] ...]

Steps run in the order given (the plan's [run] default when none is); steps joined by "+" run side by side. A step
starts only while the budget leaves it its `min_seconds`, and every job runs under a limit that ends inside the
budget; a job that would get less than 30 s is not started (the step INCOMPLETE, never a pass). --match REGEX runs
only the jobs whose name it finds (re.search), so that a long step can be split over device calls. The op lists come from `fuseproof ops --json`: the plan names contracts and scopes, never ops. Everything a
run writes is under OUT/runner/<step>/ (one log and status per job, runner.log, steps.json), packed into
OUT/runner.tar.gz at the end and removed (a device call brings back few files; --keep keeps it). An archive larger
than --part-mib is split into OUT/runner.tar.gz.part-aa, -ab, ... (a device call brings back files of 16 MiB at
most): `cat runner.tar.gz.part-* | tar xz` reads them back.

--dry-run prints each job's command line and environment instead of running it (the ops still come from
`fuseproof ops --json`, of --fuseproof or the build tree); CI runs it over the whole plan.

Exit: 0 every step ran and every job passed; 1 a job failed; 2 bad usage, a bad plan or a fatal step (the build)
failed; 3 a step could not start within the budget or needed something missing (INCOMPLETE, never a pass).
"""
import argparse
import concurrent.futures
import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import time

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    tomllib = None

MIN_JOB_SECONDS = 30  # a job that would get less is not started

STEP_KEYS = {"about", "run", "env", "each", "contract", "ops", "matrix", "scope", "ok", "then", "jobs", "min_seconds",
             "timeout", "fatal", "skip_missing"}


class PlanError(Exception):
    """The plan or the command line is wrong (exit 2)."""


def load_plan(path):
    if tomllib is None:
        raise PlanError("gpu_runner: Python 3.11 or newer is needed to read %s (tomllib)" % path)
    try:
        with open(path, "rb") as f:
            plan = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise PlanError("gpu_runner: --plan %s: %s" % (path, e))
    steps = plan.get("step", {})
    for name, step in steps.items():
        unknown = set(step) - STEP_KEYS
        if unknown:
            raise PlanError("gpu_runner: step %s: unknown keys %s (known: %s)" % (name, ", ".join(sorted(unknown)),
                                                                                ", ".join(sorted(STEP_KEYS))))
        if not isinstance(step.get("run"), list) or not step["run"]:
            raise PlanError("gpu_runner: step %s: run must be a non-empty list of strings" % name)
        if step.get("each", "op") not in ("op", "quant_op"):
            raise PlanError("gpu_runner: step %s: each must be \"op\" or \"quant_op\", got %r" % (name, step["each"]))
    return plan


def ops_from_spec(fuseproof):
    """{"op": [(op, [contracts])], "quant_op": [...]} from `fuseproof ops --json`: the op spec is the only list of ops
    (the elementwise ops under "ops", the quantization ops under "quant_ops")."""
    try:
        text = subprocess.run([fuseproof, "ops", "--json"], check=True, capture_output=True, text=True).stdout
        spec = json.loads(text)
        return {kind: [(o["name"], [c["name"] for c in o["contracts"]]) for o in spec[key]]
                for kind, key in (("op", "ops"), ("quant_op", "quant_ops"))}
    except (OSError, subprocess.CalledProcessError, ValueError, KeyError) as e:
        raise PlanError("gpu_runner: cannot read the op list from %s ops --json: %s" % (fuseproof, e))


def fill(text, values):
    try:
        return text.format(**values)
    except KeyError as e:
        raise PlanError("gpu_runner: %r names {%s}, which this job does not have" % (text, e.args[0]))


def expand(name, step, ops, base):
    """The jobs of a step: [(job name, values)]."""
    if "each" not in step:
        return [(name, dict(base, name=name))]
    wanted = step.get("ops")
    matrix = dict(step.get("matrix", {}))
    contracts = matrix.pop("contract", [step["contract"]] if "contract" in step else [None])
    keys = list(matrix)  # the plan's order: it names the jobs
    jobs = []
    for op, declared in ops:
        if wanted and op not in wanted:
            continue
        for contract in (declared if contracts == ["*"] else contracts):
            if contract is not None and contract not in declared:
                continue
            for combo in itertools.product(*(matrix[k] for k in keys)):
                v = dict(base, op=op, contract=contract or "", scope=step.get("scope", "default"))
                v.update(zip(keys, combo))
                parts = [op] + ([contract] if contract else []) + [str(c) for c in combo]  # silu_and_mul.eager.triton.bf16
                v["name"] = ".".join(parts)
                jobs.append((v["name"], v))
    if wanted:
        missing = set(wanted) - {op for op, _ in ops}
        if missing:
            raise PlanError("gpu_runner: step %s: ops %s are not in the op spec" % (name, ", ".join(sorted(missing))))
    return jobs


class Runner:
    def __init__(self, args, plan):
        self.args, self.plan = args, plan
        self.start = time.monotonic()
        self.root = os.path.join(args.out, "runner")
        if not args.dry_run:
            os.makedirs(self.root, exist_ok=True)
        self.log = open(os.devnull if args.dry_run else os.path.join(self.root, "runner.log"), "a")
        self.results = []
        self._ops = None

    def say(self, line):
        print("gpu_runner: " + line, flush=True)
        self.log.write(line + "\n")
        self.log.flush()

    def left(self):
        return self.args.budget - (time.monotonic() - self.start)

    def ops(self):
        if self._ops is None:
            self._ops = ops_from_spec(self.args.fuseproof)
        return self._ops

    def run_job(self, step_name, step, job, values):
        out = values["out"]
        cmd = [fill(a, values) for a in step["run"]]
        env = {k: fill(v, values) for k, v in step.get("env", {}).items()}
        ok = step.get("ok", [0])
        missing = step.get("skip_missing")
        if missing and not self.args.dry_run and not os.path.exists(fill(missing, values)):
            return {"job": job, "status": "absent", "exit": None, "seconds": 0.0, "needs": fill(missing, values)}
        if not self.args.dry_run and self.left() - 10 < MIN_JOB_SECONDS:
            return {"job": job, "status": "not-started", "exit": None, "seconds": 0.0}
        if self.args.dry_run:
            envs = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in sorted(env.items()))
            print("+ [%s] %s%s" % (step_name, envs + " " if envs else "", shlex.join(cmd)), flush=True)
            return {"job": job, "status": "dry-run", "exit": None, "seconds": 0.0}
        limit = min(step.get("timeout", 600), self.left() - 10)
        t0 = time.monotonic()
        with open(os.path.join(out, job + ".log"), "w") as log:
            try:
                p = subprocess.run(cmd, env=dict(os.environ, **env), stdout=log, stderr=subprocess.STDOUT,
                                   timeout=max(1, limit), start_new_session=True)
                rc, status = p.returncode, ("pass" if p.returncode in ok else "fail")
            except subprocess.TimeoutExpired:
                rc, status = None, "timeout"
            except OSError as e:
                log.write("gpu_runner: cannot start %s: %s\n" % (cmd[0], e))
                rc, status = None, "fail"
        seconds = round(time.monotonic() - t0, 1)
        with open(os.path.join(out, job + ".status"), "w") as f:  # "exit seconds", for scripts/subjects_table.py
            f.write("%s %.0f\n" % (rc if rc is not None else "timeout", seconds))
        return {"job": job, "status": status, "exit": rc, "seconds": seconds}

    def run_step(self, name):
        step = self.plan["step"].get(name)
        if step is None:
            raise PlanError("gpu_runner: unknown step %s (%s)" % (name, ", ".join(self.plan["step"])))
        need = step.get("min_seconds", 0)
        if not self.args.dry_run and self.left() < need:
            self.say("%s: not started: %.0f s left, needs %d" % (name, self.left(), need))
            return {"step": name, "status": "not-started", "jobs": []}
        out = os.path.join(self.root, name)
        if not self.args.dry_run:
            os.makedirs(out, exist_ok=True)
        base = {"build": self.args.build, "out": out, "py": sys.executable, "fuseproof": self.args.fuseproof,
                "audit": os.path.join(self.args.build, "bin", "fuseproof-audit"), "commit": self.args.commit,
                "name": name}
        ops = self.ops()[step["each"]] if "each" in step else []
        jobs = expand(name, step, ops, base)
        if not jobs:
            raise PlanError("gpu_runner: step %s has no jobs (no op declares its contract)" % name)
        if self.args.match:
            jobs = [j for j in jobs if self.args.match.search(j[0])]
            if not jobs:
                self.say("%s: no job matches --match %s" % (name, self.args.match.pattern))
                return {"step": name, "status": "not-started", "jobs": []}
        t0 = time.monotonic()
        workers = 1 if self.args.dry_run else max(1, step.get("jobs", 1))  # a dry run prints in order
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
            done = list(pool.map(lambda j: self.run_job(name, step, j[0], j[1]), jobs))
        if "then" in step:
            done.append(self.run_job(name, dict(step, run=step["then"], ok=[0]), "then", dict(base, name="then")))
        bad = [d for d in done if d["status"] in ("fail", "timeout")]
        unstarted = [d for d in done if d["status"] == "not-started"]
        status = "dry-run" if self.args.dry_run else ("fail" if bad else "not-started" if unstarted else "pass")
        for d in done:
            if d["status"] not in ("pass", "dry-run"):
                self.say("%s %s: %s%s" % (name, d["job"], d["status"],
                                          " (exit %s)" % d["exit"] if d["exit"] is not None else ""))
        self.say("%s: %s, %d jobs in %.0f s" % (name, status, len(done), time.monotonic() - t0))
        return {"step": name, "status": status, "jobs": done, "fatal": step.get("fatal", False)}

    def run(self, groups):
        if not self.args.dry_run:
            try:
                gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,compute_cap,memory.total",
                                      "--format=csv,noheader"], capture_output=True, text=True, timeout=60).stdout
            except (OSError, subprocess.TimeoutExpired) as e:
                gpu = "no nvidia-smi (%s)" % e
            self.say("device: " + (gpu.strip() or "no nvidia-smi answer"))
        code = 0
        for group in groups:
            names = group.split("+")
            with concurrent.futures.ThreadPoolExecutor(max_workers=1 if self.args.dry_run else len(names)) as pool:
                results = list(pool.map(self.run_step, names))
            self.results.extend(results)
            for r in results:
                if r["status"] == "fail" and r.get("fatal"):
                    self.say("%s failed: the steps after it need it" % r["step"])
                    return 2
                if r["status"] == "fail":
                    code = max(code, 1)
                elif r["status"] == "not-started" and code == 0:
                    code = 3
        return code

    def finish(self, code):
        if self.args.dry_run:
            self.log.close()
            return
        with open(os.path.join(self.root, "steps.json"), "w") as f:
            json.dump({"exit": code, "seconds": round(time.monotonic() - self.start, 1), "steps": self.results}, f,
                      indent=1)
        self.log.close()
        if not self.args.dry_run:
            archive = os.path.join(self.args.out, "runner.tar.gz")
            with tarfile.open(archive, "w:gz") as t:
                t.add(self.root, arcname="runner")
            if not self.args.keep:  # a device call brings back at most 8 files: the archive, not the folder
                shutil.rmtree(self.root, ignore_errors=True)
            parts = split_archive(archive, int(self.args.part_mib * 2**20))
            print("gpu_runner: packed %s, exit %d" % (", ".join(parts), code), flush=True)


def split_archive(path, part_bytes):
    """Leaves `path` whole when it is at most part_bytes, else splits it into path.part-aa, -ab, ... (split(1)'s
    names, so that `cat path.part-* | tar xz` reads them back) and removes it. Returns the files' paths."""
    size = os.path.getsize(path)
    if size <= part_bytes:
        return [path]
    parts = []
    with open(path, "rb") as f:
        for i in range((size + part_bytes - 1) // part_bytes):
            name = "%s.part-%s%s" % (path, chr(ord("a") + i // 26), chr(ord("a") + i % 26))
            with open(name, "wb") as out:
                out.write(f.read(part_bytes))
            parts.append(name)
    os.remove(path)
    return parts


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("steps", nargs="*", help="steps (the plan's [step.NAME]); NAME+NAME runs side by side")
    p.add_argument("--plan", default=os.path.join(here, "gpu_plan.toml"))
    p.add_argument("--out", default=os.environ.get("OUT"), help="the folder that comes back (default $OUT)")
    p.add_argument("--build", default=os.environ.get("BUILD_DIR", "build-gpu"),
                   help="the build tree, relative to the repository root (default $BUILD_DIR or build-gpu)")
    p.add_argument("--fuseproof", help="the fuseproof binary for the op list (default BUILD/bin/fuseproof)")
    p.add_argument("--budget", type=float, default=float(os.environ.get("BUDGET", "570")),
                   help="seconds for the whole run (default $BUDGET or 570)")
    p.add_argument("--commit", default=os.environ.get("FUSEPROOF_GIT_COMMIT", ""), help="the commit, for e2e")
    p.add_argument("--match", help="run only the jobs whose name this regular expression finds (re.search)")
    p.add_argument("--dry-run", action="store_true", help="print each job's command instead of running it")
    p.add_argument("--list", action="store_true", help="list the plan's steps and exit")
    p.add_argument("--keep", action="store_true", help="keep OUT/runner/ beside its archive")
    p.add_argument("--part-mib", type=float, default=15.0,
                   help="split an archive larger than this many MiB into parts (default 15)")
    args = p.parse_args(argv)
    # Paths given are the caller's; the plan's (and --build's) are the repository root's.
    args.plan = os.path.abspath(args.plan)
    args.out = os.path.abspath(args.out) if args.out else None
    args.fuseproof = os.path.abspath(args.fuseproof) if args.fuseproof else None
    os.chdir(os.path.dirname(here))
    try:
        plan = load_plan(args.plan)
        if args.list:
            for name, step in plan["step"].items():
                print("%-14s %s" % (name, step.get("about", "")))
            return 0
        if not args.out:
            if not args.dry_run:
                raise PlanError("gpu_runner: --out or $OUT must name the folder that comes back")
            args.out = "OUT"  # a dry run writes nothing
        if not (args.budget > 0):
            raise PlanError("gpu_runner: --budget must be a positive number of seconds, got %s" % args.budget)
        if args.match is not None:
            try:
                args.match = re.compile(args.match)
            except re.error as e:
                raise PlanError("gpu_runner: --match %s: %s" % (args.match, e))
        if args.commit and not re.fullmatch(r"[0-9a-f]{40}", args.commit):
            raise PlanError("gpu_runner: --commit must be a 40-hex commit hash (e2e records it), got '%s'" % args.commit)
        args.fuseproof = args.fuseproof or os.path.join(args.build, "bin", "fuseproof")
        groups = args.steps or plan.get("run", {}).get("default", [])
        for g in groups:
            for n in g.split("+"):
                if n not in plan.get("step", {}):
                    raise PlanError("gpu_runner: unknown step %s (%s)" % (n, ", ".join(plan.get("step", {}))))
        runner = Runner(args, plan)
        code = 2
        try:
            code = runner.run(groups)
        finally:
            runner.finish(code)  # the archive, whatever happened
        return code
    except PlanError as e:
        print(str(e), file=sys.stderr)
        return 2
    except BrokenPipeError:
        sys.stderr.write("gpu_runner: standard output was closed\n")
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
