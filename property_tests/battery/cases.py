"""cases.py: the bad-input battery's one table: every command's bad inputs, each with its exit status (README, "Exit
status"), its stderr line count (one for every non-zero status) and its effect on the scratch folder it runs in.

A case: id, group (a ctest each), argv (a shell-like string; {scratch} is the case's own folder, also the working
directory; {fuseproof}, {fuseproof_audit}, {fuseproof_e2e}, {fuseproof_video}, {python}, {golden_src}, {plugin_dir},
{exit_plugin} are the binaries and data as built), status, and optionally:
  setup        steps run in the scratch folder before the command (run_battery.py make_entries): ("file", name,
               content), ("dir", name), ("fifo", name), ("chardev", name, major, minor) (made in the scratch folder,
               never the real /dev node), ("link", name, target), ("copy", name, fixture path), ("golden", name),
               ("truncate", name, n), ("flipbit", name, byte, bit), ("remove", name), ("json", name, edit(doc, scratch))
  stderr       a regex the stderr text must match (the argument the line names)
  stderr_lines default 1 for a non-zero status, unchecked for 0
  creates      entries the command must create (regular files); any other new entry fails the case
  may_change   entries whose content (and inode) may change; their type may not
  either       alternative outcomes, each a dict overriding the above (e.g. write through a symlink, or refuse it)
  stdout       "pipe" (default), "path:NAME" (a node made in setup, e.g. a /dev/full-like device), "closed-pipe"
  needs        variables that must be given, else the case is skipped (e.g. exit_plugin)
Nothing else may appear in, vanish from or change in the scratch folder: type, mode, inode, mtime, size, link target
and content of every entry are compared before and after.

To add a command: give it a group in GROUPS, its writers in WRITERS (they meet every bad target), its stdout in
STDOUT_COMMANDS, and its own bad options below; a new group needs one line in CMakeLists.txt.
"""

import shlex

CASES = []
GROUPS = ("cli", "audit", "reference-audit", "eval", "table", "sweep", "stages", "bench", "e2e", "video", "python")


def case(group, id, argv, status, **kw):
    assert group in GROUPS, group
    full_id = group + "." + id
    assert all(c["id"] != full_id for c in CASES), "duplicate case id " + full_id
    CASES.append(dict(kw, id=full_id, group=group, argv=shlex.split(argv), status=status))


FP = "{fuseproof}"
E2E = FP + " e2e"
VID = FP + " video"
PY = "{python} -m fuseproof audit"
# An audit that gets past parsing cheaply: one class of one op's built-in kernel on the CPU emulation (about 1 s).
CHEAP = "--no-reference --op silu_and_mul --backend emulated --dtype bf16 --only rejection"
U64_MAX = "18446744073709551615"
U64_OVER = "18446744073709551616"
RUN = [("copy", "run", "run")]
REC = [("file", "rec.bin", b"\x00\x3f\x80\x3f")]  # one (gate, up) record of silu_and_mul
PY_SUBJECT = "--callable cpu_subjects:silu_and_mul_eager --op silu_and_mul --dtype bf16 --backend emulated " \
             "--math-model exact --only extreme"


# ---------------------------------------------------------------------------------------------------------------------
# Report paths: every file a command writes meets every kind of bad target. The writer writes regular files only,
# refuses an empty path, never replaces a device, FIFO, directory or link, and leaves nothing behind when it refuses.

