"""Tests of scripts/capture_golden.py's amendments for the multi-input ops (--add-records, --add-stages) as a CPU dry
run: the records are fuseproof eval's format with eager's outputs, the stage digests hash the pairs in canonical order
(checked against the pairs built one by one), the amendments are recorded, and golden/ is refused."""

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile

import numpy as np
import pytest
import torch

from fuseproof._environment import extension
from fuseproof.composition import composition_fn, find_contract, find_op

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
CAPTURE = os.path.join(ROOT, "scripts", "capture_golden.py")
SPEC = json.loads(extension().op_spec())
DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}


@pytest.fixture
def capture(tmp_path):
    """A copy of golden/sm_90's digests (without stage digests) and provenance under tmp/sm_90, the spec in
    tmp/ops.json."""
    d = tmp_path / "sm_90"
    d.mkdir()
    shutil.copy(os.path.join(ROOT, "golden", "sm_90", "provenance.json"), d / "provenance.json")
    # golden/sm_90 holds the H200's stage digests (docs/OPS.md, Stages); --add-stages only adds what is missing, so the
    # copy leaves them out for the dry run to add its own.
    digests = json.loads(open(os.path.join(ROOT, "golden", "sm_90", "digests.json")).read())
    digests = {k: v for k, v in digests.items() if ".stage" not in k and k not in ("stage_pairs", "stage_order")}
    (d / "digests.json").write_text(json.dumps(digests, indent=1))
    (tmp_path / "ops.json").write_text(json.dumps(SPEC))
    return tmp_path


def run(capture, *args):
    return subprocess.run([sys.executable, CAPTURE, "--out", str(capture), "--spec", str(capture / "ops.json"),
                           "--device", "cpu"] + list(args), capture_output=True, text=True)


def patterns(raw):
    return torch.from_numpy(np.frombuffer(raw, dtype="<u2").astype(np.int16))


def test_records_are_eager_outputs_in_eval_format(capture):
    r = run(capture, "--add-records", "--records", "512")
    assert r.returncode == 0, r.stderr
    with tarfile.open(capture / "sm_90" / "records.tar.xz", "r:xz") as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
    assert sorted(members) == sorted("%s_%s_%s.bin" % (op, d, io_) for op in ("gated_residual", "modulate")
                                     for d in DTYPES for io_ in ("in", "out"))
    for op in ("gated_residual", "modulate"):
        fn = composition_fn(find_contract(find_op(SPEC, op), "eager"))
        for d, t in DTYPES.items():
            ins = patterns(members["%s_%s_in.bin" % (op, d)]).view(t).reshape(-1, 3)
            out = patterns(members["%s_%s_out.bin" % (op, d)]).view(t)
            assert ins.shape[0] == 38 ** 3 + 512 == out.shape[0]
            assert torch.equal(fn(ins[:, 0], ins[:, 1], ins[:, 2]).view(torch.int16), out.view(torch.int16))
            # The negative control: another op's outputs are not these.
            other = composition_fn(find_contract(find_op(SPEC, "modulate" if op == "gated_residual" else
                                                         "gated_residual"), "eager"))
            assert not torch.equal(other(ins[:, 0], ins[:, 1], ins[:, 2]).view(torch.int16), out.view(torch.int16))
    prov = json.loads((capture / "sm_90" / "provenance.json").read_text())
    assert prov["amendments"][-1]["what"].startswith("--add-records: records.tar.xz members gated_residual_bf16")
    assert prov["files"]["records.tar.xz"] == hashlib.sha256(
        (capture / "sm_90" / "records.tar.xz").read_bytes()).hexdigest()
    again = run(capture, "--add-records", "--records", "512")
    assert again.returncode == 0 and "nothing to add" in again.stdout


