#!/usr/bin/env bash
# gpu_bench.sh: on a CUDA machine, after `scripts/gpu_run.sh build`: `fuseproof bench` (bench.json, bench.md, bench.txt),
# the compiler's resource report and the SASS instruction counts of every kernel variant, all into $OUT.
#   OUT=<dir> scripts/gpu_bench.sh
# Environment: BUILD_DIR (default build-gpu), BENCH_TIMEOUT (seconds, default 300), BENCH_ARGS (extra `fuseproof bench`
#   options, default "--reps 20 --dist normal1,uniform16": every shape x dtype x vector x math (direct, table-bulk,
#   table-range-bulk) on two distributions in about two minutes (all six: scripts/gpu_bench_dist.sh);
#   e.g. "--shapes 256x13824 --dtypes bf16 --reps 10"), SASS_ARCH (default sm_90).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:?OUT must name the folder for the results}
BUILD_DIR=${BUILD_DIR:-build-gpu}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-300}
SASS_ARCH=${SASS_ARCH:-sm_90}
mkdir -p "$OUT"
log() { echo "gpu_bench: $*" >&2; }
bin="$BUILD_DIR/bin/fuseproof"
[ -x "$bin" ] || { log "no $bin: run scripts/gpu_run.sh build first"; exit 2; }

nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.max.sm,clocks.mem,power.limit \
  --format=csv > "$OUT/gpu.csv" 2>&1 || true

# --- The compiler's view first (cheap, and useful even when the bench fails).
cuobjdump="$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)"
obj="$(find "$BUILD_DIR/kernels" -name 'bias_gelu_tanh.cu.o' | head -1)"
if [ -n "$obj" ] && [ -x "$cuobjdump" ]; then
  "$cuobjdump" --dump-resource-usage "$obj" > "$OUT/resource_usage.txt" 2>&1 || true
  "$cuobjdump" -sass -arch "$SASS_ARCH" "$obj" > "$OUT/kernels_${SASS_ARCH}.sass" 2>&1 || true
  python3 - "$OUT/kernels_${SASS_ARCH}.sass" > "$OUT/sass_counts.md" <<'PY' || true
# Per kernel: total instructions, an opcode histogram, and the hottest loop (the backward branch whose body holds the
# most 128-bit global stores) with its instructions per stored element (each STG.E.128 stores 8 elements).
import re, sys, collections
text = "\n" + open(sys.argv[1]).read()
funcs = re.split(r"\n\s*Function : ", text)[1:]
ins_re = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)([^;]*);")
def short(name):
    # bias_gelu_tanh_kernel<Policy<Half, bytes[, blocks per SM or round-sum]>>, gelu_table_fill_kernel<Half, GeluTable>
    dt = lambda d: "bf16" if d == "0" else "fp16"
    m = re.search(r"bias_gelu_tanh_kernelINS0_\d+(DirectMath|FullTable|RangeTablePolicy)ILNS0_4HalfE(\d)ELi(\d+)E"
                  r"(?:Li(\d+)E)?", name)
    if m:
        return "%s<%s, %s B%s>" % (m.group(1), dt(m.group(2)), m.group(3), ", %s/SM" % m.group(4) if m.group(4) else "")
    m = re.search(r"gelu_table_fill_kernelILNS0_4HalfE(\d)E.*?(GeluTable|RangeTable)", name)
    if m:
        return "gelu_table_fill_kernel<%s, %s>" % (dt(m.group(1)), "range" if m.group(2) == "RangeTable" else "full")
    return name[:60]
keys = ["LDG", "STG", "LDS", "STS", "MUFU", "F2FP", "FADD", "FMUL", "FFMA", "HADD2", "PRMT", "LOP3", "SHF", "IMAD",
        "IADD3", "LEA", "ISETP", "BRA"]
print("| kernel | instructions | hot loop instructions | stored elements per loop pass | instructions per element | " +
      " | ".join(keys) + " |")
print("|---|---|---|---|---|" + "---|" * len(keys))
for f in funcs:
    name = f.split("\n", 1)[0].strip()
    ins = [(int(a, 16), op) for a, _, op, _ in ins_re.findall(f)]
    hist = collections.Counter(op.split(".")[0] for _, op in ins)
    best = None
    # Backward branches: cuobjdump prints absolute targets (BRA 0x1f0), nvdisasm labels (BRA `(.L_x_3)).
    labels = {m.group(1): int(m.group(2), 16) for m in re.finditer(r"\.(L_x_\d+):\s*\n\s*/\*([0-9a-f]+)\*/", f)}
    for m in re.finditer(r"/\*([0-9a-f]+)\*/\s+(?:@!?U?P\w+\s+)?BRA(?:\.\w+)*\s+`?\(?(0x[0-9a-f]+|\.L_x_\d+)", f):
        at = int(m.group(1), 16)
        tgt = int(m.group(2), 16) if m.group(2).startswith("0x") else labels.get(m.group(2)[1:])
        if tgt is None or tgt > at:
            continue
        body = [op for a, op in ins if tgt <= a <= at]
        stg = sum(1 for op in body if op.startswith("STG") and "128" in op)
        if stg and (best is None or stg > best[1] or (stg == best[1] and len(body) < best[0])):
            best = (len(body), stg)
    loop = "%d | %d | %.2f" % (best[0], best[1] * 8, best[0] / (best[1] * 8.0)) if best else "- | - | -"
    print("| %s | %d | %s | %s |" % (short(name), len(ins), loop, " | ".join(str(hist.get(k, 0)) for k in keys)))
PY
else
  log "no kernel object or cuobjdump: resource report and SASS counts skipped"
fi

# --- The benchmark.
t0=$SECONDS
# shellcheck disable=SC2086
timeout -k 5 "$BENCH_TIMEOUT" "$bin" bench --json "$OUT/bench.json" ${BENCH_ARGS:---reps 20 --dist normal1,uniform16} > "$OUT/bench.txt" 2>&1
rc=$?
# One renderer of bench.json: scripts/perf_table.py (the tables of docs/PERFORMANCE.md).
if [ -s "$OUT/bench.json" ]; then
  python3 scripts/perf_table.py "$OUT/bench.json" > "$OUT/bench.md" || log "perf_table.py failed: no bench.md"
fi
echo "$((SECONDS - t0))" > "$OUT/bench_seconds"
tail -n 60 "$OUT/bench.txt"
log "fuseproof bench exit $rc in $((SECONDS - t0)) s"
exit "$rc"
