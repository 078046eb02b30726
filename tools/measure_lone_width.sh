#!/usr/bin/env bash
# A lone request on every core (issue 37, part 3), checked on a served model: for each server
# (the branch's binary with --widen-lone-requests true and false; BEFORE's binary if given), its
# resident memory once ready, then `inferd bench` at c=1 and at c=8 while
# tools/sample_running_threads.py counts the server's threads in state R every millisecond, and
# /metrics' inferd_lone_wide_batches_total and inferd_compute_threads_peak after each.
#
#   tools/measure_lone_width.sh STORE MODEL TEXTS [BEFORE_BINARY]
#
# Environment (defaults): INFERD=build/inferd DURATION=10 (seconds per step)
#   OUT=bench-out/lone-<model>-<time>
# Leaves results.txt (one line per server and step) and the bench JSON and server logs in $OUT.
set -euo pipefail
if [ $# -lt 3 ]; then sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 2; fi
STORE=$(realpath "$1"); MODEL=$2; TEXTS=$(realpath "$3"); BEFORE=${4:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
INFERD=$(realpath "${INFERD:-build/inferd}")
DURATION=${DURATION:-10}
OUT=$(realpath -m "${OUT:-bench-out/lone-${MODEL}-$(date +%Y%m%d-%H%M%S)}")
mkdir -p "$OUT"
harness() { /usr/bin/python3 -m tools.harness "$@"; }
trap 'harness stop "$OUT"/*.state 2>/dev/null || true' EXIT
echo "date $(date -u +%FT%TZ) load $(cut -d' ' -f1-3 /proc/loadavg) $MODEL $STORE" | tee "$OUT/results.txt"
run() {  # NAME BINARY [serve flags]
  local name=$1 bin=$2; shift 2
  harness serve "$name" --out "$OUT" --var S --binary "$bin" --store "$STORE" -- --models "$MODEL" "$@"
  . "$OUT/$name.env"
  curl -sf -o /dev/null -H "Content-Type: text/plain" --data-binary @"$(ls "$TEXTS"/* | head -1)" \
    "http://127.0.0.1:$S_HTTP/predictions/$MODEL"
  echo "$name ready: $(harness proc "$S_PID")" | tee -a "$OUT/results.txt"
  for c in 1 8; do
    /usr/bin/python3 tools/sample_running_threads.py "$S_PID" --seconds "$((DURATION - 2))" \
      > "$OUT/$name.c$c.threads" &
    local sampler=$!
    harness bench "$OUT/$name" --binary "$INFERD" --json "$OUT/$name.c$c.json" -- --model "$MODEL" \
      --input "$TEXTS" --concurrency "$c" --duration "$DURATION" --warmup 0 --windows 1 \
      --max-windows 1 --timeout 120 --no-progress > /dev/null
    wait "$sampler"
    local wide peak
    wide=$(harness metric "http://127.0.0.1:$S_METRICS/metrics" inferd_lone_wide_batches_total || echo -)
    peak=$(harness metric "http://127.0.0.1:$S_METRICS/metrics" inferd_compute_threads_peak || echo -)
    /usr/bin/python3 - "$OUT/$name.c$c.json" "$OUT/$name.c$c.threads" "$name" "$c" "$wide" "$peak" <<'PY' | tee -a "$OUT/results.txt"
import json, sys
r, t = json.load(open(sys.argv[1]))["steps"][0], json.load(open(sys.argv[2]))
print(f"{sys.argv[3]} c={sys.argv[4]}: {r['requests_per_s']:.1f} req/s, p50 {r['latency_ms']['p50']:.0f} "
      f"P90 {r['latency_ms']['p90']:.0f} p99 {r['latency_ms']['p99']:.0f} ms; threads R per sample "
      f"(executors and their OpenMP threads) {t['running_prefixed']} max {t['max_prefixed']}, "
      f"all threads max {t['max_all']} ({t['samples']} samples); wide batches so far {sys.argv[5]}, "
      f"compute threads peak {sys.argv[6]}")
PY
  done
  harness stop "$OUT/$name"
}
run wide "$INFERD" --widen-lone-requests=true
run narrow "$INFERD" --widen-lone-requests=false
[ -n "$BEFORE" ] && run before "$(realpath "$BEFORE")"
echo "load at end $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/results.txt"
