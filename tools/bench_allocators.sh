#!/usr/bin/env bash
# The allocator comparison of docs/PERFORMANCE.md: build/inferd_ceiling built
# with each INFERD_ALLOCATOR (tcmalloc, jemalloc, glibc = mallopt-tuned, system
# = glibc defaults), per plan of PLANS (executors x threads: 1x1, and 2x1 as the
# server runs on 2 cores), batch 1, 2, 4, 8 and then 1 again
# in one process (so the last step shows whether the speed depends on what ran
# before), model only (random inputs, no image). Prints items/s and minor page
# faults per call (getrusage; load-independent) per allocator and batch size,
# the median over ROUNDS interleaved rounds, as a markdown table.
#
#   tools/bench_allocators.sh   (env: MODELS="mobilenet_v3_small resnet50"
#       ALLOCATORS="tcmalloc jemalloc glibc system" PLANS="1x1 2x1" BATCHES=1,2,4,8,1 ROUNDS=3
#       DURATION=4 WARMUP=1 STORE=examples/model-store OUT=/tmp/bench-allocators)
# Builds build-alloc-<allocator>/inferd_ceiling (only that target; ccache makes
# it a link for the first three). Takes about 1 min per model, plan and round
# with the defaults (about 25 min in all).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
MODELS=${MODELS:-"mobilenet_v3_small resnet50"}
ALLOCATORS=${ALLOCATORS:-"tcmalloc jemalloc glibc system"}
PLANS=${PLANS:-"1x1 2x1"}
BATCHES=${BATCHES:-1,2,4,8,1}
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-4}
WARMUP=${WARMUP:-1}
STORE=$(realpath "${STORE:-examples/model-store}")
OUT=$(realpath -m "${OUT:-/tmp/bench-allocators}")
mkdir -p "$OUT"
load() { cut -d" " -f1-3 /proc/loadavg; }

for a in $ALLOCATORS; do
  if [ ! -x "build-alloc-$a/inferd_ceiling" ] || [ "${REBUILD:-1}" = 1 ]; then
    cmake -S . -B "build-alloc-$a" -G Ninja -DCMAKE_BUILD_TYPE=Release -DINFERD_ALLOCATOR="$a" \
      > "$OUT/cmake.$a.log"
    cmake --build "build-alloc-$a" --target inferd_ceiling > "$OUT/build.$a.log"
  fi
done

: > "$OUT/runs.txt"
for model in $MODELS; do
  for plan in $PLANS; do
    for r in $(seq "$ROUNDS"); do
      for a in $ALLOCATORS; do
        echo "== $model $plan round $r allocator $a load $(load)" | tee -a "$OUT/runs.txt"
        "build-alloc-$a/inferd_ceiling" --model-store "$STORE" --model "$model" \
          --instances "${plan%x*}" --threads "${plan#*x}" --batch "$BATCHES" \
          --duration "$DURATION" --warmup "$WARMUP" 2>&1 | tee -a "$OUT/runs.txt"
      done
    done
  done
done

# One table per model: median items/s and faults per call per (allocator, step).
/usr/bin/python3 - "$OUT/runs.txt" "$BATCHES" "$ROUNDS" > "$OUT/table.md" <<'EOF'
import re, statistics, sys
runs, batches, rounds = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
rows, loads = {}, []
model = alloc = None
step = 0
for line in open(runs):
    m = re.match(r"== (\S+) (\S+) round \d+ allocator (\S+) load (.*)", line)
    if m:
        model, alloc, step = (m.group(1), m.group(2)), m.group(3), 0
        loads.append(m.group(4))
        continue
    m = re.search(r": ([\d.]+) items/s, p50 ([\d.]+) ms, p99 [\d.]+ ms, ([\d.]+) minor page faults per call, rss (\d+) MB", line)
    if m and model:
        rows.setdefault((model, alloc), {}).setdefault(step, []).append(
            (float(m.group(1)), float(m.group(3)), float(m.group(4))))
        step += 1
print(f"load averages (1/5/15 min) at the start of each run: {loads[0]} .. {loads[-1]}\n")
for model in dict.fromkeys(k[0] for k in rows):
    head = [f"batch {b}" + (" again" if batches[:i].count(b) else "") for i, b in enumerate(batches)]
    print(f"{model[0]}, {model[1][0]} executor(s) x {model[1][2:]} thread, items/s (minor page "
          f"faults per call), "
          f"median of {rounds} rounds:\n")
    print("| allocator | " + " | ".join(head) + " | RSS after |")
    print("|---|" + "---:|" * (len(head) + 1))
    for (m2, alloc), steps in rows.items():
        if m2 != model:
            continue
        cells = []
        for i in range(len(batches)):
            samples = steps.get(i, [])
            if not samples:
                cells.append("-")
                continue
            ips = statistics.median(s[0] for s in samples)
            faults = statistics.median(s[1] for s in samples)
            cells.append(f"{ips:.1f} ({faults:.0f})")
        rss = statistics.median(s[2] for s in steps[len(batches) - 1])
        print(f"| {alloc} | " + " | ".join(cells) + f" | {rss:.0f} MB |")
    print()
EOF
cat "$OUT/table.md"
