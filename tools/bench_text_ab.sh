#!/usr/bin/env bash
# Two inferd binaries side by side on a text model (A before, B after a change): ROUNDS rounds,
# in each A then B, each a fresh server on the model alone, a 3 s warm-up, then wrk rotating over
# the texts at every concurrency; prints req/s, p99, CPU ms per request and forwards counted.
#
#   tools/bench_text_ab.sh A_BINARY B_BINARY BENCH_DIR MODEL
#   e.g. tools/bench_text_ab.sh /tmp/old/build/inferd build/inferd /tmp/text-bench deberta_small
#   env: ROUNDS=3 CONCURRENCY="8 16" DURATION=10s
set -euo pipefail
cd "$(dirname "$0")/.."
A=$(realpath "${1:?A binary}"); B=$(realpath "${2:?B binary}"); BENCH=$(realpath "${3:?bench dir}")
MODEL=${4:?model}
ROUNDS=${ROUNDS:-3}; CONCURRENCY=${CONCURRENCY:-"8 16"}; DURATION=${DURATION:-10s}
STORE=$(mktemp -d); cp -as "$BENCH/$MODEL" "$STORE/$MODEL"
PID=""
trap '[ -n "$PID" ] && kill -TERM -- -"$PID" 2>/dev/null; rm -rf "$STORE"' EXIT
url=http://127.0.0.1:18100/predictions/$MODEL
send() { WRK_TEXT_DIR="$BENCH/texts" wrk -t1 -c"$1" -d"$2" -s tools/wrk_post_texts.lua "$url"; }
forwards() {
  curl -s localhost:18102/metrics | awk -v m="$MODEL" '$1 ~ "^inferd_batch_size_count" && $1 ~ m {print $2}'
}
echo "round binary c req/s p99_ms cpu_ms_per_request forwards"
for r in $(seq "$ROUNDS"); do
  for v in A B; do
    setsid "${!v}" serve --model-store "$STORE" --bind 127.0.0.1 --http-port 18100 \
      --management-port 18101 --metrics-port 18102 --grpc-port 0 > /dev/null 2>&1 &
    PID=$!
    for _ in $(seq 240); do curl -sf -o /dev/null localhost:18100/ping && break; sleep 0.5; done
    send 8 3s > /dev/null
    for c in $CONCURRENCY; do
      f0=$(forwards); t0=$(awk '{print $14 + $15}' "/proc/$PID/stat")
      out=$(send "$c" "$DURATION" | sed -n 's/^WRK_JSON //p')
      t1=$(awk '{print $14 + $15}' "/proc/$PID/stat"); f1=$(forwards)
      /usr/bin/python3 -c '
import json, os, sys
d = json.loads(sys.argv[1]); n = max(1, d["requests"]); hz = os.sysconf("SC_CLK_TCK")
print(sys.argv[2], sys.argv[3], sys.argv[4], round(d["ok_requests_per_s"], 1), round(d["p99_ms"]),
      round((float(sys.argv[6]) - float(sys.argv[5])) / hz * 1000 / n, 2),
      int(float(sys.argv[8]) - float(sys.argv[7])))' "$out" "$r" "$v" "$c" "$t0" "$t1" "$f0" "$f1"
    done
    kill -TERM -- -"$PID"; wait "$PID" 2>/dev/null || true; PID=""
  done
done