# name, group, argv with {t} for the output path, setup, the status of a good run (0)
WRITERS = [
    ("audit_json", "audit", FP + " audit " + CHEAP + " --json {t}", []),
    ("audit_report", "audit", FP + " audit " + CHEAP + " --report {t}", []),
    ("audit_junit", "audit", FP + " audit " + CHEAP + " --junit {t}", []),
    ("table_out", "table", FP + " table --act silu --dtype bf16 --math libm --out {t}", []),
    ("eval_out", "eval", FP + " eval --op silu_and_mul --dtype bf16 --math libm --in {scratch}/rec.bin --out {t}", REC),
    ("sweep_out", "sweep", FP + " sweep --op silu_and_mul --dtype bf16 --math libm --bias-count 1 --out {t}", []),
    ("bench_json", "bench", FP + " bench --backend emulated --shapes 2x64 --dtypes bf16 --vectors 16 --maths direct "
     "--reps 1 --warmup 0 --graph-launches 0 --dist normal1 --json {t}", []),
    ("check_json", "e2e", E2E + " check --run-dir {scratch}/run --json {t}", RUN),
    ("check_junit", "e2e", E2E + " check --run-dir {scratch}/run --junit {t}", RUN),
    ("bless_out", "e2e", E2E + " bless --run-dir {scratch}/run --arch sm_90 --out {t}", RUN),
    ("compare_json", "e2e", E2E + " compare --run-dir {scratch}/run --json {t}", RUN),
    ("compare_markdown", "e2e", E2E + " compare --run-dir {scratch}/run --markdown-file {t}", RUN),
    ("video_json", "video", VID + " compare {scratch}/run/high.y4m {scratch}/run/high-eager.y4m --json {t}", RUN),
    ("video_markdown", "video", VID + " compare {scratch}/run/high.y4m {scratch}/run/high-eager.y4m --markdown-file {t}",
     RUN),
    ("video_plot", "video", VID + " compare {scratch}/run/high.y4m {scratch}/run/high-eager.y4m --plot {t}", RUN),
]
PY_WRITERS = [
    ("py_json", "python", PY + " " + PY_SUBJECT + " --json {t}", []),
    ("py_report", "python", PY + " " + PY_SUBJECT + " --report {t}", []),
    ("py_junit", "python", PY + " " + PY_SUBJECT + " --junit {t}", []),
]
# Refused outright (exit 2, nothing touched): name, setup, path
REFUSED_TARGETS = [
    ("full_device", [("chardev", "full", 1, 7)], "{scratch}/full"),
    ("null_device", [("chardev", "null", 1, 3)], "{scratch}/null"),
    ("fifo", [("fifo", "fifo")], "{scratch}/fifo"),
    ("directory", [("dir", "adir")], "{scratch}/adir"),
    ("empty_path", [], "''"),
    ("link_to_device", [("chardev", "full", 1, 7), ("link", "lfull", "full")], "{scratch}/lfull"),
    # /proc/self/fd/1 is the command's stdout, a pipe here: not a regular file (the issue's /dev/stdout)
    ("link_to_stdout", [("link", "stdout", "/proc/self/fd/1")], "{scratch}/stdout"),
]
# Written through or refused, whichever the docs state; never the link replaced: name, setup, path, either
LINK_TARGETS = [
    ("symlink", [("file", "target.out", "previous\n"), ("link", "link", "target.out")], "{scratch}/link",
     [dict(status=0, may_change=["target.out"]), dict(status=2)]),
    ("dangling_symlink", [("link", "dangling", "absent.out")], "{scratch}/dangling",
     [dict(status=0, creates=["absent.out"]), dict(status=2)]),
]

# Which targets each writer meets: every writer the device, the empty path and a link (the promises every writer
# keeps); every kind of target on one writer per language of writer (the audit's, the table's, the video tool's).
ALL_KINDS = ["control_new_file", "replaces_regular_file"] + [t[0] for t in REFUSED_TARGETS + LINK_TARGETS] + \
    ["missing_parent"]
KINDS = {
    "audit_json": [k for k in ALL_KINDS if k not in ("null_device", "link_to_stdout", "missing_parent")],
    "table_out": ["control_new_file", "full_device", "empty_path", "dangling_symlink"],
    "video_json": ["control_new_file", "full_device", "null_device", "empty_path", "symlink", "link_to_stdout"],
    "audit_report": ["full_device", "symlink"], "audit_junit": ["full_device", "directory"],
    "eval_out": ["full_device", "directory"], "sweep_out": ["full_device"], "bench_json": ["full_device"],
    "check_json": ["full_device", "symlink"], "check_junit": ["directory"],
    "bless_out": ["control_new_file", "full_device", "symlink"],
    "compare_json": ["full_device"], "compare_markdown": ["null_device"], "video_markdown": ["empty_path"],
    "video_plot": ["directory"], "py_json": ["full_device"],
}
for name, group, argv, setup in WRITERS + PY_WRITERS[:1]:
    kinds = KINDS[name]
    if "control_new_file" in kinds:
        case(group, name + ".control_new_file", argv.replace("{t}", "{scratch}/new.out"), 0, setup=setup,
             creates=["new.out"])
    if "replaces_regular_file" in kinds:
        case(group, name + ".replaces_regular_file", argv.replace("{t}", "{scratch}/old.out"), 0,
             setup=setup + [("file", "old.out", "previous\n")], may_change=["old.out"])
    for tname, tsetup, path in REFUSED_TARGETS:
        if tname in kinds:
            case(group, name + "." + tname, argv.replace("{t}", path), 2, setup=setup + tsetup)
    for tname, tsetup, path, either in LINK_TARGETS:
        if tname in kinds:
            case(group, name + "." + tname, argv.replace("{t}", path), 0, setup=setup + tsetup, either=either)
    if "missing_parent" in kinds:  # refused before any work, nothing created
        case(group, name + ".missing_parent", argv.replace("{t}", "{scratch}/no/such/dir/r.out"), 2, setup=setup)

