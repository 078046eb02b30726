#!/usr/bin/env bash
# inferd against every configuration of the Python text peer
# (../shared/peers/fastapi_torch/text_app.py: FastAPI + SentencePiece + PyTorch) on the same
# TorchScript file, tokenizer and 64 real texts of mixed lengths, with wrk rotating over the
# texts (tools/wrk_post_texts.lua). Rounds are interleaved (every configuration once per round,
# each one at every concurrency); the table gives medians over the rounds and the ratios to the
# tuned peer (gunicorn2_t1_tcmalloc).
#
#   tools/bench_text.sh BENCH_DIR MODEL
#   e.g. /usr/bin/python3 tools/make_text_models.py --bench /tmp/text-bench
#        tools/bench_text.sh /tmp/text-bench deberta_small
#
# BENCH_DIR is what make_text_models.py --bench wrote (MODEL/ for inferd, peer/ for Python,
# texts/). Environment (defaults):
#   INFERD=build/inferd  PEERS=../shared/peers/fastapi_torch
#   CONFIGS="inferd uvicorn1 gunicorn2 gunicorn2_t1 gunicorn2_t1_tcmalloc"
#     (also: inferd_auto, inferd_int8, inferd_bf16: the same store with that `precision:`)
#   CONCURRENCY="1 4 8 16"  DURATION=10s  WARMUP=3s  ROUNDS=2  TIMEOUT=30s
#   OUT=bench-out/text-<model>-<time>  SERVE_ARGS="" (extra `inferd serve` flags)
# Leaves the wrk lines (results.jsonl), server logs and inferd's /metrics in $OUT.
set -euo pipefail

if [ $# -ne 2 ]; then
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
BENCH=$(realpath "$1")
MODEL=$2
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
INFERD=$(realpath "${INFERD:-build/inferd}")
PEERS=$(realpath "${PEERS:-$ROOT/../shared/peers/fastapi_torch}")
CONFIGS=${CONFIGS:-"inferd uvicorn1 gunicorn2 gunicorn2_t1 gunicorn2_t1_tcmalloc"}
CONCURRENCY=${CONCURRENCY:-"1 4 8 16"}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-3s}
ROUNDS=${ROUNDS:-2}
TIMEOUT=${TIMEOUT:-30s}
OUT=$(realpath -m "${OUT:-bench-out/text-${MODEL}-$(date +%Y%m%d-%H%M%S)}")
SERVE_ARGS=${SERVE_ARGS:-}
PY=/usr/bin/python3

die() { echo "bench_text: $*" >&2; exit 1; }
[ -x "$INFERD" ] || die "no $INFERD: build it first (make build)"
[ -f "$BENCH/$MODEL/config.yaml" ] || die "no $BENCH/$MODEL: run tools/make_text_models.py --bench $BENCH"
[ -f "$BENCH/peer/$MODEL.pt" ] || die "no $BENCH/peer/$MODEL.pt (the peer serves SentencePiece models only)"
command -v wrk > /dev/null || die "wrk is missing: apt-get install wrk"

mkdir -p "$OUT"
TMP=$(mktemp -d)
mkdir -p "$TMP/store"
cp -as "$BENCH/$MODEL" "$TMP/store/$MODEL"
for p in auto int8 bf16; do  # the stores of inferd_auto, inferd_int8, inferd_bf16
  mkdir -p "$TMP/store_$p"
  cp -as "$BENCH/$MODEL" "$TMP/store_$p/$MODEL"
  rm "$TMP/store_$p/$MODEL/config.yaml"
  { grep -v '^precision:' "$BENCH/$MODEL/config.yaml"; echo "precision: $p"; } \
    > "$TMP/store_$p/$MODEL/config.yaml"
done

SERVER_PID=""
stop_server() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill -TERM -- -"$SERVER_PID" 2>/dev/null || true
    for _ in $(seq 100); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- -"$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  SERVER_PID=""
}
trap 'stop_server; rm -rf "$TMP"' EXIT

