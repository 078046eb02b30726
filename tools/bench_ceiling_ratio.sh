#!/usr/bin/env bash
# inferd against its own in-process ceiling, side by side (issue 13's "85% of the ceiling" goal,
# docs/PERFORMANCE.md): one server on the example store (the plain binary, configs unchanged),
# then ROUNDS rounds that alternate, on the same 2 cores,
#   1. the ceiling: build/inferd_ceiling, 2 executors x 1 thread, JPEG decode + pre-processing +
#      model, with the server idle beside it, at two batch sizes: CONC / 2, the largest batch
#      that CONC requests in flight can fill on each of the 2 executors at once, and the largest
#      size the server's calibration chose (GET /v2/models/MODEL), which a closed loop of CONC
#      requests can only reach on one executor while the other waits;
#   2. inferd bench, closed loop at CONC raw JPEG requests (/predictions/MODEL);
#   3. the ceiling again;
#   4. wrk, the same step as 2 (-t1 -cCONC);
# and the ceiling once more after the last round. Each server step is divided by the mean of the
# two ceiling steps around it, so that a drift of the machine's speed during the round (up to a
# third within an hour here) falls on both sides of the ratio alike; the summary gives each
# round's ratios and their medians.
#
#   tools/bench_ceiling_ratio.sh   (env: INFERD=build/inferd CEILING=build/inferd_ceiling
#     STORE=examples/model-store MODEL=mobilenet_v3_small IMAGE=examples/images/cat.jpg
#     ROUNDS=3 DURATION=8 CONC=8 WARM_S=20 OUT=bench-out/ceiling-ratio-<time>)
# WARM_S: a first load step, not counted: a fresh server takes ~20 s of load to reach its steady
# state (its allocator's heap grows; 1.5 minor page faults per request in the first 8 s, 0 after).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
unset LD_PRELOAD GLIBC_TUNABLES 2>/dev/null || true
INFERD=$(realpath "${INFERD:-build/inferd}")
CEILING=$(realpath "${CEILING:-build/inferd_ceiling}")
STORE=$(realpath "${STORE:-examples/model-store}")
MODEL=${MODEL:-mobilenet_v3_small}
IMAGE=$(realpath "${IMAGE:-examples/images/cat.jpg}")
ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-8}
CONC=${CONC:-8}
WARM_S=${WARM_S:-20}
OUT=$(realpath -m "${OUT:-bench-out/ceiling-ratio-$(date +%Y%m%d-%H%M%S)}")
PY=/usr/bin/python3
for b in "$INFERD" "$CEILING"; do [ -x "$b" ] || { echo "bench_ceiling_ratio: no $b: make build" >&2; exit 1; }; done
command -v wrk > /dev/null || { echo "bench_ceiling_ratio: wrk is missing: apt-get install wrk" >&2; exit 1; }
mkdir -p "$OUT"
harness() { /usr/bin/python3 -m tools.harness "$@"; }
trap 'harness stop "$OUT/server"' EXIT
harness serve server --out "$OUT" --binary "$INFERD" --store "$STORE"
. "$OUT/server.env"
curl -sf "http://127.0.0.1:$SERVER_HTTP/v2/models/$MODEL" > "$OUT/model.json"
BATCH=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["batch_calibration"]["max_batch_size"])' "$OUT/model.json")
{ echo "inferd: $INFERD ($(git rev-parse --short HEAD 2>/dev/null || echo '?'))"
  echo "date: $(date -u +%FT%TZ); $(nproc) cpus; load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "model: $MODEL, image $IMAGE, calibrated batch $BATCH, c=$CONC, $DURATION s per step"; } > "$OUT/setup.txt"
FILL=$(( CONC / 2 > 0 ? CONC / 2 : 1 ))
[ "$FILL" -gt "$BATCH" ] && FILL=$BATCH
CEIL_BATCHES=$FILL; [ "$BATCH" != "$FILL" ] && CEIL_BATCHES="$FILL,$BATCH"
echo "bench_ceiling_ratio: calibrated batch $BATCH, ceiling at $CEIL_BATCHES; results in $OUT" >&2

harness bench "$OUT/server" -- --model "$MODEL" --input "$IMAGE" \
  --concurrency "$CONC" --duration "$WARM_S" --warmup 0 --windows 1 --max-windows 1 --no-progress \
  > "$OUT/warm.bench.txt" 2>&1
ceiling() {
  "$CEILING" --model-store "$STORE" --model "$MODEL" --instances 2 --threads 1 --batch "$CEIL_BATCHES" \
    --duration "$DURATION" --warmup 2 --image "$IMAGE" > "$1" 2>&1
}
for r in $(seq "$ROUNDS"); do
  echo "round $r/$ROUNDS (load $(cut -d' ' -f1 /proc/loadavg))" >&2
  ceiling "$OUT/r$r.ceiling.txt"
  harness bench "$OUT/server" --server-metrics --json "$OUT/r$r.bench.json" -- --model "$MODEL" --input "$IMAGE" \
    --concurrency "$CONC" --duration "$DURATION" --warmup 2 --windows 1 --max-windows 1 \
    --no-progress > "$OUT/r$r.bench.txt" 2>&1
  ceiling "$OUT/r$r.ceiling-mid.txt"
  WRK_BODY_FILE="$IMAGE" WRK_CONTENT_TYPE=image/jpeg \
    wrk -t1 -c"$CONC" -d"${DURATION}s" --timeout 30s --latency -s tools/wrk_post_file.lua \
    "http://127.0.0.1:$SERVER_HTTP/predictions/$MODEL" > "$OUT/r$r.wrk.txt" 2>&1
done
ceiling "$OUT/r$((ROUNDS + 1)).ceiling.txt"

$PY - "$OUT" "$ROUNDS" <<'PYEOF' | tee "$OUT/summary.md"
import json, re, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
print(open(f"{out}/setup.txt").read())
def ceiling(path):
    return {int(b): float(v) for b, v in
            re.findall(r"batch=(\d+) .*?: ([0-9.]+) items/s", open(path).read())}
def mean(a, b):
    return {k: (a[k] + b[k]) / 2 for k in a}
rows, ratios = [], {}
for r in range(1, rounds + 1):
    before, mid = ceiling(f"{out}/r{r}.ceiling.txt"), ceiling(f"{out}/r{r}.ceiling-mid.txt")
    after = ceiling(f"{out}/r{r + 1}.ceiling.txt")
    # each server step against the ceiling steps on either side of it
    ceil_bench, ceil_wrk = mean(before, mid), mean(mid, after)
    step = json.load(open(f"{out}/r{r}.bench.json"))["steps"][0]
    wrk_text = open(f"{out}/r{r}.wrk.txt").read()
    wrk = float(re.search(r"Requests/sec:\s*([0-9.]+)", wrk_text).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", wrk_text)
    rows.append((r, (before, mid, after), ceil_bench, ceil_wrk, step, wrk, bad.group(1) if bad else "0"))
batches = sorted(rows[0][1][0])
head = " | ".join(f"ceiling b={b}, before / mid / after" for b in batches)
print(f"| round | {head} | inferd bench req/s | wrk req/s | bench ÷ ceiling | wrk ÷ ceiling | wrk non-2xx |")
print("|---|" + "---|" * (len(batches) + 5))
for r, steps, ceil_bench, ceil_wrk, step, wrk, bad in rows:
    bench = step["requests_per_s"]
    for b in batches:
        ratios.setdefault(("bench", b), []).append(bench / ceil_bench[b])
        ratios.setdefault(("wrk", b), []).append(wrk / ceil_wrk[b])
    cs = " | ".join(" / ".join(f"{c[b]:.1f}" for c in steps) for b in batches)
    rb = " / ".join(f"{bench / ceil_bench[b]:.2f}" for b in batches)
    rw = " / ".join(f"{wrk / ceil_wrk[b]:.2f}" for b in batches)
    print(f"| {r} | {cs} | {bench:.1f} ({step['failures']} failed) | {wrk:.1f} | {rb} | {rw} | {bad} |")
print("\nmedian ratio to the ceiling (per round, then the median):")
for b in batches:
    print(f"- at batch {b}: inferd bench {statistics.median(ratios[('bench', b)]):.2f}, "
          f"wrk {statistics.median(ratios[('wrk', b)]):.2f}")
PYEOF
