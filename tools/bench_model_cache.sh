#!/usr/bin/env bash
# The model-cache figures of docs/performance/model-cache.md (issue 10), one command:
#   1. 1,000 generated models, budget = 10% of their footprints, Zipf(1.1) at
#      LOW_RATE req/s (default 4): about 1.4 loads/s, so loads seldom queue
#      (each costs 15-190 ms of one load thread; first loads run one at a
#      time, because each is measured alone): the cold-start goal is judged here.
#   2. The same at HIGH_RATE (default 20): about 7 loads/s, loads queue; shows
#      behaviour under overload (hits, RSS, failures).
#   3. The footprint measured for each example model.
# Writes OUT/low, OUT/high (report.md, rss.svg, results.json, logs) and
# OUT/footprints.md; prints the tables. About 7 minutes on a quiet 2-core machine
# once /tmp/inferd-many-models exists (its first generation adds 2-4 minutes).
#   tools/bench_model_cache.sh   (env: LOW_RATE=4 LOW_DURATION=75 HIGH_RATE=20
#       HIGH_DURATION=45 OUT=/tmp/bench-model-cache BINARY=build/inferd)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
OUT=${OUT:-/tmp/bench-model-cache}
BINARY=${BINARY:-build/inferd}
mkdir -p "$OUT"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 tools/bench_model_cache.py --binary "$BINARY" --rate "${LOW_RATE:-4}" \
  --duration "${LOW_DURATION:-75}" --out "$OUT/low"
/usr/bin/python3 tools/bench_model_cache.py --binary "$BINARY" --rate "${HIGH_RATE:-20}" \
  --duration "${HIGH_DURATION:-45}" --out "$OUT/high"
/usr/bin/python3 tools/bench_model_cache.py footprints --binary "$BINARY" --out "$OUT/fp" \
  | tee "$OUT/footprints.md"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