free_port() {
  $PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_ready() {
  local port=$1 log=$2
  for _ in $(seq 900); do
    kill -0 "$SERVER_PID" 2>/dev/null || { tail -20 "$log" >&2; die "the server exited (log: $log)"; }
    curl -sf -o /dev/null "http://127.0.0.1:$port/ping" && break
    sleep 0.2
  done
  curl -sf -o /dev/null -H "Content-Type: text/plain" --data-binary @"$BENCH/texts/00.txt" \
    "http://127.0.0.1:$port/predictions/$MODEL" || { tail -20 "$log" >&2; die "first request failed"; }
}

cpu_s() {  # CPU seconds of the server's process group (gunicorn's master and workers too)
  $PY - "$SERVER_PID" <<'PYEOF'
import os, sys
pgid, hz, cpu = int(sys.argv[1]), os.sysconf("SC_CLK_TCK"), 0
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        rest = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    except OSError:
        continue
    if int(rest[2]) == pgid:
        cpu += (int(rest[11]) + int(rest[12])) / hz
print(f"{cpu:.2f}")
PYEOF
}

tokens() {  # inferd's token counters: "padded real"
  curl -sf "http://127.0.0.1:$1/metrics" |
    awk '/^inferd_padded_tokens_total/ {p += $2} /^inferd_real_tokens_total/ {r += $2} END {print p + 0, r + 0}'
}

{
  echo "model: $MODEL ($BENCH), texts: $(ls "$BENCH/texts" | wc -l) files"
  echo "date: $(date -u +%FT%TZ), cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) cpus"
  echo "wrk -t1 -d$DURATION per concurrency ($CONCURRENCY), warm-up $WARMUP, rounds $ROUNDS"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/setup.txt" >&2

for round in $(seq "$ROUNDS"); do
  for cfg in $CONFIGS; do
    port=$(free_port)
    log="$OUT/$cfg.r$round.server.log"
    echo "== $cfg round $round, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    if [ "${cfg#inferd}" != "$cfg" ]; then
      store="$TMP/store${cfg#inferd}"
      mport=$(free_port)
      metrics_port=$(free_port)
      setsid "$INFERD" serve --model-store "$store" --bind 127.0.0.1 --http-port "$port" \
        --management-port "$mport" --metrics-port "$metrics_port" --grpc-port 0 $SERVE_ARGS \
        > "$log" 2>&1 &
    else
      APP=text_app setsid bash "$PEERS/run.sh" "$BENCH/peer" "$port" "$cfg" > "$log" 2>&1 &
    fi
    SERVER_PID=$!
    wait_ready "$port" "$log"
    url="http://127.0.0.1:$port/predictions/$MODEL"
    WRK_TEXT_DIR="$BENCH/texts" wrk -t1 -c4 -d"$WARMUP" --timeout "$TIMEOUT" \
      -s tools/wrk_post_texts.lua "$url" > /dev/null
    for c in $CONCURRENCY; do
      before="0 0"
      [ "${cfg#inferd}" != "$cfg" ] && before=$(tokens "$metrics_port")
      cpu0=$(cpu_s)
      line=$(WRK_TEXT_DIR="$BENCH/texts" wrk -t1 -c"$c" -d"$DURATION" --timeout "$TIMEOUT" \
        --latency -s tools/wrk_post_texts.lua "$url" | grep '^WRK_JSON' | sed 's/^WRK_JSON //')
      cpu1=$(cpu_s)
      after="0 0"
      [ "${cfg#inferd}" != "$cfg" ] && after=$(tokens "$metrics_port")
      echo "{\"config\": \"$cfg\", \"round\": $round, \"c\": $c, \"cpu_s\": [$cpu0, $cpu1], \"tokens_before\": \"$before\"," \
           "\"tokens_after\": \"$after\", \"wrk\": $line}" | tee -a "$OUT/results.jsonl" >&2
    done
    [ "${cfg#inferd}" != "$cfg" ] && curl -sf "http://127.0.0.1:$metrics_port/metrics" > "$OUT/$cfg.r$round.metrics"
    stop_server
  done
done
$PY tools/bench_text_table.py "$OUT/results.jsonl" | tee "$OUT/table.md"
