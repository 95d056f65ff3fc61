#!/usr/bin/env python3
"""check_cuda_mutants.py MUTATION_JSON: every CUDA mutant of a `fuseproof audit --mutants` run killed by the class it
must be killed by (bias_gelu_tanh's by the classes below, with the fault text for the fault mutants; every family
mutant, named "<op> <bug>", by extreme unless FAMILY_EXPECTED names its bug), and none missing. Used by the GPU runner's
mutants step (scripts/gpu_plan.toml).
With --subset, only the mutants in the run are judged (none is missing). Exit 0 when all are as expected; 1 otherwise (each line says ok or BAD)."""

import json
import os
import re
import sys

# The quantization mutants (kernels/mutants/quant_bugs.h) share lib/mutants/cuda: here each must only be killed; the
# class that must kill it is checked on its own by check_quant_mutants.py (the GPU runner's quant_mutants step).
_QUANT_ROW = re.compile(r'X\(k[A-Za-z0-9]+, "([a-z0-9_]+)", [0-9]+, "[a-z0-9-]+", "[a-z]+",')
QUANT_BUGS = set(_QUANT_ROW.findall(open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernels",
                                                      "mutants", "quant_bugs.h")).read())) - {"control"}

# bias_gelu_tanh's mutants: (class, text the fault must contain, or None)
EXPECTED = {
    "gelu_unrounded_sum": ("extreme", None), "add_truncates": ("extreme", None), "fast_tanh": ("extreme", None),
    "gelu_erf": ("extreme", None), "bias_off_by_one": ("extreme", None), "bias_by_row": ("extreme", None),
    "skip_last_vector": ("extreme", None), "tail_overread": ("rejection", None), "nan_pattern": ("extreme", None),
    "zero_sign_lost": ("extreme", None), "fp16_subnormal_ftz": ("extreme", None),
    "no_width_rejection": ("rejection", None), "no_alignment_check": ("rejection", None),
    "pdl_wait_removed": ("pdl", None), "bias_cache_8192": ("widths", None),
    "rows_over_65535_skipped": ("shapes", None), "int32_index": ("shapes", None),
    "hang_on_empty": ("rejection", "hang: the call did not return"),
    "misaligned_vector_load": ("extreme", "misaligned address"),
    "illegal_address": ("widths", "illegal memory access"),
}

# The family's bugs that pass every single-dtype class of every shape the older classes call (family_bugs.h).
# The 3-input ops' (gated_residual, modulate): fma_in_eager and negzero_lost die at the extreme triples (the default);
# an unrounded 1 + scale at no extreme triple but at modulate's stage 2; the wrong group's row only in a call of several
# groups of several rows (property). gate_y_swapped is still exact and built as a control (lib/plugins/), not here.
FAMILY_EXPECTED = {"first_dtype_table": ("history", None), "row_count_path": ("batch", None),
                   "static_workspace": ("streams", None), "per_call_malloc": ("graph", None),
                   "first_call_vector": ("history", None), "one_plus_scale_unrounded": ("extreme", None),
                   "wrong_group_row": ("property", None)}


def main(path, need_family, subset=False):
    run = json.load(open(path))
    expected = {} if subset else dict(EXPECTED)
    bad = family = 0
    for o in run["mutants"]:
        name = o["kernel"].replace("mutant cuda ", "")
        is_family = " " in name
        if is_family and name.split(" ")[-1] in QUANT_BUGS:
            ok = o["status"] == "killed"
            print(f"  {'ok ' if ok else 'BAD'} {name:36s} {o['status']:8s} {o['killed_by']:10s} (quantization: any class)")
            bad += not ok
            continue
        want = FAMILY_EXPECTED.get(name.split(" ")[-1], ("extreme", None)) if is_family else expected.pop(name, None)
        family += is_family
        ok = want is not None and o["status"] == "killed" and o["killed_by"] == want[0] and \
            (want[1] is None or want[1] in o.get("fault", ""))
        print(f"  {'ok ' if ok else 'BAD'} {name:36s} {o['status']:8s} {o['killed_by']:10s} "
              f"{o.get('first_record', '')[:120]}")
        bad += not ok
    for name in sorted(expected):
        print(f"  BAD {name}: not in the run")
        bad += 1
    print(f"  {len(run['mutants'])} CUDA mutants, {family} of the family; {bad} not as expected")
    return 1 if bad or (need_family and family == 0) else 0


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3) or sys.argv[2:] not in ([], ["--family"], ["--subset"]):
        sys.exit("usage: check_cuda_mutants.py MUTATION_JSON [--family | --subset (the run's mutants only)]")
    sys.exit(main(sys.argv[1], sys.argv[2:] == ["--family"], sys.argv[2:] == ["--subset"]))