# Folders a command writes into: a device, a FIFO, a regular file or an empty path is refused, nothing replaced.
FOLDER_WRITERS = [
    ("stages_out", "stages", FP + " stages --op modulate --dtype bf16 --out {t}"),
    ("run_out", "e2e", E2E + " run --config small --device cpu --modes lossless,high,high-eager --formats rgb24 --out {t}"),
]
for name, group, argv in FOLDER_WRITERS:
    for tname, tsetup, path in REFUSED_TARGETS[:5] + [("regular_file", [("file", "afile", "x\n")], "{scratch}/afile")]:
        if tname in ("directory", "null_device", "empty_path") or (name == "run_out" and tname != "regular_file"):
            continue
        case(group, name + "." + tname, argv.replace("{t}", path), 2, setup=tsetup)

# Two outputs of one command on one path: refused (exit 2), nothing written.
SAME_PATH = [
    ("audit", "json_report", FP + " audit " + CHEAP + " --json {scratch}/r --report {scratch}/r", []),
    ("audit", "all_three", FP + " audit " + CHEAP + " --json {scratch}/r --report {scratch}/r --junit {scratch}/r", []),
    ("audit", "json_report_spelled_apart", FP + " audit " + CHEAP + " --json {scratch}/r --report {scratch}/./r", []),
    ("e2e", "check_json_junit", E2E + " check --run-dir {scratch}/run --json {scratch}/r --junit {scratch}/r", RUN),
    ("video", "compare_json_markdown", VID + " compare {scratch}/run/high.y4m {scratch}/run/high-eager.y4m --json "
     "{scratch}/r --markdown-file {scratch}/r", RUN),
    ("python", "json_report", PY + " " + PY_SUBJECT + " --json {scratch}/r --report {scratch}/r", []),
]
for group, name, argv, setup in SAME_PATH:
    case(group, "same_path." + name, argv, 2, setup=setup, stderr=r"{scratch}/r|/r\b")

# ---------------------------------------------------------------------------------------------------------------------
# Stdout: a write error (a full device, a reader that went away) is an exit 2 with one line, never a silent 0. A
# /dev/null-like device takes everything: the control.
STDOUT_COMMANDS = [
    ("cli", "ops", FP + " ops", []),
    ("cli", "ops_json", FP + " ops --json", []),
    ("cli", "help", FP + " --help", []),
    ("audit", "audit", FP + " audit " + CHEAP, []),
    ("eval", "eval_print", FP + " eval --op silu_and_mul --dtype bf16 --math libm --in {scratch}/rec.bin --out "
     "{scratch}/o.bin --print", REC),
    ("e2e", "check", E2E + " check --run-dir {scratch}/run", RUN),
    ("video", "compare", VID + " compare {scratch}/run/high.y4m {scratch}/run/high-eager.y4m", RUN),
]
for group, name, argv, setup in STDOUT_COMMANDS:
    creates = ["o.bin"] if name == "eval_print" else []
    case(group, "stdout." + name + ".full_device", argv, 2, setup=setup + [("chardev", "full", 1, 7)],
         stdout="path:full")
    if name in ("ops", "audit", "check"):
        case(group, "stdout." + name + ".closed_pipe", argv, 2, setup=setup, stdout="closed-pipe")
    if name in ("ops", "audit"):
        case(group, "stdout." + name + ".null_device_control", argv, 0, setup=setup + [("chardev", "null", 1, 3)],
             stdout="path:null", creates=creates, stderr_lines=None)

# ---------------------------------------------------------------------------------------------------------------------
# The command line itself: unknown commands and options, missing values.
case("cli", "no_command", FP, 2)
case("cli", "unknown_command", FP + " bogus", 2, stderr="bogus")
case("cli", "ops_unknown_option", FP + " ops --bogus", 2, stderr="--bogus")
case("cli", "e2e_unknown_subcommand", E2E + " bogus", 2, stderr="bogus")
# The same commands through the separate binaries.
case("cli", "audit_binary_seed_negative", "{fuseproof_audit} " + CHEAP + " --seed -5", 2, stderr="--seed.*-5")
case("cli", "audit_binary_json_full_device", "{fuseproof_audit} " + CHEAP + " --json {scratch}/full", 2,
     setup=[("chardev", "full", 1, 7)])
