#!/usr/bin/env bash
# Models sharing a node (issue 24), two binaries side by side (A before, B after), ROUNDS rounds
# in which each step runs on A, then on B, so that the machine's drift hits both alike:
#   single   HEAVY alone at c=1 (`inferd bench`): its single-request latency, p50
#   heavy16  HEAVY alone at c=16: its throughput without company
#   flood    HEAVY at c=16 while a second `inferd bench` sends LIGHT at c=1: LIGHT's p50/p99 and
#            HEAVY's req/s in company
# Every step is `inferd bench` (tools/harness).
# Prints each round's figures, then the medians per binary and the goal ratios: LIGHT's p99 in the
# flood / HEAVY's single-request p50 (goal <= 1.5), HEAVY's req/s in the flood / alone (>= 0.95).
#
#   tools/bench_isolation.sh A_BINARY B_BINARY
#   env: STORE=bench-out/store (make it: tools/make_models.py --store DIR --with-resnet50)
#        HEAVY=resnet50 LIGHT=digits_cnn IMAGE=examples/images/cat.jpg
#        LIGHT_INPUT=examples/model-store/digits_cnn/samples/0000_4.png ROUNDS=3 DURATION=20
#        OUT=bench-out/isolation-<time>
#        HEAVY_TEXTS=DIR: HEAVY is a text model fed the .txt files of DIR round robin instead of IMAGE
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
harness() { /usr/bin/python3 -m tools.harness "$@"; }
trap 'harness stop "$OUT/A" "$OUT/B"' EXIT
for v in A B; do
  harness serve "$v" --out "$OUT" --binary "${!v}" --store "$STORE" -- --models "$HEAVY,$LIGHT"
done
step() {  # step V MODEL INPUT C SECONDS WARMUP JSON: one closed-loop step
  harness bench "$OUT/$1" --binary "$A" --json "$7" -- --model "$2" --input "$3" \
    --concurrency "$4" --duration "$5" --warmup "$6" --windows 1 --max-windows 1 --no-progress \
    > /dev/null
}
field() {  # field JSON KEY...: steps[0][KEY]... of an `inferd bench` report
  /usr/bin/python3 -c 'import functools, json, sys
print(functools.reduce(lambda v, k: v[k], sys.argv[2:], json.load(open(sys.argv[1]))["steps"][0]))' "$@"
}
light() {  # light V SECONDS -> "p50 p99" in ms
  step "$1" "$LIGHT" "$LIGHT_INPUT" 1 "$2" 1 "$OUT/light.json"
  echo "$(field "$OUT/light.json" latency_ms p50) $(field "$OUT/light.json" latency_ms p99)"
}
single() {  # single V -> p50 ms of HEAVY alone at c=1
  step "$1" "$HEAVY" "$HEAVY_INPUT" 1 8 2 "$OUT/single.json"
  field "$OUT/single.json" latency_ms p50
}
flood() {  # flood V SECONDS JSON -> HEAVY's req/s at c=16 into JSON
  step "$1" "$HEAVY" "$HEAVY_INPUT" 16 "$2" 0 "$3"
}
echo "round binary single_p50_ms heavy_alone_rps heavy_flood_rps light_p50_ms light_p99_ms" | tee "$OUT/rounds.txt"
for r in $(seq "$ROUNDS"); do
  for v in A B; do
    s=$(single $v)
    flood $v "$DURATION" "$OUT/alone.json"
    flood $v $((DURATION + 4)) "$OUT/flood.json" &
    fpid=$!
    sleep 2
    lat=$(light $v "$DURATION")
    wait $fpid
    echo "$r $v $s $(field "$OUT/alone.json" requests_per_s) $(field "$OUT/flood.json" requests_per_s) $lat" |
      tee -a "$OUT/rounds.txt"
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
