#!/usr/bin/env python3
"""nightly_gpu_test.py: the GPU nightly without a GPU: .github/workflows/nightly-gpu.yml parses (python3-yaml), runs
on self-hosted GPU runners per architecture and runs every step through scripts/nightly_gpu.sh; the script's
--dry-run plan for sm_90 and sm_100 names the build for that architecture, the GPU tests, the audit with --junit and
--report, scripts/nightly_e2e.sh, the golden data of that architecture (present for sm_90, absent for sm_100) and
what exit 3 prints; it runs nothing and refuses a malformed architecture (exit 2).
"""
import os
import subprocess
import sys
import tempfile
import unittest

import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "nightly_gpu.sh")
WORKFLOW = os.path.join(ROOT, ".github", "workflows", "nightly-gpu.yml")
STEPS = ("build", "test", "audit", "e2e", "verdict")


def plan(*args, out=None):
    argv = [SCRIPT, "--dry-run"] + (["--out", out] if out else []) + list(args)
    p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout, p.stderr


class Nightly_GpuWorkflow(unittest.TestCase):
    def setUp(self):
        with open(WORKFLOW) as f:
            self.wf = yaml.safe_load(f)
        self.job = self.wf["jobs"]["nightly"]

    def test_TriggersAndArchitectureInput(self):
        on = self.wf.get("on", self.wf.get(True))  # YAML 1.1 reads the bare key `on` as true
        self.assertIn("schedule", on)
        self.assertIn("arch", on["workflow_dispatch"]["inputs"])
        self.assertIn("sm_90", self.job["strategy"]["matrix"]["arch"])
        self.assertIn("sm_100", self.job["strategy"]["matrix"]["arch"])
        self.assertEqual(self.job["env"]["ARCH"], "${{ matrix.arch }}")

    def test_SelfHostedGpuRunnerOfTheArchitecture(self):
        runs_on = self.job["runs-on"]
        self.assertEqual(runs_on[:2], ["self-hosted", "gpu"])
        self.assertIn("${{ matrix.arch }}", runs_on)

    def test_EveryStepIsAStepOfTheScript(self):
        runs = [s.get("run", "") for s in self.job["steps"]]
        for step in STEPS:
            self.assertTrue(any("scripts/nightly_gpu.sh --step %s " % step in r for r in runs), step)
        for r in runs:
            if r:
                self.assertIn("scripts/nightly_gpu.sh", r, "a step that is not the script's: %r" % r)

    def test_VerdictReportsIncompleteAndUploadsAlways(self):
        steps = {s.get("name", s.get("uses")): s for s in self.job["steps"]}
        verdict = steps["Verdict"]
        self.assertEqual(verdict["if"], "always()")
        self.assertIn('"$rc" -eq 3', verdict["run"])
        self.assertIn("no golden data for this architecture", verdict["run"])
        self.assertIn('exit "$rc"', verdict["run"])  # exit 1 (and 2, 4) fail the job
        upload = [s for s in self.job["steps"] if s.get("uses", "").startswith("actions/upload-artifact")]
        self.assertEqual(len(upload), 1)
        self.assertEqual(upload[0]["if"], "always()")
        for f in ("*.xml", "*.md", "e2e/*.xml", "e2e-export/"):
            self.assertIn(f, upload[0]["with"]["path"])