case("cli", "e2e_binary_check_flipped_bit", "{fuseproof_e2e} check --run-dir {scratch}/run", 4,
     setup=RUN + [("flipbit", "run/high.rgb24", 1000, 0)], stderr="high.rgb24")
case("cli", "e2e_binary_bless_arch_escape", "{fuseproof_e2e} bless --run-dir {scratch}/run --arch ../../x --out "
     "{scratch}/g.json", 2, setup=RUN, stderr=r"--arch.*\.\./\.\./x")
case("cli", "video_binary_encode_escaping_mode", "{fuseproof_video} encode --run-dir {scratch}/run", 4,
     setup=RUN + [("json", "run/run.json", lambda d, s: d["runs"].__setitem__("../evilmode", d["runs"]["high"]))],
     stderr="evilmode")

# ---------------------------------------------------------------------------------------------------------------------
# audit: ordinary bad options, numbers out of range (negative numbers never wrap), values that check nothing (exit 2),
# missing golden data (3), corrupt golden data (4), a failing verdict (1, with its line on stderr).
A = FP + " audit " + CHEAP
for name, args, rx in [
    ("unknown_option", "--bogus", "--bogus"),
    ("seed_negative", "--seed -5", "--seed.*-5"),
    ("seed_2_64", "--seed " + U64_OVER, "--seed.*" + U64_OVER),
    ("call_timeout_nan", "--call-timeout nan", "--call-timeout.*nan"),
    # a limit no call can meet blames the kernel for a hang it did not have
    ("call_timeout_1e-9", "--call-timeout 1e-9", "--call-timeout.*1e-9"),
    ("lanes_three", "--lanes 3", "--lanes.*3"),
    ("arch_dotdot", "--arch sm_90/../sm_90", "--arch.*sm_90/../sm_90"),
    ("arch_escape", "--arch ../sm_90", r"--arch.*\.\./sm_90"),
]:
    case("audit", name, A + " " + args, 2, stderr=rx)
case("audit", "unknown_op", FP + " audit --no-reference --backend emulated --dtype bf16 --only rejection --op softmax", 2,
     stderr="--op.*softmax")
# The seed's range ends at 2^64 - 1, and the message says so.
case("audit", "seed_2_64_names_range", A + " --seed " + U64_OVER, 2, stderr=r"\[0, " + U64_MAX + r"\]")
case("audit", "seed_max_control", A + " --seed " + U64_MAX, 0)
case("audit", "plugin_not_elf", FP + " audit --no-reference --backend emulated --dtype bf16 --only rejection --plugin "
     "{scratch}/libtext.so", 2, setup=[("file", "libtext.so", "not a shared library\n")], stderr="libtext.so")
case("audit", "op_all_with_contract", FP + " audit --no-reference --backend emulated --dtype bf16 --only rejection "
     "--contract fp32", 2, stderr="--contract")
# Values that check nothing: exit 2 and one line, never an INCOMPLETE 3 with an empty stderr.
NOTHING = FP + " audit --no-reference --op silu_and_mul --backend emulated --dtype bf16"
case("audit", "max_width_7_checks_nothing", NOTHING + " --only widths --max-width 7", 2, stderr="--max-width.*7")
case("audit", "max_width_7_all_classes", NOTHING + " --max-width 7", 2, stderr="--max-width.*7")
case("audit", "only_stages_two_input_op", NOTHING + " --only stages", 2, stderr="--only.*stages")
case("audit", "only_pdl_emulated", NOTHING + " --only pdl", 2, stderr="--only.*pdl")
case("audit", "only_graph_emulated", NOTHING + " --only graph", 2, stderr="--only.*graph")
# Golden data: missing is INCOMPLETE (3), corrupt is 4; each with its one line.
case("audit", "golden_dir_empty", A + " --golden-dir {scratch}/empty", 3, setup=[("dir", "empty")],
     stderr="{scratch}/empty")
case("audit", "arch_without_golden", A + " --arch sm_100", 3, stderr="sm_100")
case("audit", "golden_table_truncated", A + " --golden-dir {scratch}/g", 4,
     setup=[("golden", "g"), ("truncate", "g/sm_90/silu_bf16.bin", -2)], stderr="silu_bf16.bin")
case("audit", "golden_table_bit_flipped", A + " --golden-dir {scratch}/g", 4,
     setup=[("golden", "g"), ("flipbit", "g/sm_90/silu_bf16.bin", 4096, 3)], stderr="silu_bf16.bin")
