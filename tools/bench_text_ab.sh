#!/usr/bin/env bash
# Two inferd binaries side by side on a text model (A before, B after a change): ROUNDS rounds,
# in each A then B, each a fresh server on the model alone, a 3 s warm-up, then `inferd bench`
# sending the texts round robin at every concurrency; prints req/s, p99, the server's CPU ms per
# request and the forwards it counted (inferd_batch_size_count).
#
#   tools/bench_text_ab.sh A_BINARY B_BINARY BENCH_DIR MODEL
#   e.g. tools/bench_text_ab.sh /tmp/old/build/inferd build/inferd /tmp/text-bench deberta_small
#   env: ROUNDS=3 CONCURRENCY="8 16" DURATION=10 OUT=bench-out/text-ab-<time>
set -euo pipefail
cd "$(dirname "$0")/.."
A=$(realpath "${1:?A binary}"); B=$(realpath "${2:?B binary}"); BENCH=$(realpath "${3:?bench dir}")
MODEL=${4:?model}
ROUNDS=${ROUNDS:-3}; CONCURRENCY=${CONCURRENCY:-"8 16"}; DURATION=${DURATION:-10}; DURATION=${DURATION%s}
OUT=$(realpath -m "${OUT:-bench-out/text-ab-$(date +%Y%m%d-%H%M%S)}")
mkdir -p "$OUT/store"
cp -as "$BENCH/$MODEL" "$OUT/store/$MODEL"
harness() { /usr/bin/python3 -m tools.harness "$@"; }
trap 'harness stop "$OUT"/*.state' EXIT
send() {  # send SERVER C SECONDS [harness bench options]
  local server=$1 c=$2 seconds=$3; shift 3
  harness bench "$server" --binary "$A" "$@" -- --model "$MODEL" --input "$BENCH/texts" \
    --concurrency "$c" --duration "$seconds" --warmup 0 --windows 1 --max-windows 1 --no-progress \
    > /dev/null
}
{
echo "round binary c req/s p99_ms cpu_ms_per_request forwards"
for r in $(seq "$ROUNDS"); do
  for v in A B; do
    harness serve "$v.r$r" --out "$OUT" --binary "${!v}" --store "$OUT/store"
    send "$OUT/$v.r$r" 8 3
    for c in $CONCURRENCY; do
      send "$OUT/$v.r$r" "$c" "$DURATION" --json "$OUT/$v.r$r.c$c.json" \
        --series "inferd_batch_size_count{model=$MODEL}"
      /usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1])); s, h = d["steps"][0], d["harness"]
print(sys.argv[2], sys.argv[3], s["concurrency"], round(s["requests_per_s"], 1),
      round(s["latency_ms"]["p99"]), round(h["server_cpu_s"] * 1000 / max(1, s["sent_total"]), 2),
      int(sum(h["series"].values())))' "$OUT/$v.r$r.c$c.json" "$r" "$v"
    done
    harness stop "$OUT/$v.r$r"
  done
done
} | tee "$OUT/rounds.txt"
