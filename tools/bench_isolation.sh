#!/usr/bin/env bash
# Models sharing a node (issue 24), two binaries side by side (A before, B after), ROUNDS rounds
# in which each step runs on A, then on B, so that the machine's drift hits both alike:
#   single   HEAVY alone at c=1 (`inferd bench`): its single-request latency, p50
#   heavy16  HEAVY alone at c=16 (wrk): its throughput without company
#   flood    HEAVY at c=16 (wrk) while `inferd bench` sends LIGHT at c=1: LIGHT's p50/p99 and
#            HEAVY's req/s in company
# Prints each round's figures, then the medians per binary and the goal ratios: LIGHT's p99 in the
# flood / HEAVY's single-request p50 (goal <= 1.5), HEAVY's req/s in the flood / alone (>= 0.95).
#
#   tools/bench_isolation.sh A_BINARY B_BINARY
#   env: STORE=bench-out/store (make it: tools/make_models.py --store DIR --with-resnet50)
#        HEAVY=resnet50 LIGHT=digits_cnn IMAGE=examples/images/cat.jpg
#        LIGHT_INPUT=examples/model-store/digits_cnn/samples/0000_4.png ROUNDS=3 DURATION=20
#        OUT=bench-out/isolation-<time>
#        HEAVY_TEXTS=DIR: HEAVY is a text model fed the .txt files of DIR in turn instead of IMAGE
#          (e.g. STORE with deberta_small, HEAVY=deberta_small HEAVY_TEXTS=/tmp/text-bench/texts)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
A=$(realpath "${1:?A binary}"); B=$(realpath "${2:?B binary}")
STORE=$(realpath "${STORE:-bench-out/store}")
HEAVY=${HEAVY:-resnet50}; LIGHT=${LIGHT:-digits_cnn}
IMAGE=$(realpath "${IMAGE:-examples/images/cat.jpg}")
LIGHT_INPUT=$(realpath "${LIGHT_INPUT:-examples/model-store/digits_cnn/samples/0000_4.png}")
HEAVY_TEXTS=${HEAVY_TEXTS:+$(realpath "$HEAVY_TEXTS")}
HEAVY_INPUT=${HEAVY_TEXTS:-$IMAGE}
ROUNDS=${ROUNDS:-3}; DURATION=${DURATION:-20}
OUT=$(realpath -m "${OUT:-bench-out/isolation-$(date +%Y%m%d-%H%M%S)}")
mkdir -p "$OUT"
command -v wrk > /dev/null || { echo "bench_isolation: wrk is missing: apt-get install wrk" >&2; exit 1; }
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
for v in A B; do
  bin=${!v}
  "$bin" serve --model-store "$STORE" --models "$HEAVY,$LIGHT" --bind 127.0.0.1 --http-port 0 \
    --management-port 0 --metrics-port 0 --grpc-port 0 > "$OUT/$v.stdout" 2> "$OUT/$v.log" &
  pids+=($!)
done
port() { sed -n 's/.*listening http=\([0-9]*\).*/\1/p' "$OUT/$1.stdout"; }
for v in A B; do
  for _ in $(seq 1200); do grep -q 'inferd: listening' "$OUT/$v.stdout" && break; sleep 0.1; done
  for _ in $(seq 1800); do curl -sf -o /dev/null "http://127.0.0.1:$(port $v)/v2/health/ready" && break; sleep 0.1; done
done
light() {  # light V SECONDS -> "p50 p99" in ms
  "$A" bench --url "http://127.0.0.1:$(port "$1")" --model "$LIGHT" --input "$LIGHT_INPUT" \
    --concurrency 1 --duration "$2" --warmup 1 --windows 1 --max-windows 1 --no-progress \
    --json "$OUT/light.json" > /dev/null
  /usr/bin/python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["steps"][0]["latency_ms"]; print(l["p50"], l["p99"])' "$OUT/light.json"
}
single() {  # single V -> p50 ms of HEAVY alone at c=1
  "$A" bench --url "http://127.0.0.1:$(port "$1")" --model "$HEAVY" --input "$HEAVY_INPUT" \
    --concurrency 1 --duration 8 --warmup 2 --windows 1 --max-windows 1 --no-progress \
    --json "$OUT/single.json" > /dev/null
  /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["steps"][0]["latency_ms"]["p50"])' "$OUT/single.json"
}
flood() {  # flood V SECONDS -> HEAVY's ok req/s under wrk at c=16
  local feed=(env WRK_BODY_FILE="$IMAGE" WRK_CONTENT_TYPE=image/jpeg) script=tools/wrk_post_file.lua
  if [ -n "$HEAVY_TEXTS" ]; then feed=(env WRK_TEXT_DIR="$HEAVY_TEXTS"); script=tools/wrk_post_texts.lua; fi
  "${feed[@]}" wrk -t1 -c16 -d"$2s" --timeout 30s \
    -s "$script" "http://127.0.0.1:$(port "$1")/predictions/$HEAVY" 2> /dev/null |
    /usr/bin/python3 -c 'import json,sys; print([json.loads(l[9:]) for l in sys.stdin if l.startswith("WRK_JSON ")][-1]["ok_requests_per_s"])'
}
echo "round binary single_p50_ms heavy_alone_rps heavy_flood_rps light_p50_ms light_p99_ms" | tee "$OUT/rounds.txt"
for r in $(seq "$ROUNDS"); do
  for v in A B; do
    s=$(single $v)
    alone=$(flood $v "$DURATION")
    flood $v $((DURATION + 4)) > "$OUT/flood.txt" &
    fpid=$!
    sleep 2
    lat=$(light $v "$DURATION")
    wait $fpid
    echo "$r $v $s $alone $(cat "$OUT/flood.txt") $lat" | tee -a "$OUT/rounds.txt"
  done
done
/usr/bin/python3 - "$OUT/rounds.txt" <<'EOF'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1]).read().splitlines()[1:]]
for v in "AB":
    r = [list(map(float, x[2:])) for x in rows if x[1] == v]
    med = [st.median(c) for c in zip(*r)]
    single, alone, flood, p50, p99 = med
    print(f"{v}: single p50 {single:.1f} ms | heavy alone {alone:.1f} req/s, in the flood {flood:.1f} "
          f"({flood / alone:.2f}x) | light p50 {p50:.1f} ms p99 {p99:.1f} ms = {p99 / single:.2f}x "
          f"the heavy single-request latency")
EOF