# A failing verdict: exit 1 with one line on stderr.
case("audit", "failing_verdict_has_stderr_line", FP + " audit --no-reference --backend emulated --dtype bf16 --only "
     "extreme --plugin {plugin_dir}/mutants/host/libhost_silu_and_mul_gate_up_swapped.so", 1, needs=["plugin_dir"])
# A kernel that ends its process with status 0 gives no verdict: never a PASS, in a child or not.
case("audit", "plugin_exit0_isolated", FP + " audit --no-reference --backend emulated --dtype bf16 --only rejection "
     "--plugin {exit_plugin}", 1, needs=["exit_plugin"])
case("audit", "plugin_exit0_no_isolation", FP + " audit --no-reference --backend emulated --dtype bf16 --only rejection "
     "--no-isolation --plugin {exit_plugin}", 1, needs=["exit_plugin"])
case("audit", "control_cheap_passes", A, 0)

# ---------------------------------------------------------------------------------------------------------------------
# reference-audit
RA = FP + " reference-audit --no-whole-domain"
case("reference-audit", "unknown_option", RA + " --bogus", 2, stderr="--bogus")
case("reference-audit", "golden_dir_empty", RA + " --golden-dir {scratch}/empty", 3, setup=[("dir", "empty")],
     stderr="{scratch}/empty")
case("reference-audit", "golden_dir_nonexistent", RA + " --golden-dir {scratch}/nowhere", 2, stderr="nowhere")
case("reference-audit", "golden_table_truncated", RA + " --golden-dir {scratch}/g", 4,
     setup=[("golden", "g"), ("truncate", "g/sm_90/gelu_tanh_bf16.bin", -1)], stderr="gelu_tanh_bf16.bin")
case("reference-audit", "golden_table_missing", RA + " --golden-dir {scratch}/g", 3,
     setup=[("golden", "g"), ("remove", "g/sm_90/gelu_tanh_fp16.bin")], stderr="gelu_tanh_fp16.bin")

# ---------------------------------------------------------------------------------------------------------------------
# eval: its --in must be a regular file of whole records; nothing is written when it is refused.
EV = FP + " eval --op silu_and_mul --dtype bf16 --math libm --out {scratch}/o.bin"
case("eval", "in_directory", EV + " --in {scratch}/adir", 2, setup=[("dir", "adir")], stderr="--in.*adir")
case("eval", "in_zero_device", EV + " --in {scratch}/zero", 2, setup=[("chardev", "zero", 1, 5)],
     stderr="--in.*zero")
case("eval", "in_empty_file", EV + " --in {scratch}/empty.bin", 2, setup=[("file", "empty.bin", b"")],
     stderr="--in.*empty.bin")
case("eval", "arch_escape", FP + " eval --op silu_and_mul --dtype bf16 --math cuda --arch ../sm_90 --in "
     "{scratch}/rec.bin --out {scratch}/o.bin", 2, setup=REC, stderr=r"--arch.*\.\./sm_90")

# ---------------------------------------------------------------------------------------------------------------------
# table: a failed --out leaves no file (not even an empty one).
TB = FP + " table --act silu --dtype bf16 --out {scratch}/t.bin"
case("table", "unknown_act", FP + " table --act relu --dtype bf16 --out {scratch}/t.bin", 2, stderr="relu")
case("table", "mufu_missing_leaves_no_file", TB + " --math cuda --golden-build-dir {scratch}/nowhere", 3,
     stderr="nowhere")
case("table", "arch_escape_leaves_no_file", TB + " --math cuda --arch ../sm_90", 2, stderr=r"--arch.*\.\./sm_90")
case("table", "arch_without_golden_leaves_no_file", TB + " --math cuda --arch sm_100", 3, stderr="sm_100")

# ---------------------------------------------------------------------------------------------------------------------
# sweep: negative numbers never wrap; golden digests missing (3) or corrupt (4) before any work.
SW = FP + " sweep --op silu_and_mul --dtype bf16 --math libm --bias-count 1"
for name, args, rx in [
    ("max_records_negative", "--max-records -1", "--max-records.*-1"),
]:
    case("sweep", name, SW + " " + args, 2, stderr=rx)
case("sweep", "bias_count_zero", FP + " sweep --op silu_and_mul --dtype bf16 --math libm --bias-count 0", 2,
     stderr="--bias-count.*0")
