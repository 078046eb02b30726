#!/usr/bin/env bash
# precision: fp32 vs auto (issue 26), side by side: load time of ResNet-50 (servers started
# alternately, ROUNDS times each, the "loaded ... in N ms" line of the torch backend), then
# tools/bench_ab.sh on ResNet-50 behind the image pipeline and on a transformer encoder
# (tools/make_precision_models.py --bench), each A = fp32 store, B = auto store.
#
#   tools/bench_precision.sh BINARY
#   env: OUT=bench-out/precision-<time> ROUNDS=3 DURATION=8 CONCS=8
#        R50=examples/model-store/resnet50 (the model folder)
# Needs a store with resnet50 (make_models.py --store examples/model-store --with-resnet50).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BIN=$(realpath "${1:?inferd binary}")
OUT=$(realpath -m "${OUT:-bench-out/precision-$(date +%Y%m%d-%H%M%S)}")
ROUNDS=${ROUNDS:-3}; DURATION=${DURATION:-8}; CONCS=${CONCS:-8}
R50=$(realpath "${R50:-examples/model-store/resnet50}")
mkdir -p "$OUT"
for p in fp32 auto; do
  d="$OUT/r50/$p/resnet50"; mkdir -p "$d/1"
  ln -sf "$R50/1/model.pt" "$d/1/model.pt"
  cp "$R50/labels.txt" "$d/"
  sed "s/^precision: .*/precision: $p/" "$R50/config.yaml" > "$d/config.yaml"
done
/usr/bin/python3 tools/make_precision_models.py --bench "$OUT/enc" > /dev/null 2>&1
# 64 different requests of 128 ids, sent in turn: one request repeated would
# let oneDNN's primitive cache (keyed on int8's per-call activation scale) serve
# every call from the cache, which real traffic never does.
mkdir -p "$OUT/enc_requests"
/usr/bin/python3 -c "
import json, random
random.seed(1)
for i in range(64):
    ids = [random.randrange(8000) for _ in range(128)]
    json.dump({'inputs': [{'name': 'ids', 'datatype': 'INT64', 'shape': [1, 128], 'data': ids}]},
              open('$OUT/enc_requests/%02d.json' % i, 'w'))"

# Load time: start, wait until ready, stop; fp32 and auto alternately.
harness() { /usr/bin/python3 -m tools.harness "$@"; }
trap 'harness stop "$OUT"/*.state' EXIT
for r in $(seq "$ROUNDS"); do
  for p in fp32 auto; do
    harness serve "load.$p.r$r" --out "$OUT" --binary "$BIN" --store "$OUT/r50/$p"
    harness stop "$OUT/load.$p.r$r"
  done
done
/usr/bin/python3 - "$OUT" "$ROUNDS" <<'PYEOF' | tee "$OUT/load.md"
import re, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
ms = {}
for p in ("fp32", "auto"):
    for r in range(1, rounds + 1):
        text = "".join(open(f"{out}/load.{p}.r{r}.{ext}").read() for ext in ("log", "stdout"))
        m = re.search(r"model 'resnet50': loaded \S+ in (\d+) ms", text)
        ms.setdefault(p, []).append(int(m.group(1)))
for p in ms:
    print(f"| resnet50 load, precision {p} | {' / '.join(map(str, ms[p]))} ms | median {statistics.median(ms[p])} ms |")
print(f"| auto / fp32 | | {statistics.median(ms['auto']) / statistics.median(ms['fp32']):.2f}x |")
PYEOF
grep -h "model 'resnet50': precision" "$OUT"/load.auto.r1.log "$OUT"/load.auto.r1.stdout | sed 's/^.*\] //' | tee "$OUT/r50_table.txt"

STORE_A="$OUT/r50/fp32" STORE_B="$OUT/r50/auto" MODEL=resnet50 CONCS="$CONCS" ROUNDS="$ROUNDS" \
  DURATION="$DURATION" WARM_S=10 OUT="$OUT/ab_r50" tools/bench_ab.sh "$BIN" "$BIN"
STORE_A="$OUT/enc/fp32" STORE_B="$OUT/enc/auto" MODEL=encoder IMAGE="$OUT/enc_requests" FORM=v2json \
  CONCS="$CONCS" ROUNDS="$ROUNDS" DURATION="$DURATION" WARM_S=10 OUT="$OUT/ab_enc" tools/bench_ab.sh "$BIN" "$BIN"
grep -h "model 'encoder': precision" "$OUT"/ab_enc/B.log | sed 's/^.*\] //' | tee "$OUT/enc_table.txt"
