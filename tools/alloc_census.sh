#!/usr/bin/env bash
# Heap allocations per batch on inferd's executor threads under a closed-loop
# load (INFERD must be a tcmalloc build: cmake -DINFERD_ALLOCATOR=tcmalloc; the default is
# jemalloc): builds tools/alloc_census.cc (an LD_PRELOAD counter on tcmalloc's
# MallocHook), starts INFERD on one model with it, warms up with `inferd bench`,
# then counts what the executors (and, apart, every other thread) allocated
# during DUR seconds at concurrency C, per executed batch (inferd_batch_size),
# by size class and, for blocks of 64 KiB and more, by exact size.
#
#   tools/alloc_census.sh [MODEL]   (default mobilenet_v3_small)
#   env (defaults): C=8 DUR=10 STORE=examples/model-store
#     IMAGE=examples/images/cat.jpg INFERD=build/inferd OUT=bench-out/census-<time>
#     ANALYSE=1 OUT=<an earlier OUT>: print the tables again without running
# Counts, not times: a busy machine changes the batch mix, not what one batch
# of a given size allocates.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
MODEL=${1:-mobilenet_v3_small}
C=${C:-8} DUR=${DUR:-10}
STORE=${STORE:-examples/model-store} IMAGE=${IMAGE:-examples/images/cat.jpg}
INFERD=${INFERD:-build/inferd}
OUT=${OUT:-bench-out/census-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
if [ -z "${ANALYSE:-}" ]; then  # ANALYSE=1: only analyse an earlier OUT
g++ -O2 -shared -fPIC -o "$OUT/alloc_census.so" tools/alloc_census.cc -ltcmalloc_minimal
harness() { /usr/bin/python3 -m tools.harness "$@"; }
trap 'harness stop "$OUT/server"' EXIT
harness serve server --out "$OUT" --binary "$INFERD" --store "$STORE" \
  --env ALLOC_CENSUS_OUT="$(realpath "$OUT")/census" --env LD_PRELOAD="$(realpath "$OUT")/alloc_census.so" \
  -- --models "$MODEL"
. "$OUT/server.env"
bench() {
  harness bench "$OUT/server" -- --model "$MODEL" --input "$IMAGE" \
    --concurrency "$C" --duration "$1" --warmup 0 --windows 1 --max-windows 1 --no-progress
}
snap() {
  kill -USR2 "$SERVER_PID"
  curl -s "127.0.0.1:$SERVER_METRICS/metrics" > "$OUT/metrics.$1"
  for _ in $(seq 600); do [ -f "$OUT/census.$1" ] && break; sleep 0.1; done
}
bench 5 > /dev/null  # warm-up: every batch size seen, the heap grown
snap 1
bench "$DUR" > "$OUT/bench.txt"
snap 2
fi
/usr/bin/python3 - "$OUT" "$MODEL" <<'PYEOF'
import collections, re, subprocess, sys
out, model = sys.argv[1], sys.argv[2]

def census(n):
    classes, sizes, sites = {}, collections.Counter(), collections.Counter()
    for line in open(f"{out}/census.{n}"):
        f = line.split()
        if f[0] == "class":
            classes[(f[1], f[2])] = (int(f[3]), int(f[4]))
        elif f[0] == "size":
            sizes[(f[1], int(f[2]))] += int(f[3])
        elif f[0] == "site":
            sites[(f[1], int(f[2]), tuple(f[4:]))] += int(f[3])
    return classes, sizes, sites

def batches(n):
    count = total = 0
    buckets = {}
    for line in open(f"{out}/metrics.{n}"):
        if not line.startswith("inferd_batch_size") or f'model="{model}"' not in line:
            continue
        value = float(line.split()[-1])
        if line.startswith("inferd_batch_size_count"):
            count += value
        elif line.startswith("inferd_batch_size_sum"):
            total += value
        elif m := re.search(r'le="([^"]+)"', line):
            buckets[m.group(1)] = value
    return count, total, buckets

names = {}
def symbolize(frames):
    by_module = collections.defaultdict(list)
    for fr in frames:
        if fr not in names and "+0x" in fr:
            module, off = fr.rsplit("+", 1)
            by_module[module].append((fr, off))
    for module, items in by_module.items():
        res = subprocess.run(["addr2line", "-f", "-C", "-e", module] + [o for _, o in items],
                             capture_output=True, text=True).stdout.splitlines()
        for (fr, _), name in zip(items, res[0::2]):
            names[fr] = name if name != "??" else fr.rsplit("/", 1)[-1]

SKIP = ("alloc_census", "libtcmalloc", "operator new", "__gnu_cxx::new_allocator", "std::")
def where(frames):
    """(the first frame past the allocator, the first of inferd's own frames
    at or below it: the code that asked, when torch or OpenCV allocates)."""
    symbolize(frames)
    first = ours = None
    for fr in frames:
        n = names.get(fr, fr)
        if any(s in fr or n.startswith(s) for s in SKIP):
            continue
        n = re.sub(r"\(.*", "", n.replace("(anonymous namespace)::", ""))
        first = first or n[:45]
        if n.startswith("inferd::") and n != first and ours is None and "Tensor::" not in n:
            ours = n.replace("inferd::", "")[:50]
        if ours:
            break
    return f"{first} <- {ours}" if ours else first

(c1, s1, t1), (c2, s2, t2) = census(1), census(2)
(b1, i1, k1), (b2, i2, k2) = batches(1), batches(2)
nb, items = b2 - b1, i2 - i1
print(open(f"{out}/bench.txt").read().strip().splitlines()[-1])
print(f"batches {nb:.0f}, items {items:.0f}, {items / nb:.2f} items per batch; "
      f"batches of 1 item: {k2.get('1', 0) - k1.get('1', 0):.0f}")
for kind in ("exec", "other"):
    print(f"-- {kind} threads: allocations, bytes per batch")
    for (k, cls), (n, b) in c2.items():
        if k != kind: continue
        n0, b0 = c1.get((k, cls), (0, 0))
        print(f"  {cls:12} {(n - n0) / nb:10.1f} {(b - b0) / nb / 1e3:12.1f} kB")
    sites = collections.defaultdict(lambda: [0, 0])
    for (k, size, frames), n in t2.items():
        n -= t1.get((k, size, frames), 0)
        if k == kind and n > 0:
            sites[where(frames)][0] += n
            sites[where(frames)][1] += n * size
    if sites:
        print("  blocks >= 64 KiB by the code that asked: per batch, allocations  kB; in the window")
    for w, (n, b) in sorted(sites.items(), key=lambda e: -e[1][1])[:14]:
        print(f"    {n / nb:6.2f} {b / nb / 1e3:9.1f} {n:6d}  {w}")
PYEOF
