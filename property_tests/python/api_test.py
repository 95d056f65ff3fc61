"""api_test.py: fuseproof.audit() as a library: verdict objects, records, out-argument callables, refusals."""

import os
import sys
import tempfile
import unittest

import fuseproof
import cpu_subjects

# Small but not empty: every check class runs, in this process (the command-line tests cover isolation); the domain
# class covers all 65,536 x for at least 64 biases. The exact tanh model: the history class calls fp16 too, where
# glibc's tanhf (the emulated libm model) differs from cpu_subjects' binary64 tanh at one GELU input (0xB3FE).
QUICK = dict(domain_biases=64, max_width=256, property_cases=20, isolate=False, math_model="exact")


class Python_Audit_bf16(unittest.TestCase):
    def test_CorrectCallablePasses_VerdictObject(self):
        v = fuseproof.audit(cpu_subjects.correct, dtype="bf16", device="cpu", **dict(QUICK, isolate=True))
        self.assertTrue(v, v.summary())
        self.assertEqual(v.status, 0)
        self.assertEqual(v.mismatches, 0)
        domain = [c for c in v.checks if c["class"] == "domain"][0]
        # 64 biases at least: the stratified subset adds every extreme pattern and one per binade and sign.
        self.assertGreaterEqual(domain["cases"], 64 * 65536)
        self.assertEqual(domain["cases"] % 65536, 0)

    def test_OutArgumentCallablePasses(self):
        v = fuseproof.audit(cpu_subjects.correct_out, dtype="bf16", device="cpu", **QUICK)
        self.assertTrue(v, v.summary())

    def test_UnroundedCallableFails_WithRecords(self):
        # The negative control of the test above: one rounding left out is found, with TestFloat-style lines.
        v = fuseproof.audit(cpu_subjects.unrounded, dtype="bf16", device="cpu", **QUICK)
        self.assertFalse(v)
        self.assertEqual(v.status, 1)
        self.assertGreater(v.mismatches, 0)
        self.assertTrue(any(r.startswith("bias_gelu_tanh bf16 [") and " expected " in r for r in v.records()),
                        v.records()[:3])

    def test_LambdaRunsInProcess(self):
        v = fuseproof.audit(lambda x, b: cpu_subjects.correct(x, b), dtype="bf16", device="cpu", only="extreme")
        self.assertTrue(v, v.summary())

    def test_InputWriterFails(self):
        v = fuseproof.audit(cpu_subjects.writes_input, dtype="bf16", device="cpu", only="property", property_cases=5,
                            isolate=False)
        self.assertFalse(v)
        self.assertTrue(any("modified its input x (or its guards)" in r for r in v.records()), v.records()[:3])

    def test_GuardWriteFails(self):
        # The negative control of the guards: a write just past out is found in the host image.
        v = fuseproof.audit(cpu_subjects.writes_past_out, dtype="bf16", device="cpu", only="extreme", isolate=False)
        self.assertFalse(v)
        self.assertTrue(any("wrote 16 guard bytes outside out" in r for r in v.records()), v.records()[:3])

    def test_WrongShapeFails(self):
        v = fuseproof.audit(cpu_subjects.wrong_shape, dtype="bf16", device="cpu", only="extreme", isolate=False)
        self.assertFalse(v)
        self.assertTrue(any("subject returned a tensor of [" in r for r in v.records()), v.records()[:3])

    def test_ReportsWritten(self):
        with tempfile.TemporaryDirectory() as d:
            md, js = os.path.join(d, "r.md"), os.path.join(d, "r.json")
            v = fuseproof.audit(cpu_subjects.unrounded, dtype="bf16", device="cpu", report=md, json=js, only="extreme",
                                isolate=False)
            self.assertFalse(v)
            with open(md) as f:
                self.assertIn("**Verdict: FAIL**", f.read())
            with open(js) as f:
                self.assertIn('"verdict": "fail"', f.read())

    def test_JunitAndGithubReportsWritten(self):
        import xml.etree.ElementTree as ET
        with tempfile.TemporaryDirectory() as d:
            md, xml = os.path.join(d, "r.md"), os.path.join(d, "r.xml")
            v = fuseproof.audit(cpu_subjects.unrounded, dtype="bf16", device="cpu", report=md, junit=xml,
                                report_format="github", only="extreme", isolate=False)
            self.assertFalse(v)
            cases = ET.parse(xml).getroot().findall("testsuite/testcase")
            self.assertEqual([c.get("name") for c in cases], ["%s[%s]" % (c["class"], c["dtype"]) for c in v.checks])
            failed = [c for c in cases if c.find("failure") is not None]
            self.assertTrue(failed and "expected 0x" in failed[0].find("failure").text)
            with open(md) as f:
                self.assertIn("**fuseproof audit: FAIL**", f.readline())

    def test_BadArgumentsRefused(self):
        for kwargs, text in ((dict(dtype="fp8"), "dtype must be bf16, fp16 or all, got fp8"),
                             (dict(device="mps"), "device must be cpu or cuda, got mps"),
                             (dict(seeed=3), "unknown option seeed"),
                             (dict(only="everything"), "unknown --only everything")):
            with self.assertRaises(ValueError) as e:
                fuseproof.audit(cpu_subjects.correct, **dict(dict(device="cpu"), **kwargs))
            self.assertIn(text, str(e.exception))
            self.assertNotIn("\n", str(e.exception))


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"] + sys.argv[1:])
