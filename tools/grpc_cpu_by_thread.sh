#!/usr/bin/env bash
# Where the server's CPU goes per trivial request, gRPC against REST binary, side by side on one
# server (docs/performance/grpc.md): for each form, a closed loop at concurrency 1 on a
# model that does nothing; per thread name, utime and stime (/proc/PID/task/*/stat) over the step /
# requests, and the voluntary and involuntary context switches per request (/proc/PID/task/*/status;
# involuntary ones grow with the machine's load).
#
# With SYSCALLS=1, one more step per form under `strace -f -c` counts the server's system calls
# per request (strace slows the server; the counts, not the times, are the point).
#
#   tools/grpc_cpu_by_thread.sh   (env: INFERD=build/inferd DURATION=5 ROUNDS=2 SYSCALLS=0)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
INFERD=$(realpath "${INFERD:-$ROOT/build/inferd}")
DURATION=${DURATION:-5}
ROUNDS=${ROUNDS:-2}
TMP=$(mktemp -d)
harness() { PYTHONPATH="$ROOT" /usr/bin/python3 -m tools.harness "$@"; }
trap 'harness stop "$TMP/server"; rm -rf "$TMP"' EXIT
mkdir -p "$TMP/store/noop/1"
cat > "$TMP/make.py" <<'PYEOF'
import json, sys, torch
tmp = sys.argv[1]
class Identity(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x
torch.jit.script(Identity()).save(f"{tmp}/store/noop/1/model.pt")
head = json.dumps({"inputs": [{"name": "input", "datatype": "FP32", "shape": [1, 4],
                               "parameters": {"binary_data_size": 16}}],
                   "parameters": {"binary_data_output": True}}).encode()
import struct
open(f"{tmp}/noop.bin", "wb").write(head + struct.pack("<4f", 1, 2, 3, 4))
PYEOF
/usr/bin/python3 "$TMP/make.py" "$TMP"
cat > "$TMP/store/noop/config.yaml" <<'YAML'
backend: torchscript
max_batch_size: 1
inputs:  [{name: input, datatype: FP32, shape: [-1]}]
outputs: [{name: output, datatype: FP32, shape: [-1]}]
YAML
harness serve server --out "$TMP" --binary "$INFERD" --store "$TMP/store"
. "$TMP/server.env"

# snapshot: "name ticks vol invol" per thread (names are merged later)
snapshot() {
  for t in /proc/$SERVER_PID/task/*; do
    local stat name
    stat=$(cat "$t/stat" 2>/dev/null) || continue
    name=$(cat "$t/comm" 2>/dev/null | tr ' ' '_')
    echo "$(basename "$t") $name $(echo "${stat##*) }" | awk '{print $12, $13}') $(awk '/^voluntary_ctxt/ {v=$2} /^nonvoluntary_ctxt/ {n=$2} END {print v, n}' "$t/status" 2>/dev/null)"
  done
}
bench() {  # bench PROTOCOL SECONDS: the trivial model at c=1, report in $TMP/step.json
  harness bench "$TMP/server" --json "$TMP/step.json" -- --protocol "$1" --model noop \
    --form v2binary --input "$TMP/noop.bin" --concurrency 1 --duration "$2" --warmup 0 --windows 1 \
    --max-windows 1 --no-progress > /dev/null
}
step() {
  local form=$1 protocol=$2
  snapshot > "$TMP/before"
  bench "$protocol" "$DURATION"
  snapshot > "$TMP/after"
  /usr/bin/python3 - "$TMP" "$form" "$(getconf CLK_TCK)" "$(cut -d' ' -f1-3 /proc/loadavg)" <<'PYEOF'
import collections, json, sys
tmp, form, hz, load = sys.argv[1:]
hz = int(hz)
s = json.load(open(f"{tmp}/step.json"))["steps"][0]
def read(p):
    return {l.split()[0]: l.split()[1:] for l in open(p)}
b, a = read(f"{tmp}/before"), read(f"{tmp}/after")
user, sys_, vol, inv = (collections.Counter() for _ in range(4))
for tid, (name, ut, st, v, i) in a.items():
    u0, s0, v0, i0 = (int(x) for x in b.get(tid, [name, 0, 0, 0, 0])[1:])
    user[name] += int(ut) - u0
    sys_[name] += int(st) - s0
    vol[name] += int(v) - v0
    inv[name] += int(i) - i0
req = s["sent_total"]
print(f"{form}: {req} requests, {s['requests_per_s']:.0f} req/s, p50 {s['latency_ms']['p50']:.3f} ms, load {load}")
print(f"  {'thread':18s} {'user us':>8s} {'sys us':>7s} {'vol cs':>7s} {'invol cs':>8s}  (per request)")
us = lambda t: t / hz / req * 1e6
for name in sorted(user, key=lambda n: -(user[n] + sys_[n])):
    if user[name] + sys_[name] + vol[name] + inv[name] == 0: continue
    print(f"  {name:18s} {us(user[name]):8.1f} {us(sys_[name]):7.1f} {vol[name] / req:7.2f} {inv[name] / req:8.2f}")
U, S = sum(user.values()), sum(sys_.values())
print(f"  {'TOTAL':18s} {us(U):8.1f} {us(S):7.1f} {sum(vol.values()) / req:7.2f} {sum(inv.values()) / req:8.2f}"
      f"   user+sys {us(U + S):.1f} us")
PYEOF
}
for r in $(seq "$ROUNDS"); do
  step grpc grpc
  step rest-binary http
done
if [ "${SYSCALLS:-0}" = 1 ]; then
  for form in grpc rest-binary; do
    protocol=http; [ $form = grpc ] && protocol=grpc
    strace -f -c -o "$TMP/strace.txt" -p "$SERVER_PID" 2> /dev/null &
    STRACE_PID=$!
    sleep 1
    bench $protocol 3
    kill -INT $STRACE_PID; wait $STRACE_PID 2> /dev/null || true
    /usr/bin/python3 - "$TMP" "$form" <<'PYEOF'
import json, sys
tmp, form = sys.argv[1:]
n = json.load(open(f"{tmp}/step.json"))["steps"][0]["sent_total"]
rows = []
for line in open(f"{tmp}/strace.txt"):
    f = line.split()
    if len(f) >= 5 and f[3].isdigit() and not line.startswith("100.00"):
        rows.append((int(f[3]), f[-1]))
total = sum(c for c, _ in rows)
print(f"{form} under strace: {n} requests, {total / n:.1f} system calls per request: " +
      ", ".join(f"{name} {c / n:.2f}" for c, name in sorted(rows, reverse=True) if c / n >= 0.05))
PYEOF
  done
fi