def write_stage(folder, k, a, b, b_depends, a_depends):
    """A stage in `fuseproof stages`' format: stage<k>.json, stage<k>_a.bin, stage<k>_b.bin (records of 3 inputs)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ("stage%d.json" % k)).write_text(json.dumps({"a_depends": a_depends, "b_depends": b_depends,
                                                           "pairs": len(a) * len(b)}))
    np.array(a, dtype="<u2").tofile(folder / ("stage%d_a.bin" % k))
    np.array(b, dtype="<u2").tofile(folder / ("stage%d_b.bin" % k))


def synthetic_stages(root, rng):
    """Small stages of both ops (the shapes of the design's: a neutral input, values reached through witnesses)."""
    for d in DTYPES:
        v = lambda n: rng.integers(0, 65536, size=n).tolist()  # noqa: E731
        g = root / "gated_residual" / d
        write_stage(g, 0, [(0x8000, x, 0) for x in v(37)], [(0, 0, y) for y in v(29)], 0b100, 0b010)
        write_stage(g, 1, [(x, 0, 0) for x in v(41)], [(0, p, 0x3F80 if d == "bf16" else 0x3C00) for p in v(23)],
                    0b110, 0b001)
        m = root / "modulate" / d
        write_stage(m, 0, [(0x3F80 if d == "bf16" else 0x3C00, 0, 0x8000)], [(0, s, 0) for s in v(50)], 0b010, 0)
        write_stage(m, 1, [(x, 0, 0x8000) for x in v(31)], [(0, s, 0) for s in v(19)], 0b010, 0b001)
        write_stage(m, 2, [(x, 0, 0) for x in v(17)], [(0, 0, s) for s in v(43)], 0b100, 0b001)


def pairwise_digest(op, d, folder, k, max_pairs=None, tree=False):
    """The stage's digest with every pair's inputs built one by one (b outer, a inner); with `tree`, its tree digest
    instead (a hex SHA-256 per b row of len(a) outputs, then the SHA-256 of those in b order)."""
    meta = json.loads((folder / ("stage%d.json" % k)).read_text())
    a = np.fromfile(folder / ("stage%d_a.bin" % k), dtype="<u2").reshape(-1, 3)
    b = np.fromfile(folder / ("stage%d_b.bin" % k), dtype="<u2").reshape(-1, 3)
    rows = []
    for ib in range(len(b)):
        for ia in range(len(a)):
            rec = list(a[ia])
            for i in range(3):
                if meta["b_depends"] >> i & 1:
                    rec[i] = b[ib][i]
            rows.append(rec)
    rows = rows[:max_pairs] if max_pairs else rows
    t = torch.tensor(np.array(rows, dtype=np.uint16).astype(np.int16)).view(DTYPES[d])
    out = composition_fn(find_contract(find_op(SPEC, op), "eager"))(t[:, 0], t[:, 1], t[:, 2])
    raw = out.view(torch.int16).numpy().astype("<u2").tobytes()
    if tree:
        row = 2 * len(a)
        rows_hex = "".join(hashlib.sha256(raw[i:i + row]).hexdigest() for i in range(0, len(raw), row))
        return hashlib.sha256(rows_hex.encode()).hexdigest(), len(rows)
    return hashlib.sha256(raw).hexdigest(), len(rows)


@pytest.mark.parametrize("max_pairs", [None, 100])
def test_stage_digests_hash_the_pairs_in_canonical_order(capture, tmp_path, max_pairs):
    stages = tmp_path / "stages"
    synthetic_stages(stages, np.random.Generator(np.random.PCG64(7)))
    extra = [] if max_pairs is None else ["--max-pairs", str(max_pairs)]
    r = run(capture, "--add-stages", "--stages-dir", str(stages), "--jobs", "2", *extra)
    assert r.returncode == 0, r.stderr
    digests = json.loads((capture / "sm_90" / "digests.json").read_text())
    suffix = "" if max_pairs is None else ".first%d" % max_pairs
    n = 0
    for op, ks in (("gated_residual", 2), ("modulate", 3)):
        for k in range(ks):
            for d in DTYPES:
                want, pairs = pairwise_digest(op, d, stages / op / d, k, max_pairs)
                key = "%s.stage%d%s" % (op, k, suffix)
                assert digests[key][d] == want, (key, d)
                assert digests["stage_pairs"]["%s.%s" % (key, d)] == pairs
                if max_pairs is None:  # a whole stage has its tree too; a dry run's first pairs do not
                    assert digests[key + "_tree"][d] == pairwise_digest(op, d, stages / op / d, k, tree=True)[0]
                    assert digests[key + "_tree"][d] != want
                else:
                    assert key + "_tree" not in digests
                n += 1
    assert n == 10
    # The negative control: the a-outer order gives another digest (gated_residual stage 1, bf16).
    g = stages / "gated_residual" / "bf16"
    a, b = (np.fromfile(g / ("stage1_%s.bin" % s), dtype="<u2").reshape(-1, 3) for s in "ab")
    np.array(b, dtype="<u2").tofile(g / "stage1_a.bin")
    np.array(a, dtype="<u2").tofile(g / "stage1_b.bin")
    assert pairwise_digest("gated_residual", "bf16", g, 1, max_pairs)[0] != \
        digests["gated_residual.stage1" + suffix]["bf16"]
    prov = json.loads((capture / "sm_90" / "provenance.json").read_text())
    assert prov["amendments"][-1]["what"].startswith("--add-stages: digests.json keys gated_residual.stage0")
    assert prov["amendments"][-1]["gpu"].startswith("none (CPU dry run")


def test_cpu_dry_run_refuses_golden_and_add_ops(capture):
    r = subprocess.run([sys.executable, CAPTURE, "--out", os.path.join(ROOT, "golden"), "--device", "cpu",
                        "--add-records", "--spec", str(capture / "ops.json")], capture_output=True, text=True)
    assert r.returncode == 2 and "never writes into" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = run(capture, "--add-ops")
    assert r.returncode == 2 and "dry run of --add-records and --add-stages only" in r.stderr


def test_missing_stage_files_refused(capture, tmp_path):
    r = run(capture, "--add-stages", "--stages-dir", str(tmp_path / "none"))
    assert r.returncode == 2 and "no stage files for gated_residual bf16" in r.stderr


def fuseproof_with_stages():
    """The fuseproof binary (FUSEPROOF_BIN) when it has the stages command, else None."""
    exe = os.environ.get("FUSEPROOF_BIN", "")
    if not exe or not os.path.exists(exe):
        return None
    r = subprocess.run([exe, "stages", "--help"], capture_output=True, text=True)
    return exe if r.returncode == 0 else None


def test_real_stages_compose_to_the_reference(capture, tmp_path):
    """`fuseproof stages`' files as the capture composes them: eager torch on the CPU over the first pairs of every stage
    equals `fuseproof eval` on the same composed records (NaN encodings aside: the CPU's are not CUDA's), and the
    capture's --max-pairs digest is the SHA-256 of those eager outputs."""
    exe = fuseproof_with_stages()
    if exe is None:
        pytest.skip("no fuseproof binary with the stages command (FUSEPROOF_BIN)")
    n = 1 << 14
    stages = tmp_path / "stages"
    ops = ("gated_residual", "modulate")
    for op in ops:
        for d in DTYPES:
            r = subprocess.run([exe, "stages", "--op", op, "--dtype", d, "--out", str(stages / op / d)],
                               capture_output=True, text=True)
            assert r.returncode == 0, r.stderr
    r = run(capture, "--add-stages", "--stages-dir", str(stages), "--max-pairs", str(n), "--jobs", "2")
    assert r.returncode == 0, r.stderr
    digests = json.loads((capture / "sm_90" / "digests.json").read_text())
    checked = 0
    for op in ops:
        fn = composition_fn(find_contract(find_op(SPEC, op), "eager"))
        for d, t in DTYPES.items():
            k = 0
            while (stages / op / d / ("stage%d.json" % k)).exists():
                folder = stages / op / d
                meta = json.loads((folder / ("stage%d.json" % k)).read_text())
                a, b = (np.fromfile(folder / ("stage%d_%s.bin" % (k, s)), dtype="<u2").reshape(-1, 3) for s in "ab")
                ia, ib = np.arange(n) % len(a), np.arange(n) // len(a)
                keep = ib < len(b)
                recs = a[ia[keep]].copy()
                for i in range(3):
                    if meta["b_depends"] >> i & 1:
                        recs[:, i] = b[ib[keep], i]
                ins = torch.from_numpy(recs.astype(np.int16)).view(t)
                eager = fn(ins[:, 0], ins[:, 1], ins[:, 2]).view(torch.int16).numpy().astype("<u2")
                key = "%s.stage%d.first%d" % (op, k, n)
                assert digests[key][d] == hashlib.sha256(eager.tobytes()).hexdigest()
                rec_path, out_path = tmp_path / "recs.bin", tmp_path / "ref.bin"
                recs.astype("<u2").tofile(rec_path)
                e = subprocess.run([exe, "eval", "--op", op, "--dtype", d, "--in", str(rec_path), "--out",
                                    str(out_path)], capture_output=True, text=True)
                assert e.returncode == 0, e.stderr
                ref = np.fromfile(out_path, dtype="<u2")

                def nan(v):
                    return torch.isnan(torch.from_numpy(v.astype(np.int16)).view(t).float()).numpy()

                differ = (ref != eager) & ~(nan(ref) & nan(eager))
                assert not differ.any(), (key, d, recs[differ][:4], ref[differ][:4], eager[differ][:4])
                checked += 1
                k += 1
    assert checked == 10  # gated_residual's 2 stages and modulate's 3, both dtypes


def test_add_stages_keeps_the_golden_stage_digests(tmp_path):
    """With golden/sm_90's stage digests present (the H200's), --add-stages adds nothing and changes none."""
    d = tmp_path / "sm_90"
    d.mkdir()
    for f in ("digests.json", "provenance.json"):
        shutil.copy(os.path.join(ROOT, "golden", "sm_90", f), d / f)
    (tmp_path / "ops.json").write_text(json.dumps(SPEC))
    before = (d / "digests.json").read_bytes()
    stages = tmp_path / "stages"
    synthetic_stages(stages, np.random.Generator(np.random.PCG64(7)))
    r = run(tmp_path, "--add-stages", "--stages-dir", str(stages), "--jobs", "2")
    assert r.returncode == 0 and "nothing to add" in r.stdout, r.stderr
    assert (d / "digests.json").read_bytes() == before
    # A flat digest missing beside its tree: the dry run's tree disagrees with golden's, which is refused, nothing
    # written.
    digests = json.loads(before)
    golden = digests.pop("gated_residual.stage0")
    (d / "digests.json").write_text(json.dumps(digests))
    r = run(tmp_path, "--add-stages", "--stages-dir", str(stages), "--jobs", "2")
    assert r.returncode == 1 and "two captures disagree" in r.stderr, r.stderr
    assert "gated_residual.stage0" not in json.loads((d / "digests.json").read_text())
    # The negative control: without both, the dry run adds them, and its digest is not the H200's.
    digests.pop("gated_residual.stage0_tree")
    (d / "digests.json").write_text(json.dumps(digests))
    r = run(tmp_path, "--add-stages", "--stages-dir", str(stages), "--jobs", "2")
    assert r.returncode == 0, r.stderr
    added = json.loads((d / "digests.json").read_text())["gated_residual.stage0"]
    assert added != golden and added["bf16"] == pairwise_digest("gated_residual", "bf16",
                                                                stages / "gated_residual" / "bf16", 0)[0]


FAKE_STAGES = """#!{python}
# A stand-in for `fuseproof stages --digests`: stage<k>.json with reference_digests from {table}.
import json, os, sys
args = dict(zip(sys.argv[2::2], sys.argv[3::2]))
table = json.load(open({table!r}))
os.makedirs(args["--out"], exist_ok=True)
for k, (flat, tree) in enumerate(table[args["--op"]][args["--dtype"]]):
    with open(os.path.join(args["--out"], "stage%d.json" % k), "w") as f:
        json.dump({{"reference_digests": {{"sha256": flat, "tree": tree}}}}, f)
"""


def test_derive_stage_trees_only_where_the_reference_equals_the_capture(tmp_path):
    """--derive-stage-trees takes the reference's tree of a stage only where its flat SHA-256 is the captured one, and
    records the amendment as derived, with no GPU; one flat digest that differs refuses the whole amendment."""
    d = tmp_path / "sm_90"
    d.mkdir()
    for f in ("digests.json", "provenance.json"):
        shutil.copy(os.path.join(ROOT, "golden", "sm_90", f), d / f)
    (tmp_path / "ops.json").write_text(json.dumps(SPEC))
    digests = json.loads((d / "digests.json").read_text())
    trees = {k: digests.pop(k) for k in list(digests) if ".stage" in k and k.endswith("_tree")}
    assert sorted(trees) == ["gated_residual.stage0_tree", "gated_residual.stage1_tree", "modulate.stage0_tree",
                             "modulate.stage1_tree", "modulate.stage2_tree"]
    (d / "digests.json").write_text(json.dumps(digests))
    table = {op: {dt: [[digests["%s.stage%d" % (op, k)][dt], trees["%s.stage%d_tree" % (op, k)][dt]]
                       for k in range(n)] for dt in DTYPES} for op, n in (("gated_residual", 2), ("modulate", 3))}
    table_path = tmp_path / "table.json"
    fake = tmp_path / "fake_fuseproof"
    fake.write_text(FAKE_STAGES.format(python=sys.executable, table=str(table_path)))
    fake.chmod(0o755)

    def derive():
        return subprocess.run([sys.executable, CAPTURE, "--out", str(tmp_path), "--spec", str(tmp_path / "ops.json"),
                               "--derive-stage-trees", "--fuseproof", str(fake)], capture_output=True, text=True)

    # The negative control first: the reference's flat digest of one stage is not the captured one.
    bad = json.loads(json.dumps(table))
    bad["modulate"]["fp16"][2][0] = "0" * 64
    table_path.write_text(json.dumps(bad))
    before = (d / "digests.json").read_bytes()
    r = derive()
    assert r.returncode == 1 and "modulate.stage2 fp16" in r.stderr and "differs from the captured" in r.stderr
    assert (d / "digests.json").read_bytes() == before
    table_path.write_text(json.dumps(table))
    r = derive()
    assert r.returncode == 0, r.stderr
    got = json.loads((d / "digests.json").read_text())
    for k, v in trees.items():
        assert got[k] == v
    prov = json.loads((d / "provenance.json").read_text())
    assert prov["files"]["digests.json"] == hashlib.sha256((d / "digests.json").read_bytes()).hexdigest()
    last = prov["amendments"][-1]
    assert last["what"].startswith("--derive-stage-trees: digests.json keys gated_residual.stage0_tree.bf16")
    assert last["gpu"] is None and "whose flat SHA-256 equals" in last["source"]
    assert "nothing to derive" in derive().stdout


def test_stage_trees_strip_and_compare(tmp_path):
    """scripts/stage_trees.py: strip leaves a golden copy the audit accepts (provenance updated) without the stage
    trees, and compare finds them missing there (exit 1: the negative control) and equal in golden itself."""
    tool = os.path.join(ROOT, "scripts", "stage_trees.py")
    src = os.path.join(ROOT, "golden", "sm_90")
    dst = tmp_path / "g" / "sm_90"
    r = subprocess.run([sys.executable, tool, "strip", src, str(dst)], capture_output=True, text=True)
    assert r.returncode == 0 and "5 stage tree entries left out" in r.stdout, r.stderr
    digests = json.loads((dst / "digests.json").read_text())
    assert not [k for k in digests if ".stage" in k and k.endswith("_tree")] and "gated_residual.stage0" in digests
    prov = json.loads((dst / "provenance.json").read_text())
    assert prov["files"]["digests.json"] == hashlib.sha256((dst / "digests.json").read_bytes()).hexdigest()
    r = subprocess.run([sys.executable, tool, "compare", src, str(dst)], capture_output=True, text=True)
    assert r.returncode == 1 and "gated_residual.stage0_tree bf16" in r.stderr
    r = subprocess.run([sys.executable, tool, "compare", src, src], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.count("in both") == 10
    r = subprocess.run([sys.executable, tool, "compare", str(dst), src], capture_output=True, text=True)
    assert r.returncode == 1 and "no stage tree entries" in r.stderr
    exe = fuseproof_with_stages()
    if exe is not None:  # the copy is golden data the audit reads (its provenance verifies)
        audit = os.path.join(os.path.dirname(exe), "fuseproof-audit")
        r = subprocess.run([audit, "audit", "--op", "modulate", "--dtype", "fp16", "--only", "stages", "--backend",
                            "emulated", "--no-reference", "--golden-dir", str(tmp_path / "g")],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stdout[-2000:] + r.stderr
