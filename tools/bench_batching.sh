#!/usr/bin/env bash
# Issue 4's benchmark: dynamic batching off vs on, then open-loop overload.
#   1. for each model of the store made by tools/make_bench_models.py: one
#      `inferd serve --models M` at a time, `inferd bench --concurrency 1,4,16`
#      (BERT: v2 JSON body of 128 token ids; MobileNet: raw JPEG).
#   2. overload: mobilenet_batch copied as mobilenet_overload with max_queue_size
#      $QSIZE and request_timeout_ms $TIMEOUT_MS, open loop at RATE req/s (Poisson);
#      meanwhile a curl probe sends one request after another and logs each
#      status and time_total, since `inferd bench` counts failures by status but
#      keeps no latency for them.
#
#   tools/bench_batching.sh   (env: STORE=/tmp/bench-store IMAGE=examples/images/cat.jpg
#     MODELS="mobilenet_nobatch mobilenet_batch bert_nobatch bert_batch" CONC=1,4,16
#     DURATION=5 WARMUP=3 WINDOWS=2 RATE= (empty: no overload step; auto: 2x
#     mobilenet_batch's best closed-loop req/s of this run) QSIZE=16
#     TIMEOUT_MS=500 OVER_S=10 OUT=/tmp/bench-batching)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
STORE=$(realpath "${STORE:-/tmp/bench-store}")
IMAGE=$(realpath "${IMAGE:-examples/images/cat.jpg}")
MODELS=${MODELS-"mobilenet_nobatch mobilenet_batch bert_nobatch bert_batch"}
CONC=${CONC:-1,4,16}; DURATION=${DURATION:-5}; WARMUP=${WARMUP:-3}; WINDOWS=${WINDOWS:-2}
RATE=${RATE:-}; QSIZE=${QSIZE:-16}; TIMEOUT_MS=${TIMEOUT_MS:-500}; OVER_S=${OVER_S:-10}
OUT=$(realpath -m "${OUT:-/tmp/bench-batching}")
INFERD=build/inferd
mkdir -p "$OUT"
PID=""
stop() { [ -n "$PID" ] && { kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; }; PID=""; }
trap stop EXIT
load() { echo "$(cut -d" " -f1-3 /proc/loadavg), other compiles: $(pgrep -c cc1plus || true)"; }
start() {  # start MODEL
  $INFERD serve --model-store "$STORE" --models "$1" --http-port 18090 --management-port 18091 \
    --metrics-port 18092 --grpc-port 0 > "$OUT/serve.$1.log" 2>&1 &
  PID=$!
  for _ in $(seq 600); do curl -sf -o /dev/null http://127.0.0.1:18090/ping && break; sleep 0.2; done
}

for m in $MODELS; do
  start "$m"
  case $m in
    bert*) args=(--form v2json --input "$STORE/bert_input.json") ;;
    *) args=(--input "$IMAGE") ;;
  esac
  echo "== $m --concurrency $CONC load $(load)" | tee -a "$OUT/summary.txt"
  $INFERD bench --url http://127.0.0.1:18090 --model "$m" "${args[@]}" --concurrency "$CONC" \
    --duration "$DURATION" --warmup "$WARMUP" --windows "$WINDOWS" --max-windows "$WINDOWS" \
    --metrics-url http://127.0.0.1:18092/metrics --json "$OUT/$m.json" --csv "$OUT/$m.csv" \
    --no-progress | tee -a "$OUT/summary.txt"
  stop
done

if [ "$RATE" = auto ]; then  # 2x the closed-loop capacity measured above
  RATE=$(/usr/bin/python3 -c 'import json,sys; print(round(2 * max(s["requests_per_s"] for s in json.load(open(sys.argv[1]))["steps"])))' "$OUT/mobilenet_batch.json")
fi
if [ -n "$RATE" ]; then
  m=mobilenet_overload
  rm -rf "$STORE/$m"; mkdir -p "$STORE/$m"
  cp -as "$STORE/mobilenet_batch/1" "$STORE/mobilenet_batch/labels.txt" "$STORE/$m/"
  sed -e "s/^max_queue_size:.*/max_queue_size: $QSIZE/" -e "s/^request_timeout_ms:.*/request_timeout_ms: $TIMEOUT_MS/" \
    "$STORE/mobilenet_batch/config.yaml" > "$STORE/$m/config.yaml"
  start "$m"
  echo "== $m open loop --rate $RATE poisson, max_queue_size $QSIZE, request_timeout_ms $TIMEOUT_MS, load $(load)" \
    | tee -a "$OUT/summary.txt"
  ( end=$((SECONDS + WARMUP + OVER_S)); sleep "$WARMUP"
    while [ $SECONDS -lt $end ]; do
      curl -s -o /dev/null -w '%{http_code} %{time_total}\n' -H 'Content-Type: image/jpeg' \
        --data-binary @"$IMAGE" http://127.0.0.1:18090/predictions/$m || true
    done > "$OUT/probe.txt" ) &
  probe=$!
  $INFERD bench --url http://127.0.0.1:18090 --model "$m" --input "$IMAGE" --rate "$RATE" \
    --arrivals poisson --duration "$OVER_S" --warmup "$WARMUP" --windows 1 --max-windows 1 \
    --metrics-url http://127.0.0.1:18092/metrics --json "$OUT/$m.json" --no-progress | tee -a "$OUT/summary.txt"
  wait "$probe" || true
  /usr/bin/python3 - "$OUT/probe.txt" <<'PY' | tee -a "$OUT/summary.txt"
import sys, collections
by = collections.defaultdict(list)
for line in open(sys.argv[1]):
    code, t = line.split()
    by[code].append(float(t) * 1000)
for code, v in sorted(by.items()):
    v.sort()
    rank = lambda p: v[max(0, -(-len(v) * p // 100) - 1)]
    print("probe status %s: %d requests, p50 %.1f ms, p99 %.1f ms, max %.1f ms" % (code, len(v), rank(50), rank(99), v[-1]))
PY
  stop
fi