SG = FP + " sweep --op silu_and_mul --dtype bf16 --math libm --against golden"
case("sweep", "golden_arch_escape", SG + " --arch ../sm_90", 2, stderr=r"--arch.*\.\./sm_90")
case("sweep", "golden_dir_empty", SG + " --golden-dir {scratch}/empty", 3, setup=[("dir", "empty")],
     stderr="{scratch}/empty|sm_90")
case("sweep", "golden_digests_not_json", SG + " --golden-dir {scratch}/g", 4,
     setup=[("golden", "g"), ("file", "g/sm_90/digests.json", "{")], stderr="digests.json")

# ---------------------------------------------------------------------------------------------------------------------
# stages
ST = FP + " stages --out {scratch}/st"
case("stages", "unknown_op", ST + " --op softmax --dtype bf16", 2, stderr="softmax")
case("stages", "two_input_op", ST + " --op silu_and_mul --dtype bf16", 2, stderr="silu_and_mul")

# ---------------------------------------------------------------------------------------------------------------------
# bench: negative numbers never wrap; inputs must be regular files of the stated size.
BE = FP + " bench --backend emulated --shapes 2x64 --dtypes bf16 --vectors 16 --maths direct --reps 1 --warmup 0 " \
     "--graph-launches 0 --dist normal1"
for name, args, rx in [
    ("seed_negative", "--seed -5", "--seed.*-5"),
    ("seed_2_64", "--seed " + U64_OVER, "--seed.*" + U64_OVER),
    ("input_directory", "--input {scratch}/adir --input-shape 1x4", "adir"),
    ("input_zero_device", "--input {scratch}/zero --input-shape 1x4", "zero"),
]:
    setup = {"input_directory": [("dir", "adir")], "input_empty": [("file", "empty.bin", b"")],
             "input_zero_device": [("chardev", "zero", 1, 5)]}.get(name, [])
    case("bench", name, BE + " " + args, 2, setup=setup, stderr=rx)

# ---------------------------------------------------------------------------------------------------------------------
# e2e: the gates recompute every frame's SHA-256; paths from run.json and golden files stay inside their folder; a
# missing, truncated or altered frame is corrupt data (4), and bless refuses it (nothing written).


def _set_file(mode, value):
    def set_file(doc, scratch):
        doc["runs"][mode]["files"]["rgb24"] = value.format(scratch=scratch)
    return set_file


def _drop_mode(mode):
    def drop_mode(doc, scratch):
        del doc["runs"][mode]
        doc["modes"] = [m for m in doc.get("modes", []) if m != mode]
    return drop_mode


def _truncate_high_hashes(doc, scratch):
    (doc["runs"]["high"] if "runs" in doc else doc["high"])["frame_sha256"].pop()


def _evil_mode(doc, scratch):
    doc["runs"]["../evilmode"] = dict(doc["runs"]["high"])
    doc["modes"] = doc.get("modes", []) + ["../evilmode"]


def _golden_frame_40_changed(doc, scratch):
    doc["high"]["frame_sha256"][40] = "0" * 64


# name, spoiling steps, the file the line must name, which commands meet it
SPOILED_FRAMES = [
    ("high_truncated", [("truncate", "run/high.rgb24", -1)], "high.rgb24", "check bless"),
    ("high_eager_deleted", [("remove", "run/high-eager.rgb24")], "high-eager.rgb24", "check bless"),
    ("high_bit_flipped", [("flipbit", "run/high.rgb24", 500000, 6)], "high.rgb24", "check bless compare"),
    ("lossless_bit_flipped", [("flipbit", "run/lossless.rgb24", 12345, 0)], "lossless.rgb24", "check"),
    ("high_file_escapes", [("copy", "outside.rgb24", "run/high.rgb24"),
                           ("json", "run/run.json", _set_file("high", "../outside.rgb24"))], "outside.rgb24",
     "check bless compare"),
    ("high_file_absolute", [("copy", "outside.rgb24", "run/high.rgb24"),
                            ("json", "run/run.json", _set_file("high", "{scratch}/outside.rgb24"))], "outside.rgb24",
     "check"),
    ("high_file_etc_passwd", [("json", "run/run.json", _set_file("high", "../../../../../../../../etc/passwd"))],
     "passwd", "check"),
    ("high_file_symlink_outside", [("copy", "outside.rgb24", "run/high.rgb24"), ("remove", "run/high.rgb24"),
                                   ("link", "run/high.rgb24", "../outside.rgb24")], "high.rgb24", "check"),
]
for name, spoil, rx, commands in SPOILED_FRAMES:
    if "check" in commands:
        case("e2e", "check." + name, E2E + " check --run-dir {scratch}/run", 4, setup=RUN + spoil, stderr=rx)
    if "bless" in commands:
        case("e2e", "bless." + name, E2E + " bless --run-dir {scratch}/run --arch sm_90 --out {scratch}/g.json", 4,
             setup=RUN + spoil, stderr=rx)
    if "compare" in commands:
        case("e2e", "compare." + name, E2E + " compare --run-dir {scratch}/run", 4, setup=RUN + spoil, stderr=rx)
