#!/usr/bin/env bash
# Serving overhead: inferd with a model that does almost nothing (identity on 4
# floats, no batching), so that what is measured is the server itself: HTTP,
# JSON, queueing, the executor hand-off. Reports, per load step, the client's
# view (`inferd bench`) and, for the whole run, the server's own time per
# request from /metrics (request, queue and compute histograms) and the CPU
# time the server and the client spent per request.
#
#   tools/bench_overhead.sh            (env: INFERD=build/inferd CONCURRENCY=1,2,4,8
#                                       DURATION=3 WARMUP=2 WINDOWS=3 MAX_WINDOWS=5
#                                       FORM=v2json|raw OUT=bench-out/overhead-<time>)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
INFERD=$(realpath "${INFERD:-build/inferd}")
CONCURRENCY=${CONCURRENCY:-1,2,4,8}
DURATION=${DURATION:-3}
WARMUP=${WARMUP:-2}
WINDOWS=${WINDOWS:-3}
MAX_WINDOWS=${MAX_WINDOWS:-5}
FORM=${FORM:-v2json}
OUT=$(realpath -m "${OUT:-bench-out/overhead-$(date +%Y%m%d-%H%M%S)}")
PY=/usr/bin/python3
[ -x "$INFERD" ] || { echo "bench_overhead: no $INFERD: build it first" >&2; exit 1; }
mkdir -p "$OUT"
TMP=$(mktemp -d)
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$TMP"
}
trap cleanup EXIT

mkdir -p "$TMP/store/noop/1"
# TorchScript compiles from source: the module goes in a file, not on stdin.
cat > "$TMP/make_noop.py" <<'PYEOF'
import sys, torch
class Identity(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x
torch.jit.script(Identity()).save(sys.argv[1])
PYEOF
$PY "$TMP/make_noop.py" "$TMP/store/noop/1/model.pt"
cat > "$TMP/store/noop/config.yaml" <<'YAML'
# noop: identity on FP32 [-1], no batching: the server's own cost per request.
backend: torchscript
max_batch_size: 1
inputs:  [{name: input, datatype: FP32, shape: [-1]}]
outputs: [{name: output, datatype: FP32, shape: [-1]}]
YAML
if [ "$FORM" = raw ]; then
  BODY="$TMP/body.json"; echo '[[1.0, 2.0, 3.0, 4.0]]' > "$BODY"
else
  BODY="$TMP/body.json"
  echo '{"inputs":[{"name":"input","datatype":"FP32","shape":[1,4],"data":[1,2,3,4]}]}' > "$BODY"
fi

"$INFERD" serve --model-store "$TMP/store" --bind 127.0.0.1 --http-port 0 --management-port 0 \
  --metrics-port 0 --grpc-port 0 > "$OUT/server.stdout" 2> "$OUT/server.log" &
SERVER_PID=$!
for _ in $(seq 300); do
  grep -q "inferd: listening" "$OUT/server.stdout" 2>/dev/null && break
  kill -0 "$SERVER_PID" || { cat "$OUT/server.log" >&2; exit 1; }
  sleep 0.1
done
read -r HTTP METRICS < <(sed -n 's/.*listening http=\([0-9]*\) management=[0-9]* metrics=\([0-9]*\).*/\1 \2/p' "$OUT/server.stdout")
for _ in $(seq 300); do curl -sf -o /dev/null "http://127.0.0.1:$HTTP/v2/health/ready" && break; sleep 0.1; done

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
curl -sf "http://127.0.0.1:$METRICS/metrics" > "$OUT/metrics.before.txt"
server_cpu0=$(cpu_ticks "$SERVER_PID")
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/setup.txt" >&2
/usr/bin/time -f "%U %S" -o "$OUT/bench.cputime" \
  "$INFERD" bench --url "http://127.0.0.1:$HTTP" --model noop --form "$FORM" --input "$BODY" \
  --concurrency "$CONCURRENCY" --duration "$DURATION" --warmup "$WARMUP" --windows "$WINDOWS" \
  --max-windows "$MAX_WINDOWS" --json "$OUT/overhead.json" --csv "$OUT/overhead.csv" \
  --plot "$OUT/overhead.svg" | tee "$OUT/bench.txt"
server_cpu1=$(cpu_ticks "$SERVER_PID")
curl -sf "http://127.0.0.1:$METRICS/metrics" > "$OUT/metrics.after.txt"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/setup.txt" >&2

$PY - "$OUT" "$((server_cpu1 - server_cpu0))" "$(getconf CLK_TCK)" <<'PYEOF'
import json, re, sys
out, server_ticks, hz = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def scrape(path):
    vals = {}
    for line in open(path):
        m = re.match(r'^(inferd_\w+_(?:sum|count))\{model="noop[^"]*"\}\s+(\S+)', line)
        if m:
            vals[m.group(1)] = vals.get(m.group(1), 0) + float(m.group(2))
        m = re.match(r'^inferd_requests_total\{([^}]*)\}\s+(\S+)', line)
        if m and 'model="noop' in m.group(1):
            vals["requests"] = vals.get("requests", 0) + float(m.group(2))
    return vals
a, b = scrape(f"{out}/metrics.before.txt"), scrape(f"{out}/metrics.after.txt")
d = {k: b.get(k, 0) - a.get(k, 0) for k in b}
n = d.get("requests", 0)
report = json.load(open(f"{out}/overhead.json"))
sent = sum(s["sent_total"] for s in report["steps"])
user, sys_ = (float(x) for x in open(f"{out}/bench.cputime").read().split())
print(f"\nrequests: bench sent {sent}, server counted {int(n)}")
for name in ("request", "queue", "compute"):
    s, c = d.get(f"inferd_{name}_duration_seconds_sum", 0), d.get(f"inferd_{name}_duration_seconds_count", 0)
    if c:
        print(f"server-side {name:8s} time per request: {s / c * 1e6:8.1f} us  (mean over {int(c)})")
if n:
    print(f"server CPU per request: {server_ticks / hz / n * 1e6:.1f} us  (utime+stime of the process)")
    print(f"bench CPU per request:  {(user + sys_) / n * 1e6:.1f} us  (the load generator itself)")
PYEOF
echo "results in $OUT" >&2
