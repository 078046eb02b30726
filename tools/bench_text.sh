#!/usr/bin/env bash
# inferd against every configuration of the Python text peer
# (../shared/peers/fastapi_torch/text_app.py: FastAPI + SentencePiece + PyTorch) on the same
# TorchScript file, tokenizer and 64 real texts of mixed lengths, with `inferd bench` sending
# the texts round robin (tools/harness). Rounds are interleaved (every configuration once per
# round, each one at every concurrency); the table gives medians over the rounds and the ratios
# to the tuned peer (gunicorn2_t1_tcmalloc).
#
#   tools/bench_text.sh BENCH_DIR MODEL
#   e.g. /usr/bin/python3 tools/make_text_models.py --bench /tmp/text-bench
#        tools/bench_text.sh /tmp/text-bench deberta_small
#
# BENCH_DIR is what make_text_models.py --bench wrote (MODEL/ for inferd, peer/ for Python,
# texts/). Environment (defaults):
#   INFERD=build/inferd  PEERS=../shared/peers/fastapi_torch
#   CONFIGS="inferd uvicorn1 gunicorn2 gunicorn2_t1 gunicorn2_t1_tcmalloc"
#     (also: inferd_auto, inferd_int8, inferd_bf16: the same store with that `precision:`;
#     a name ending in _narrow, e.g. inferd_auto_narrow: the same server with
#     --widen-lone-requests=false, every request on its own executor's core;
#     peer modes: run.sh's, e.g. reuseport2_t1_tcmalloc, the strongest)
#   CONCURRENCY="1 4 8 16"  DURATION=10  WARMUP=3  ROUNDS=2  TIMEOUT=30 (seconds)
#   OUT=bench-out/text-<model>-<time>  SERVE_ARGS="" (extra `serve` flags)
# Leaves one line per step (results.jsonl), every step's `inferd bench` JSON, the server logs
# and inferd's /metrics in $OUT.
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
DURATION=${DURATION:-10}; DURATION=${DURATION%s}
WARMUP=${WARMUP:-3}; WARMUP=${WARMUP%s}
ROUNDS=${ROUNDS:-2}
TIMEOUT=${TIMEOUT:-30}; TIMEOUT=${TIMEOUT%s}
OUT=$(realpath -m "${OUT:-bench-out/text-${MODEL}-$(date +%Y%m%d-%H%M%S)}")
SERVE_ARGS=${SERVE_ARGS:-}
PY=/usr/bin/python3

die() { echo "bench_text: $*" >&2; exit 1; }
[ -x "$INFERD" ] || die "no $INFERD: build it first (make build)"
[ -f "$BENCH/$MODEL/config.yaml" ] || die "no $BENCH/$MODEL: run tools/make_text_models.py --bench $BENCH"
[ -f "$BENCH/peer/$MODEL.pt" ] || die "no $BENCH/peer/$MODEL.pt (the peer serves SentencePiece models only)"

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

harness() { /usr/bin/python3 -m tools.harness "$@"; }
trap 'harness stop "$OUT"/*.state; rm -rf "$TMP"' EXIT

{
  echo "model: $MODEL ($BENCH), texts: $(ls "$BENCH/texts" | wc -l) files"
  echo "date: $(date -u +%FT%TZ), cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) cpus"
  echo "inferd bench, $DURATION s per concurrency ($CONCURRENCY), warm-up $WARMUP s, rounds $ROUNDS"
  echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/setup.txt" >&2

# step SERVER C SECONDS [harness bench options]: the texts round robin, closed loop at C
step() {
  local server=$1 c=$2 seconds=$3; shift 3
  harness bench "$server" --binary "$INFERD" "$@" -- --model "$MODEL" --input "$BENCH/texts" \
    --concurrency "$c" --duration "$seconds" --warmup 0 --windows 1 --max-windows 1 \
    --timeout "$TIMEOUT" --no-progress > /dev/null
}
for round in $(seq "$ROUNDS"); do
  for cfg in $CONFIGS; do
    tag="$cfg.r$round"
    echo "== $cfg round $round, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
    if [ "${cfg#inferd}" != "$cfg" ]; then
      narrow=""; base=$cfg
      if [ "${cfg%_narrow}" != "$cfg" ]; then narrow="--widen-lone-requests=false"; base=${cfg%_narrow}; fi
      harness serve "$tag.server" --out "$OUT" --var SERVER --binary "$INFERD" \
        --store "$TMP/store${base#inferd}" -- $SERVE_ARGS $narrow
    else
      harness peer "$tag.server" --out "$OUT" --var SERVER --peers "$PEERS" --app text_app \
        --model-dir "$BENCH/peer" --mode "$cfg"
    fi
    . "$OUT/$tag.server.env"
    curl -sf -o /dev/null -H "Content-Type: text/plain" --data-binary @"$BENCH/texts/00.txt" \
      "http://127.0.0.1:$SERVER_HTTP/predictions/$MODEL" || die "the first request to $cfg failed"
    step "$OUT/$tag.server" 4 "$WARMUP"
    for c in $CONCURRENCY; do
      step "$OUT/$tag.server" "$c" "$DURATION" --json "$OUT/$tag.c$c.json" \
        --series inferd_padded_tokens_total --series inferd_real_tokens_total
      $PY - "$OUT/$tag.c$c.json" "$cfg" "$round" <<'PYEOF' | tee -a "$OUT/results.jsonl" >&2
import json, sys
report, cfg, rnd = json.load(open(sys.argv[1])), sys.argv[2], int(sys.argv[3])
s, h = report["steps"][0], report["harness"]
print(json.dumps({"config": cfg, "round": rnd, "c": s["concurrency"], "cpu_s": h["server_cpu_s"],
                  "padded_tokens": h["series"].get("inferd_padded_tokens_total", 0),
                  "real_tokens": h["series"].get("inferd_real_tokens_total", 0),
                  "requests": s["sent_total"], "failures": s["failures"],
                  "requests_per_s": s["requests_per_s"], "p50_ms": s["latency_ms"]["p50"],
                  "p90_ms": s["latency_ms"]["p90"], "p99_ms": s["latency_ms"]["p99"]}))
PYEOF
    done
    [ "${cfg#inferd}" != "$cfg" ] && curl -sf "http://127.0.0.1:$SERVER_METRICS/metrics" > "$OUT/$tag.metrics"
    harness stop "$OUT/$tag.server"
  done
done
$PY tools/bench_text_table.py "$OUT/results.jsonl" | tee "$OUT/table.md"
