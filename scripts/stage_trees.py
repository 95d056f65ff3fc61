#!/usr/bin/env python3
"""stage_trees.py: golden copies for the stages class's digests (docs/AUDIT.md, stages).

  stage_trees.py strip SRC DST    copy golden arch folder SRC (digests.json, provenance.json and the rest) to DST
                                  without its "<key>.stage<k>_tree" entries, provenance updated: the flat path's
                                  golden (the stages class then hashes in order), or the input of a capture of trees
  stage_trees.py compare A B      every "<key>.stage<k>_tree" entry of A's digests.json equals B's (exit 1 naming the
                                  first that differs or is missing in B; exit 0 with a line per entry compared)
"""
import hashlib
import json
import os
import shutil
import sys


def is_stage_tree(key):
    return ".stage" in key and key.endswith("_tree")


def strip(src, dst):
    if os.path.exists(dst):
        shutil.rmtree(dst)
    shutil.copytree(src, dst)
    with open(os.path.join(dst, "digests.json")) as f:
        digests = json.load(f)
    dropped = [k for k in digests if is_stage_tree(k)]
    for k in dropped:
        del digests[k]
    text = json.dumps(digests, indent=2)
    with open(os.path.join(dst, "digests.json"), "w") as f:
        f.write(text)
    ppath = os.path.join(dst, "provenance.json")
    with open(ppath) as f:
        prov = json.load(f)
    prov["files"]["digests.json"] = hashlib.sha256(text.encode()).hexdigest()
    with open(ppath, "w") as f:
        f.write(json.dumps(prov, indent=2))
    print(f"stage_trees: {dst}: {len(dropped)} stage tree entries left out ({', '.join(sorted(dropped))})")
    return 0


def compare(a, b):
    with open(os.path.join(a, "digests.json")) as f:
        da = json.load(f)
    with open(os.path.join(b, "digests.json")) as f:
        db = json.load(f)
    n = 0
    for key in sorted(k for k in da if is_stage_tree(k)):
        for dtype, want in sorted(da[key].items()):
            got = db.get(key, {}).get(dtype)
            if got != want:
                print(f"stage_trees: {key} {dtype}: {a} has {want}, {b} has {got}", file=sys.stderr)
                return 1
            print(f"{key} {dtype}: {want} in both")
            n += 1
    if n == 0:
        print(f"stage_trees: {a} has no stage tree entries to compare", file=sys.stderr)
        return 1
    return 0


def main(argv):
    if len(argv) != 4 or argv[1] not in ("strip", "compare"):
        print("usage: stage_trees.py strip SRC DST | compare A B", file=sys.stderr)
        return 2
    try:
        return (strip if argv[1] == "strip" else compare)(argv[2], argv[3])
    except (OSError, ValueError, KeyError) as e:
        print(f"stage_trees: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