class Nightly_GpuDryRun(unittest.TestCase):
    def check_plan(self, arch, cc, golden_present):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out")
            rc, text, err = plan(arch, out=out)
            self.assertEqual(rc, 0, err)
            self.assertFalse(os.path.exists(out), "a dry run must create nothing")
        commands = [l[2:] for l in text.splitlines() if l.startswith("+ ")]
        self.assertEqual(len(commands), 5, text)  # device check, build, tests, audit, e2e
        self.assertIn("ARCHS=%s " % cc, commands[1])
        self.assertIn("scripts/gpu_run.sh build", commands[1])
        self.assertIn("-DFUSEPROOF_CUDA_ARCHITECTURES=%s (CMAKE_CUDA_ARCHITECTURES)" % cc, text)
        self.assertIn("scripts/gpu_run.sh test", commands[2])
        audit = commands[3]
        for part in ("bin/fuseproof audit", "--backend cuda", "--arch %s" % arch, "--junit %s/audit.xml" % out,
                     "--report %s/audit_summary.md --report-format github" % out, "--json %s/audit.json" % out):
            self.assertIn(part, audit)
        self.assertIn("scripts/nightly_e2e.sh --skip-build --build-dir build-gpu --out %s/e2e" % out, commands[4])
        state = "present" if golden_present else "absent"
        self.assertIn("# golden data: golden/%s %s, golden/e2e/%s.json %s" % (arch, state, arch, state), text)
        self.assertIn("on exit 3 (INCOMPLETE)", text)
        self.assertIn("no golden data for this architecture (%s)" % arch, text)
        self.assertIn("python3 scripts/capture_golden.py --out golden", text)
        self.assertIn("scripts/bless_e2e.sh --run-dir DIR --arch %s" % arch, text)
        return text, commands

    def test_Sm90PlanJudgesAgainstItsGoldenData(self):
        text, commands = self.check_plan("sm_90", "90", True)
        self.assertNotIn("--export", commands[4])
        # The op family's, the Wan e2e, the DiT e2e and the NVFP4 fc_out e2e golden data are all there (blessed on the
        # GPU, docs/E2E.md, Golden outputs and the nightly): no step of the plan exits 3.
        self.assertNotIn("golden/sm_90 is absent", text)
        self.assertTrue(os.path.exists(os.path.join(ROOT, "golden", "e2e", "sm_90_default-dit.json")))
        self.assertTrue(os.path.exists(os.path.join(ROOT, "golden", "e2e", "sm_90_default-fc-out-nvfp4.json")))
        self.assertEqual([l for l in text.splitlines() if "will exit 3" in l], [])

    def test_Sm100PlanSaysTheGoldenDataIsMissing(self):
        text, commands = self.check_plan("sm_100", "100", False)
        self.assertIn("golden/sm_100 is absent: the audit will exit 3", text)
        self.assertIn("golden/e2e/sm_100.json is absent: the e2e check will exit 3", text)
        self.assertIn("--export", commands[4])  # the frames bless_e2e.sh needs

    def test_MalformedArchitectureRefused(self):
        for bad in ("sm_9x", "90", "sm_"):
            rc, text, err = plan(bad)
            self.assertEqual(rc, 2, bad)
            self.assertIn("ARCH must look like sm_90", err)
        rc, _, err = plan("--step", "deploy", "sm_90")
        self.assertEqual(rc, 2)

    def verdict(self, statuses):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "status"))
            for step, st in statuses.items():
                with open(os.path.join(d, "status", step), "w") as f:
                    f.write("%d\n" % st)
            p = subprocess.run([SCRIPT, "--step", "verdict", "--out", d, "sm_100"], capture_output=True, text=True,
                               timeout=60)
            with open(os.path.join(d, "summary.md")) as f:
                return p.returncode, f.read(), p.stderr

    def test_VerdictRanksTheStepsStatuses(self):
        rc, summary, err = self.verdict(dict(build=0, test=0, audit=3, e2e=3))
        self.assertEqual(rc, 3)
        self.assertIn("**INCOMPLETE**: no golden data for this architecture (sm_100)", summary)
        self.assertIn("scripts/capture_golden.py --out golden", err)
        self.assertEqual(self.verdict(dict(build=0, test=0, audit=1, e2e=3))[0], 1)  # a defect outranks missing data
        self.assertEqual(self.verdict(dict(build=0, test=1, audit=0, e2e=0))[0], 1)
        self.assertEqual(self.verdict(dict(build=0, test=0, audit=4, e2e=1))[0], 4)
        self.assertEqual(self.verdict(dict(build=2))[0], 2)  # the steps after a failed build did not run
        rc, summary, _ = self.verdict(dict(build=0, test=0, audit=0, e2e=0))
        self.assertEqual(rc, 0)
        self.assertIn("**PASS**", summary)

    def test_NegativeControl_ThePlanCheckCanFail(self):
        # sm_100 has no golden data in this tree: judged as if it had, the plan check must fail.
        with self.assertRaises(AssertionError):
            self.check_plan("sm_100", "100", True)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
