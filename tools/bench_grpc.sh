#!/usr/bin/env bash
# gRPC against REST, side by side in one run, on one server (docs/performance/grpc.md):
#   1. serving overhead: a model that does nothing (identity on FP32 [1,4], no batching), closed
#      loop at concurrency 1: the server's CPU time per request (utime+stime of the process over
#      the step / requests), the server's own time per request (/metrics) and the client's p50,
#      for gRPC (raw_input_contents), REST v2 binary and REST v2 JSON;
#   2. MobileNetV3-small with a [1,3,224,224] FP32 tensor input (the example store's model.pt,
#      served without its preprocess), closed loop at concurrency CONC: throughput and p50;
#   3. threads: the process's thread count idle and under 512 concurrent gRPC calls.
# Rounds alternate the three forms so that the machine's load hits them alike; the summary gives
# medians and ratios, with the load average before and after each step.
#
#   tools/bench_grpc.sh     (env: INFERD=build/inferd STORE=examples/model-store ROUNDS=5
#                            DURATION=4 WARMUP=1 CONC=4 STREAMS=512 OUT=bench-out/grpc-<time>;
#                            NOOP_ONLY=1: only step 1, to compare builds on the overhead)
# Needs the example store (`make models`) and a built inferd.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
INFERD=$(realpath "${INFERD:-build/inferd}")
STORE=$(realpath "${STORE:-examples/model-store}")
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-4}
WARMUP=${WARMUP:-1}
CONC=${CONC:-4}
STREAMS=${STREAMS:-512}
OUT=$(realpath -m "${OUT:-bench-out/grpc-$(date +%Y%m%d-%H%M%S)}")
PY=/usr/bin/python3
[ -x "$INFERD" ] || { echo "bench_grpc: no $INFERD: build it first" >&2; exit 1; }
[ -f "$STORE/mobilenet_v3_small/1/model.pt" ] || { echo "bench_grpc: no $STORE/mobilenet_v3_small: run make models" >&2; exit 1; }
mkdir -p "$OUT"
TMP=$(mktemp -d)
harness() { /usr/bin/python3 -m tools.harness "$@"; }
trap 'harness stop "$OUT/server"; rm -rf "$TMP"' EXIT

