#!/usr/bin/env bash
# The cost of `isolation: process`: one server, the same TorchScript MLP (64 -> 512 -> 512 -> 10,
# batches up to 8, 2 instances x 1 thread) in the server (mlp) and in worker processes
# (mlp_proc), v2 JSON at c=1 and c=8, 3 interleaved rounds, medians (docs/performance/torchserve.md).
#   tools/bench_isolation_process.sh     (OUT=bench-out/isolation-cost)
set -euo pipefail
cd "$(dirname "$0")/.."
O=$(realpath -m "${OUT:-bench-out/isolation-cost}")
rm -rf "$O" && mkdir -p "$O/store"
H="/usr/bin/python3 -m tools.harness"
trap '$H stop "$O"/*.state 2>/dev/null || true' EXIT
/usr/bin/python3 - "$O" <<'PY'
import json, os, sys, torch
o = sys.argv[1]
torch.manual_seed(0)
m = torch.jit.script(torch.nn.Sequential(
    torch.nn.Linear(64, 512), torch.nn.ReLU(), torch.nn.Linear(512, 512), torch.nn.ReLU(),
    torch.nn.Linear(512, 10)).eval())
for name, extra in (("mlp", ""), ("mlp_proc", "isolation: process\n")):
    os.makedirs(f"{o}/store/{name}/1")
    m.save(f"{o}/store/{name}/1/model.pt")
    open(f"{o}/store/{name}/config.yaml", "w").write(
        "max_batch_size: 8\ndynamic_batching: {max_queue_delay_us: 500, calibrate: false}\n"
        "instances: {count: 2, threads: 1}\nvariants: frozen\n"
        "inputs: [{name: x, datatype: FP32, shape: [64]}]\n" + extra)
json.dump({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 64],
                       "data": [0.01 * i for i in range(64)]}]}, open(f"{o}/req.json", "w"))
PY
$H serve srv --out "$O" --store "$O/store" --ready-path /v2/models/mlp_proc/ready
echo "load average before: $(cat /proc/loadavg)"
for r in 1 2 3; do for m in mlp mlp_proc; do
  $H bench "$O/srv" --json "$O/$m.r$r.json" --server-metrics -- --model $m --form v2json \
    --input "$O/req.json" --concurrency 1,8 --duration 4 --warmup 1 --windows 3 --max-windows 5 \
    --no-progress > /dev/null
done; done
echo "load average after: $(cat /proc/loadavg)"
/usr/bin/python3 - "$O" <<'PY'
import json, statistics, sys
o = sys.argv[1]
print("model     step  req/s  p50_ms  p99_ms  compute_us_per_request")
for m in ("mlp", "mlp_proc"):
    runs = [json.load(open(f"{o}/{m}.r{r}.json")) for r in (1, 2, 3)]
    for i, step in enumerate(runs[0]["steps"]):
        med = lambda f: statistics.median(f(x["steps"][i]) for x in runs)
        print(f"{m:9} {step['label']:5} {med(lambda s: s['requests_per_s']):6.0f}  "
              f"{med(lambda s: s['latency_ms']['p50']):6.3f}  {med(lambda s: s['latency_ms']['p99']):6.3f}  "
              f"{med(lambda s: s['server']['compute_us']):6.1f}")
PY