case("e2e", "check.with_golden.high_bit_flipped", E2E + " check --run-dir {scratch}/run --golden {scratch}/golden.json",
     4, setup=RUN + [("copy", "golden.json", "golden.json"), ("flipbit", "run/high.rgb24", 777, 1)],
     stderr="high.rgb24")
# A run without one of the modes the gates need: a missing input (2), its line on stderr, not stdout.
case("e2e", "check.run_missing_mode", E2E + " check --run-dir {scratch}/run", 2,
     setup=RUN + [("json", "run/run.json", _drop_mode("high-eager"))], stderr="high-eager")
# A frame_sha256 list shorter than the frames it describes is corrupt data (4), not a mismatch (1).
case("e2e", "check.run_frame_sha256_truncated", E2E + " check --run-dir {scratch}/run", 4,
     setup=RUN + [("json", "run/run.json", _truncate_high_hashes)], stderr="frame_sha256")
case("e2e", "check.golden_frame_sha256_truncated", E2E + " check --run-dir {scratch}/run --golden {scratch}/golden.json",
     4, setup=RUN + [("copy", "golden.json", "golden.json"), ("json", "golden.json", _truncate_high_hashes)],
     stderr="frame_sha256")
case("e2e", "check.run_json_not_json", E2E + " check --run-dir {scratch}/run", 4,
     setup=RUN + [("file", "run/run.json", "{ truncated")], stderr="run.json")
case("e2e", "check.golden_missing", E2E + " check --run-dir {scratch}/run --golden {scratch}/none.json", 3, setup=RUN,
     stderr="none.json")
case("e2e", "check.golden_frame_changed_mismatch", E2E + " check --run-dir {scratch}/run --golden "
     "{scratch}/golden.json", 1, setup=RUN + [("copy", "golden.json", "golden.json"),
                                             ("json", "golden.json", _golden_frame_40_changed)])
case("e2e", "check.control_intact", E2E + " check --run-dir {scratch}/run", 0, setup=RUN)
case("e2e", "check.control_intact_with_golden", E2E + " check --run-dir {scratch}/run --golden {scratch}/golden.json", 0,
     setup=RUN + [("copy", "golden.json", "golden.json")])
# compare: two modes of one run; the same mode twice checks nothing.
case("e2e", "compare.same_mode", E2E + " compare --run-dir {scratch}/run --baseline high --candidate high", 2,
     setup=RUN, stderr="high")
case("e2e", "compare.frames_differ_has_stderr_line", E2E + " compare --run-dir {scratch}/run --baseline lossless "
     "--candidate high", 1, setup=RUN)
case("e2e", "compare.control_identical", E2E + " compare --run-dir {scratch}/run", 0, setup=RUN)
# bless: --arch follows the architecture grammar; nothing is written when it is refused.
for name, arch in [("arch_escape", "../../x"), ("arch_dotdot", "sm_90/../sm_90")]:
    case("e2e", "bless." + name, E2E + " bless --run-dir {scratch}/run --arch " + arch + " --out {scratch}/g.json", 2,
         setup=RUN, stderr="--arch")
# run and sites: ordinary bad options.
R = E2E + " run --out {scratch}/out"
for name, args, rx in [
    ("mode_escapes", "--modes ../high", r"\.\./high"),
]:
    case("e2e", "run." + name, R + " " + args, 2, stderr=rx)

# ---------------------------------------------------------------------------------------------------------------------
# video compare and encode
VC = VID + " compare {scratch}/run/high.y4m {scratch}/run/high-eager.y4m"
case("video", "compare.empty_file", VID + " compare {scratch}/empty.y4m {scratch}/run/high.y4m", 4,
     setup=RUN + [("file", "empty.y4m", b"")], stderr="empty.y4m")
case("video", "compare.truncated_y4m", VC, 4, setup=RUN + [("truncate", "run/high-eager.y4m", -100)],
     stderr="high-eager.y4m")