# ---------------------------------------------------------------- models and bodies
mkdir -p "$TMP/store/noop/1" "$TMP/store/mobilenet_v3_small/1" "$TMP/bodies"
cat > "$TMP/make.py" <<'PYEOF'
import json, struct, sys
import numpy as np, torch
store, bodies = sys.argv[1], sys.argv[2]
class Identity(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x
torch.jit.script(Identity()).save(f"{store}/noop/1/model.pt")
def write(name, shape, values):
    flat = [float(v) for v in values.flatten()]
    with open(f"{bodies}/{name}.json", "w") as f:
        json.dump({"inputs": [{"name": "input", "datatype": "FP32", "shape": shape, "data": flat}]}, f)
    head = json.dumps({"inputs": [{"name": "input", "datatype": "FP32", "shape": shape,
                                   "parameters": {"binary_data_size": values.nbytes}}],
                       "parameters": {"binary_data_output": True}}).encode()
    with open(f"{bodies}/{name}.bin", "wb") as f:
        f.write(head + values.astype("<f4").tobytes())
write("noop", [1, 4], np.array([1, 2, 3, 4], dtype=np.float32))
write("mobilenet", [1, 3, 224, 224], np.random.default_rng(0).normal(size=(1, 3, 224, 224)).astype(np.float32))
PYEOF
$PY "$TMP/make.py" "$TMP/store" "$TMP/bodies"
cat > "$TMP/store/noop/config.yaml" <<'YAML'
# noop: identity on FP32 [-1], no batching: the server's own cost per request.
backend: torchscript
max_batch_size: 1
inputs:  [{name: input, datatype: FP32, shape: [-1]}]
outputs: [{name: output, datatype: FP32, shape: [-1]}]
YAML
ln -s "$STORE/mobilenet_v3_small/1/model.pt" "$TMP/store/mobilenet_v3_small/1/model.pt"
# The example config without preprocess/postprocess: tensors in, logits out.
grep -v -E '^(preprocess|postprocess):' "$STORE/mobilenet_v3_small/config.yaml" > "$TMP/store/mobilenet_v3_small/config.yaml"
# For the thread count: the same model with a queue that holds all STREAMS calls.
mkdir -p "$TMP/store/mobilenet_wide/1"
ln -s "$STORE/mobilenet_v3_small/1/model.pt" "$TMP/store/mobilenet_wide/1/model.pt"
sed -e "s/^max_queue_size:.*/max_queue_size: $((STREAMS * 2))/" -e 's/^request_timeout_ms:.*/request_timeout_ms: 600000/' \
  "$TMP/store/mobilenet_v3_small/config.yaml" > "$TMP/store/mobilenet_wide/config.yaml"

# ---------------------------------------------------------------- server
harness serve server --out "$OUT" --binary "$INFERD" --store "$TMP/store"
. "$OUT/server.env"
{ echo "inferd: $INFERD ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo '?'))"
  echo "machine: $(nproc) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"; } > "$OUT/setup.txt"

loadavg() { cut -d' ' -f1 /proc/loadavg; }
# step NAME MODEL PROTOCOL FORM BODY CONCURRENCY: one bench step; appends a JSON line to steps.jsonl
step() {
  local name=$1 model=$2 protocol=$3 form=$4 body=$5 conc=$6
  harness bench "$OUT/server" --server-metrics --json "$TMP/step.json" -- --protocol "$protocol" --model "$model" \
    --form "$form" --input "$body" --concurrency "$conc" --duration "$DURATION" --warmup "$WARMUP" \
    --windows 1 --max-windows 1 --no-progress >> "$OUT/bench.txt"
  $PY - "$TMP/step.json" "$name" >> "$OUT/steps.jsonl" <<'PYEOF'
import json, sys
path, name = sys.argv[1:]
report = json.load(open(path))
s, h = report["steps"][0], report["harness"]
print(json.dumps({"name": name, "concurrency": s["concurrency"], "sent": s["sent_total"],
                  "req_per_s": s["requests_per_s"], "p50_ms": s["latency_ms"]["p50"],
                  "failures": s["failures"], "server_cpu_us": h["server_cpu_s"] / s["sent_total"] * 1e6,
                  "server_request_us": s.get("server", {}).get("request_us"),
                  "load_before": h["load_before"], "load_after": h["load_after"]}))
PYEOF
}

B="$TMP/bodies"
for r in $(seq "$ROUNDS"); do
  echo "round $r/$ROUNDS (load $(loadavg))" >&2
  step noop/grpc noop grpc v2binary "$B/noop.bin" 1
  step noop/rest-binary noop http v2binary "$B/noop.bin" 1
  step noop/rest-json noop http v2json "$B/noop.json" 1
  [ "${NOOP_ONLY:-0}" = 1 ] && continue
  step mobilenet/grpc mobilenet_v3_small grpc v2binary "$B/mobilenet.bin" "$CONC"
  step mobilenet/rest-binary mobilenet_v3_small http v2binary "$B/mobilenet.bin" "$CONC"
  step mobilenet/rest-json mobilenet_v3_small http v2json "$B/mobilenet.json" "$CONC"
done

# ---------------------------------------------------------------- threads under STREAMS calls
if [ "${NOOP_ONLY:-0}" != 1 ]; then
threads() { ls "/proc/$SERVER_PID/task" | wc -l; }
IDLE_THREADS=$(threads)
harness bench "$OUT/server" --server-metrics --json "$OUT/streams.json" -- --protocol grpc --model mobilenet_wide \
  --form v2binary --input "$B/mobilenet.bin" --concurrency "$STREAMS" --duration 6 --warmup 4 \
  --windows 1 --max-windows 1 --timeout 120 --no-progress > "$OUT/streams.txt" &
BENCH_PID=$!
MAX_THREADS=0; MAX_QUEUED=0
while kill -0 "$BENCH_PID" 2>/dev/null; do
  n=$(threads); [ "$n" -gt "$MAX_THREADS" ] && MAX_THREADS=$n
  q=$(curl -sf "http://127.0.0.1:$SERVER_METRICS/metrics" | awk '/^inferd_queue_depth\{.*mobilenet_wide/ {s += $2} END {print s + 0}')
  q=${q%.*}; [ "$q" -gt "$MAX_QUEUED" ] && MAX_QUEUED=$q
  sleep 0.2
done
wait "$BENCH_PID"
echo "{\"idle_threads\": $IDLE_THREADS, \"max_threads\": $MAX_THREADS, \"max_queued\": $MAX_QUEUED, \"streams\": $STREAMS}" > "$OUT/threads.json"
{ echo "per-thread names after the $STREAMS calls (idle again):"; for t in /proc/$SERVER_PID/task/*; do cat "$t/comm"; done | sort | uniq -c; } > "$OUT/threads.txt"
fi

# ---------------------------------------------------------------- summary
$PY - "$OUT" "$ROUNDS" "$CONC" "${NOOP_ONLY:-0}" <<'PYEOF' | tee "$OUT/summary.md"
import json, statistics, sys
out, rounds, conc, noop_only = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] == "1"
steps = [json.loads(l) for l in open(f"{out}/steps.jsonl")]
def med(name, key):
    vals = [s[key] for s in steps if s["name"] == name and s[key] is not None]
    return statistics.median(vals) if vals else float("nan")
loads = [s["load_before"] for s in steps] + [s["load_after"] for s in steps]
print(f"Medians of {rounds} alternating rounds; load average 1 min from {min(loads):.1f} to {max(loads):.1f}.\n")
print("| trivial model, c=1 | server CPU per request | server time per request (/metrics) | client p50 | req/s |")
print("|---|---|---|---|---|")
for form in ("grpc", "rest-binary", "rest-json"):
    n = f"noop/{form}"
    print(f"| {form} | {med(n, 'server_cpu_us'):.0f} us | {med(n, 'server_request_us'):.0f} us | "
          f"{med(n, 'p50_ms'):.3f} ms | {med(n, 'req_per_s'):.0f} |")
g, b, j = (med(f"noop/{f}", "server_cpu_us") for f in ("grpc", "rest-binary", "rest-json"))
print(f"\nserver CPU per request, gRPC / REST binary = {g / b:.2f}; gRPC / REST JSON = {g / j:.2f}\n")
if noop_only:
    print(f"failed requests over all steps: {sum(s['failures'] for s in steps)}")
    sys.exit(0)
print(f"| MobileNetV3-small, [1,3,224,224] FP32, c={conc} | req/s | client p50 | server CPU per request |")
print("|---|---|---|---|")
for form in ("grpc", "rest-binary", "rest-json"):
    n = f"mobilenet/{form}"
    print(f"| {form} | {med(n, 'req_per_s'):.1f} | {med(n, 'p50_ms'):.1f} ms | {med(n, 'server_cpu_us') / 1000:.1f} ms |")
g, b, j = (med(f"mobilenet/{f}", "req_per_s") for f in ("grpc", "rest-binary", "rest-json"))
print(f"\nMobileNet throughput, gRPC / REST binary = {g / b:.2f}; gRPC / REST JSON = {g / j:.2f}")
t = json.load(open(f"{out}/threads.json"))
st = json.load(open(f"{out}/streams.json"))["steps"][0]
print(f"\nthreads: {t['idle_threads']} idle; at most {t['max_threads']} while {t['streams']} gRPC calls "
      f"were in flight (up to {t['max_queued']} seen queued at once; {st['requests_per_s']:.1f} req/s, "
      f"p50 {st['latency_ms']['p50']:.0f} ms, {st['failures']} failed)")
fails = sum(s["failures"] for s in steps)
print(f"failed requests over all steps: {fails}")
PYEOF
echo "bench_grpc: results in $OUT" >&2
