#!/usr/bin/env bash
# Where inferd's time goes under a closed-loop load: starts build/inferd on one
# model, loads it with `inferd bench` at concurrency C for DUR seconds and
# reports, from the kernel's per-thread schedstat (/proc/PID/task/*/schedstat),
# how long each busy thread ran, waited for a CPU (run queue) and slept
# (idle: an executor waiting for work), the load generator's CPU, the batch
# sizes formed (inferd_batch_size) and the server's mean queue/compute time.
#
#   tools/thread_profile.sh [MODEL]   (default mobilenet_v3_small)
#   env (defaults): C=8 DUR=15 STORE=examples/model-store
#     IMAGE=examples/images/cat.jpg SERVE_ARGS="" INFERD=build/inferd OUT=bench-out/threads-<time>
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
MODEL=${1:-mobilenet_v3_small}
C=${C:-8} DUR=${DUR:-15}
STORE=${STORE:-examples/model-store} IMAGE=${IMAGE:-examples/images/cat.jpg}
OUT=${OUT:-bench-out/threads-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
harness() { /usr/bin/python3 -m tools.harness "$@"; }
trap 'harness stop "$OUT/server"' EXIT
harness serve server --out "$OUT" --binary "${INFERD:-build/inferd}" --store "$STORE" \
  -- --models "$MODEL" ${SERVE_ARGS:-}
. "$OUT/server.env"
bench() {  # bench SECONDS [harness bench options]
  local seconds=$1; shift
  harness bench "$OUT/server" "$@" -- --model "$MODEL" --input "$IMAGE" --concurrency "$C" \
    --duration "$seconds" --warmup 0 --windows 1 --max-windows 1 --no-progress
}
bench 3 > /dev/null  # warm-up
snap() {
  date +%s.%N > "$OUT/wall.$1"
  for t in /proc/$SERVER_PID/task/*; do echo "$(basename "$t") $(cat "$t/comm") $(cat "$t/schedstat")"; done > "$OUT/threads.$1"
  curl -s "127.0.0.1:$SERVER_METRICS/metrics" > "$OUT/metrics.$1"
}
snap 0
bench "$DUR" --json "$OUT/bench.json" > "$OUT/bench.txt"
snap 1
/usr/bin/python3 - "$OUT" <<'PYEOF'
import json, re, sys
out = sys.argv[1]
rd = lambda n: open(f"{out}/{n}").read()
wall = float(rd("wall.1")) - float(rd("wall.0"))
print(rd("bench.txt").strip().splitlines()[-1])
report = json.loads(rd("bench.json"))
reqs, load_cpu = report["steps"][0]["sent_total"], report["harness"]["load_cpu_s"]
print(f"load generator: {load_cpu:.2f} s CPU, {1e3 * load_cpu / reqs:.3f} ms per request")
t0 = {l.split()[0]: l.split() for l in rd("threads.0").splitlines()}
print(f"{'thread':16} {'ran':>12} {'run queue':>10} {'idle':>12} ms CPU/req")
for l in rd("threads.1").splitlines():
    f = l.split()
    if f[0] not in t0: continue
    ran = (int(f[2]) - int(t0[f[0]][2])) / 1e9
    rq = (int(f[3]) - int(t0[f[0]][3])) / 1e9
    if ran < 0.01: continue
    idle = wall - ran - rq
    print(f"{f[1]:16} {ran:6.2f}s {100 * ran / wall:3.0f}% {rq:9.2f}s {idle:6.2f}s {100 * idle / wall:3.0f}% "
          f"{1e3 * ran / reqs:.3f}")
def series(name):
    got = {}
    for n in ("0", "1"):
        for l in rd(f"metrics.{n}").splitlines():
            m = re.match(name + r'\{([^}]*)\} (\S+)', l)
            if not m: continue
            le = re.search(r'le="([^"]+)"', m.group(1))
            got.setdefault(le and le.group(1), [0, 0])[int(n)] += float(m.group(2))
    return {k: v[1] - v[0] for k, v in got.items()}
b = series("inferd_batch_size_bucket")
prev, parts = 0, []
for k in ("1", "2", "4", "8", "16", "32"):
    if k in b:
        parts.append(f"<={k}: {b[k] - prev:.0f}")
        prev = b[k]
n = series("inferd_batch_size_count").get(None, 0)
items = series("inferd_batch_size_sum").get(None, 0)
print(f"batches: {n:.0f}, mean {items / max(n, 1):.2f} items; " + " ".join(parts))
for what in ("queue", "compute", "request"):
    s, c = series(f"inferd_{what}_duration_seconds_sum").get(None, 0), \
        series(f"inferd_{what}_duration_seconds_count").get(None, 0)
    if c: print(f"server {what} time: mean {1e3 * s / c:.2f} ms")
PYEOF