case("video", "compare.header_bit_flipped", VC, 4, setup=RUN + [("flipbit", "run/high-eager.y4m", 2, 1)],
     stderr="high-eager.y4m")
case("video", "compare.expect_frames_wrong", VC + " --expect-frames 80", 2, setup=RUN, stderr="--expect-frames.*80")
case("video", "compare.frames_differ_has_stderr_line", VID + " compare {scratch}/run/lossless.y4m "
     "{scratch}/run/high.y4m", 1, setup=RUN)
case("video", "compare.control_identical", VC, 0, setup=RUN)
VE = VID + " encode --run-dir {scratch}/run"
case("video", "encode.escaping_mode", VE, 4, setup=RUN + [("json", "run/run.json", _evil_mode)], stderr="evilmode")
case("video", "encode.file_escapes", VE + " --modes high", 4,
     setup=RUN + [("copy", "outside.rgb24", "run/high.rgb24"),
                  ("json", "run/run.json", _set_file("high", "../outside.rgb24"))], stderr="outside.rgb24")
case("video", "encode.bit_flipped", VE + " --modes high", 4, setup=RUN + [("flipbit", "run/high.rgb24", 4242, 2)],
     stderr="high.rgb24")
# a --modes that names no mode of the run encodes nothing: a value that checks nothing
case("video", "encode.unknown_mode", VE + " --modes turbo", 2, setup=RUN, stderr="turbo")

# ---------------------------------------------------------------------------------------------------------------------
# python3 -m fuseproof: the subject is imported in a child first; any exit during import, of any status, is exit 2
# naming the module; a failed run leaves no report behind.
IMPORT_EXITS = [
    ("sys_exit_0", "import sys\nsys.exit(0)\n"),
    ("sys_exit_3", "import sys\nsys.exit(3)\n"),
    ("os_exit_0", "import os\nos._exit(0)\n"),
]
for name, body in IMPORT_EXITS:
    mod = "zimp_" + name
    case("python", "import." + name, PY + " --callable " + mod + ":f --op silu_and_mul --dtype bf16 --backend emulated "
         "--only extreme --json {scratch}/r.json", 2, setup=[("file", mod + ".py", body)], stderr=mod)
case("python", "failing_verdict_has_stderr_line", PY + " --callable zzero:f --op silu_and_mul --dtype bf16 --backend "
     "emulated --only extreme", 1,
     setup=[("file", "zzero.py", "import torch\ndef f(x):\n    return torch.zeros(x.shape[0], x.shape[1] // 2, "
                                 "dtype=x.dtype)\n")])
case("python", "module_missing_leaves_no_report", PY + " --callable znone:f --op silu_and_mul --dtype bf16 --backend "
     "emulated --only extreme --json {scratch}/r.json --report {scratch}/r.md", 2, stderr="znone")
case("python", "unknown_option", PY + " --bogus", 2, stderr="--bogus")
case("python", "no_subject", PY + " --op silu_and_mul", 2, stderr="--callable")
case("python", "unknown_backend", PY + " --callable a:b --backend tpu", 2, stderr="tpu")
# A Python callable takes every width (a 1-element vector): --max-width 7 checks widths 1..7; 0 checks none.
case("python", "max_width_0", PY + " " + PY_SUBJECT.replace("extreme", "widths") + " --max-width 0", 2,
     stderr="--max-width.*0")


# ---------------------------------------------------------------------------------------------------------------------
# The classes docs/RELIABILITY.md counts (run_battery.py --list prints them).
WRITER_NAMES = {w[0] for w in WRITERS + PY_WRITERS + FOLDER_WRITERS}


def class_of(c):
    parts = c["id"].split(".")
    if parts[1] in WRITER_NAMES or c["id"] == "cli.audit_binary_json_full_device":
        return "report paths"
    if parts[1] == "same_path":
        return "one path twice"
    if parts[1] == "stdout":
        return "stdout"
    if c["group"] == "python" and parts[1] == "import" or "exit0" in c["id"] or "has_stderr_line" in c["id"]:
        return "no verdict, no PASS"
    if "arch" in c["id"] and "without_golden" not in c["id"]:
        return "numbers and values"
    if c["group"] in ("e2e", "video") and parts[1] in ("check", "bless", "compare", "encode") or \
            "e2e_binary" in c["id"] or "video_binary" in c["id"]:
        return "e2e gates"
    if parts[1].startswith(("in_", "input_", "golden", "mufu", "plugin_not_elf")) or "golden" in parts[1]:
        return "inputs"
    return "numbers and values"
