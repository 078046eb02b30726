#!/usr/bin/env bash
# A custom-handler TorchServe archive at c=8: inferd (handler processes, its scheduler's batches)
# against the same handler behind the Python peer (FastAPI, tools/peer_handler/handler_app.py,
# started by ../shared/peers/fastapi_torch/run.sh in its gunicorn2_t1_tcmalloc and
# reuseport2_t1_tcmalloc modes: 2 workers x 1 torch thread, tcmalloc). All three servers run
# side by side; each round measures each in turn (interleaved), ROUNDS rounds; the table is
# tools/bench_compare.py's (medians over rounds, ratios against inferd).
#
#   tools/bench_torchserve.sh            (from the repository root; OUT=bench-out/torchserve-<time>)
#
# The archive: tests/e2e/mar_handlers/custom_handler.py (a BaseHandler subclass: JSON rows in,
# stack, the model, JSON out) over a TorchScript MLP 4 -> HIDDEN -> HIDDEN -> 10, as
# model-config.yaml: batchSize 8, maxBatchDelay MAX_DELAY_MS, 2 workers. Each request is one
# JSON row {"x": [4 numbers]}.
# Environment (defaults): INFERD=build/inferd PEERS=../shared/peers/fastapi_torch ROUNDS=3
#   CONCURRENCY=8 DURATION=5 WARMUP=2 HIDDEN=512 MAX_DELAY_MS=2 MODES="gunicorn2_t1_tcmalloc reuseport2_t1_tcmalloc"
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
INFERD=$(realpath "${INFERD:-build/inferd}")
PEERS=$(realpath "${PEERS:-$ROOT/../shared/peers/fastapi_torch}")
ROUNDS=${ROUNDS:-3}
CONCURRENCY=${CONCURRENCY:-8}
DURATION=${DURATION:-5}
WARMUP=${WARMUP:-2}
HIDDEN=${HIDDEN:-512}
MAX_DELAY_MS=${MAX_DELAY_MS:-2}
MODES=${MODES:-"gunicorn2_t1_tcmalloc reuseport2_t1_tcmalloc"}
OUT=$(realpath -m "${OUT:-bench-out/torchserve-$(date +%Y%m%d-%H%M%S)}")
PY=/usr/bin/python3
H="$PY -m tools.harness"
mkdir -p "$OUT/work" "$OUT/store" "$OUT/peer-app"
trap '$H stop "$OUT"/*.state 2>/dev/null || true' EXIT

$PY - "$OUT/work" "$HIDDEN" "$MAX_DELAY_MS" <<'PYEOF'
import json, sys, torch
work, hidden, delay = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.manual_seed(0)
mlp = torch.nn.Sequential(torch.nn.Linear(4, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, hidden),
                          torch.nn.ReLU(), torch.nn.Linear(hidden, 10)).eval()
torch.jit.script(mlp).save(f"{work}/mlp.pt")
open(f"{work}/model-config.yaml", "w").write(
    f"batchSize: 8\nmaxBatchDelay: {delay}\nminWorkers: 2\nmaxWorkers: 2\nresponseTimeout: 120\n")
json.dump({"x": [0.1, -0.2, 0.3, 0.4]}, open(f"{work}/row.json", "w"))
PYEOF
$PY tools/make_mar.py --model-name bench --serialized-file "$OUT/work/mlp.pt" \
  --handler tests/e2e/mar_handlers/custom_handler.py --config-file "$OUT/work/model-config.yaml" \
  --export-path "$OUT/store" --force
# The peer serves the same archive's files: unpacked, with run.sh and reuseport.py linked beside
# the handler app (run.sh puts its own folder on PYTHONPATH), so that run.sh's recipes run as they are.
$PY -c "import zipfile, sys; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" \
  "$OUT/store/bench.mar" "$OUT/peer-model"
ln -sf "$PEERS/run.sh" "$PEERS/reuseport.py" "$ROOT/tools/peer_handler/handler_app.py" "$OUT/peer-app/"

export INFERD_MAR_CACHE="$OUT/mar-cache"
$H serve inferd --out "$OUT" --binary "$INFERD" --store "$OUT/store" --ready-path /v2/models/bench/ready
configs="inferd"
for mode in $MODES; do
  $H peer "$mode" --out "$OUT" --peers "$OUT/peer-app" --app handler_app \
    --model-dir "$OUT/peer-model" --mode "$mode"
  configs="$configs $mode"
done
echo "$configs" | tr ' ' '\n' > "$OUT/configs.txt"
echo "load average before: $(cat /proc/loadavg)" | tee "$OUT/loadavg.txt"
for r in $(seq 1 "$ROUNDS"); do
  for cfg in $configs; do
    extra=()
    [ "$cfg" = inferd ] && extra=(--server-metrics)
    $H bench "$OUT/$cfg" --json "$OUT/$cfg.r$r.json" "${extra[@]}" -- --model bench --form raw \
      --input "$OUT/work/row.json" --concurrency "$CONCURRENCY" --duration "$DURATION" \
      --warmup "$WARMUP" --windows 3 --max-windows 6 --no-progress > "$OUT/$cfg.r$r.txt"
  done
done
echo "load average after: $(cat /proc/loadavg)" | tee -a "$OUT/loadavg.txt"
$PY -m tools.harness metric "http://127.0.0.1:$(. "$OUT/inferd.env"; echo "$INFERD_METRICS")/metrics" \
  inferd_worker_resident_bytes > "$OUT/inferd_worker_resident_bytes.txt" || true
$PY tools/bench_compare.py "$OUT" --reference inferd | tee "$OUT/table.md"
