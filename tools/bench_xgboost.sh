#!/usr/bin/env bash
# XGBoost through inferd against the Python baseline (FastAPI + python3-xgboost:
# ../shared/peers/fastapi_torch/xgb_app.py under gunicorn, 2 workers x 1 thread),
# side by side on the same model.json and the same KServe v2 JSON body, with `inferd bench`
# (tools/harness) at concurrency C, ROUNDS interleaved rounds; prints
# each round, the medians and the ratio, after checking that both servers
# answer the same probabilities as python3-xgboost (1e-6).
#
#   tools/bench_xgboost.sh            (wine_xgb of examples/model-store; made if missing)
#
# Environment (defaults): INFERD=build/inferd  PEERS=../shared/peers/fastapi_torch
#   C=8  DURATION=10 (seconds)  ROUNDS=3  ROWS=1 (rows per request)  OUT=bench-out/xgboost-<time>
# Needs python3-fastapi python3-uvicorn gunicorn and python3-xgboost (the baseline).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
INFERD=$(realpath "${INFERD:-build/inferd}")
PEERS=$(realpath "${PEERS:-$ROOT/../shared/peers/fastapi_torch}")
C=${C:-8}
DURATION=${DURATION:-10}; DURATION=${DURATION%s}
ROUNDS=${ROUNDS:-3}
ROWS=${ROWS:-1}
OUT=$(realpath -m "${OUT:-bench-out/xgboost-$(date +%Y%m%d-%H%M%S)}")
PY=/usr/bin/python3
MODEL=wine_xgb
mkdir -p "$OUT/store" "$OUT/peer"

$PY tools/make_xgboost_models.py --store "$OUT/store" --peer-dir "$OUT/peer" >&2
$PY - "$OUT" "$ROWS" <<'PYEOF'
import json, sys
out, rows = sys.argv[1], int(sys.argv[2])
x = json.load(open(f"{out}/store/wine_xgb/1/holdout.json"))["rows"][:rows]
body = {"inputs": [{"name": "features", "datatype": "FP32", "shape": [len(x), 13],
                    "data": [v for r in x for v in r]}]}
json.dump(body, open(f"{out}/body.json", "w"))
PYEOF

harness() { /usr/bin/python3 -m tools.harness "$@"; }
trap 'harness stop "$OUT/inferd" "$OUT/python"' EXIT
harness serve inferd --out "$OUT" --binary "$INFERD" --store "$OUT/store"
harness peer python --out "$OUT" --peers "$PEERS" --app xgb_app --model-dir "$OUT/peer" --mode gunicorn2_t1
. "$OUT/inferd.env"
. "$OUT/python.env"

# Same answers as python3-xgboost, from both servers.
$PY - "$OUT" "$INFERD_HTTP" "$PYTHON_HTTP" <<'PYEOF'
import json, sys, urllib.request
import numpy as np, xgboost as xgb
out, ports = sys.argv[1], {"inferd": sys.argv[2], "python": sys.argv[3]}
body = open(f"{out}/body.json", "rb").read()
inp = json.loads(body)["inputs"][0]
x = np.asarray(inp["data"], dtype=np.float32).reshape(inp["shape"])
b = xgb.Booster(); b.load_model(f"{out}/store/wine_xgb/1/model.json")
ref = b.predict(xgb.DMatrix(x))
for name, port in ports.items():
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v2/models/wine_xgb/infer", body,
                                 {"Content-Type": "application/json"})
    o = json.load(urllib.request.urlopen(req))["outputs"][0]
    got = np.asarray(o["data"], dtype=np.float32).reshape(o["shape"])
    err = float(np.abs(got - ref).max())
    print(f"{name}: max |p - python3-xgboost| = {err:.2e}")
    assert err <= 1e-6, name
PYEOF

run() {  # run NAME ROUND -> "req/s p50 p99 failures"
  harness bench "$OUT/$1" --binary "$INFERD" --json "$OUT/bench-$1-$2.json" -- --model "$MODEL" \
    --form v2json --input "$OUT/body.json" --concurrency "$C" --duration "$DURATION" --warmup 1 \
    --windows 1 --max-windows 1 --no-progress > /dev/null
  $PY -c 'import json,sys; s=json.load(open(sys.argv[1]))["steps"][0]; l=s["latency_ms"]
print(s["requests_per_s"], l["p50"], l["p99"], s["failures"])' "$OUT/bench-$1-$2.json"
}
printf "%-6s %-7s %12s %9s %9s %7s\n" round server "req/s" "p50 ms" "p99 ms" failed
: > "$OUT/rounds.tsv"
for r in $(seq "$ROUNDS"); do
  for name in inferd python; do
    read -r rps p50 p99 err < <(run "$name" "$r")
    printf "%-6s %-7s %12.1f %9.2f %9.2f %7s\n" "$r" "$name" "$rps" "$p50" "$p99" "$err"
    printf "%s\t%s\t%s\t%s\t%s\n" "$r" "$name" "$rps" "$p50" "$p99" >> "$OUT/rounds.tsv"
  done
done
$PY - "$OUT/rounds.tsv" <<'PYEOF'
import statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().split("\n") if l]
med = {n: statistics.median(float(r[2]) for r in rows if r[1] == n) for n in ("inferd", "python")}
ratios = [float(a[2]) / float(b[2]) for a, b in zip(rows[0::2], rows[1::2])]
print(f"median req/s: inferd {med['inferd']:.1f}, python {med['python']:.1f}; "
      f"ratio of medians {med['inferd'] / med['python']:.2f}x; per-round ratios "
      + ", ".join(f"{x:.2f}x" for x in ratios))
PYEOF
echo "everything in $OUT" >&2
