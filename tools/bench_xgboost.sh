#!/usr/bin/env bash
# XGBoost through inferd against the Python baseline (FastAPI + python3-xgboost:
# ../shared/peers/fastapi_torch/xgb_app.py under gunicorn, 2 workers x 1 thread),
# side by side on the same model.json and the same KServe v2 JSON body, with wrk
# (an independent client) at concurrency C, ROUNDS interleaved rounds; prints
# each round, the medians and the ratio, after checking that both servers
# answer the same probabilities as python3-xgboost (1e-6).
#
#   tools/bench_xgboost.sh            (wine_xgb of examples/model-store; made if missing)
#
# Environment (defaults): INFERD=build/inferd  PEERS=../shared/peers/fastapi_torch
#   C=8  DURATION=10s  ROUNDS=3  ROWS=1 (rows per request)  OUT=bench-out/xgboost-<time>
# Needs python3-fastapi python3-uvicorn gunicorn (the baseline only) and wrk.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
INFERD=$(realpath "${INFERD:-build/inferd}")
PEERS=$(realpath "${PEERS:-$ROOT/../shared/peers/fastapi_torch}")
C=${C:-8}
DURATION=${DURATION:-10s}
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

pids=()
cleanup() { for p in "${pids[@]}"; do kill -- -"$p" 2>/dev/null || true; done; }
trap cleanup EXIT

setsid "$INFERD" serve --model-store "$OUT/store" --http-port 18471 --management-port 18472 \
  --metrics-port 18473 --grpc-port 0 > "$OUT/inferd.stdout" 2> "$OUT/inferd.stderr" &
pids+=($!)
APP=xgb_app setsid bash "$PEERS/run.sh" "$OUT/peer" 18474 gunicorn2_t1 > "$OUT/peer.log" 2>&1 &
pids+=($!)
for port in 18471 18474; do
  for _ in $(seq 300); do
    curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' --data @"$OUT/body.json" \
      "http://127.0.0.1:$port/v2/models/$MODEL/infer" && break
    sleep 0.2
  done
done

# Same answers as python3-xgboost, from both servers.
$PY - "$OUT" <<'PYEOF'
import json, sys, urllib.request
import numpy as np, xgboost as xgb
out = sys.argv[1]
body = open(f"{out}/body.json", "rb").read()
inp = json.loads(body)["inputs"][0]
x = np.asarray(inp["data"], dtype=np.float32).reshape(inp["shape"])
b = xgb.Booster(); b.load_model(f"{out}/store/wine_xgb/1/model.json")
ref = b.predict(xgb.DMatrix(x))
for name, port in (("inferd", 18471), ("python", 18474)):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v2/models/wine_xgb/infer", body,
                                 {"Content-Type": "application/json"})
    o = json.load(urllib.request.urlopen(req))["outputs"][0]
    got = np.asarray(o["data"], dtype=np.float32).reshape(o["shape"])
    err = float(np.abs(got - ref).max())
    print(f"{name}: max |p - python3-xgboost| = {err:.2e}")
    assert err <= 1e-6, name
PYEOF

export WRK_BODY_FILE="$OUT/body.json" WRK_CONTENT_TYPE=application/json
run() {  # name port -> req/s
  wrk -t2 -c"$C" -d"$DURATION" --latency -s tools/wrk_post_file.lua \
    "http://127.0.0.1:$2/v2/models/$MODEL/infer" > "$OUT/wrk-$1-$3.txt"
  grep WRK_JSON "$OUT/wrk-$1-$3.txt" | sed 's/^WRK_JSON //'
}
printf "%-6s %-7s %12s %9s %9s %7s\n" round server "req/s" "p50 ms" "p99 ms" errors
: > "$OUT/rounds.tsv"
for r in $(seq "$ROUNDS"); do
  for s in inferd:18471 python:18474; do
    name=${s%%:*} port=${s##*:}
    j=$(run "$name" "$port" "$r")
    read -r rps p50 p99 err < <($PY -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["ok_requests_per_s"], d["p50_ms"], d["p99_ms"], d["errors"])' "$j")
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
