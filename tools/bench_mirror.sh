#!/usr/bin/env bash
# Traffic mirroring's cost to the primary (issue 27, docs/performance/mirroring.md): one server with the
# models of tools/make_mirror_models.py, the mirror switched on and off through the management
# API between steps, ROUNDS interleaved rounds, medians:
#   p99   c=4:  no mirror  vs  10% mirrored to mirror_slow (SLOW_ITERS loop steps; the script
#               prints its measured compute time against the primary's)
#   req/s c=8:  no mirror  vs  10% mirrored to mirror_mlp_copy (the same model)
# The load generator is `inferd bench` (C++, closed loop, one v2 binary request of 1 row).
#
#   tools/bench_mirror.sh [BINARY]
#   env: ROUNDS=5 DURATION=5 SLOW_ITERS=1500 MAX_IN_FLIGHT=8 OUT=bench-out/mirror-<time>
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BIN=$(realpath "${1:-build/inferd}")
ROUNDS=${ROUNDS:-5}; DURATION=${DURATION:-5}; SLOW_ITERS=${SLOW_ITERS:-1500}
MAX_IN_FLIGHT=${MAX_IN_FLIGHT:-8}
OUT=$(realpath -m "${OUT:-bench-out/mirror-$(date +%Y%m%d-%H%M%S)}")
mkdir -p "$OUT/store"
/usr/bin/python3 tools/make_mirror_models.py --store "$OUT/store" --slow-iters "$SLOW_ITERS"
/usr/bin/python3 - "$OUT/request.bin" <<'PYEOF'
import json, struct, sys
x = [0.01 * i for i in range(16)]
head = json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 16],
                               "parameters": {"binary_data_size": 64}}]}).encode()
open(sys.argv[1], "wb").write(head + struct.pack("<16f", *x))
PYEOF
harness() { /usr/bin/python3 -m tools.harness "$@"; }
trap 'harness stop "$OUT/server"' EXIT
harness serve server --out "$OUT" --binary "$BIN" --store "$OUT/store"
. "$OUT/server.env"
mirror() {  # mirror off | mirror TO
  if [ "$1" = off ]; then
    curl -s -o /dev/null -X DELETE "http://127.0.0.1:$SERVER_MANAGEMENT/models/mirror_mlp/mirror"
  else
    curl -sf -o /dev/null -X PUT "http://127.0.0.1:$SERVER_MANAGEMENT/models/mirror_mlp/mirror" \
      -d "{\"to\": \"$1\", \"fraction\": 0.1, \"max_in_flight\": $MAX_IN_FLIGHT}"
  fi
}
bench() {  # bench C SECONDS JSON: one step, with the server's CPU over it in JSON's "harness"
  harness bench "$OUT/server" ${3:+--json "$3"} -- --model mirror_mlp --form v2binary \
    --input "$OUT/request.bin" --concurrency "$1" --duration "$2" --warmup 1 --windows 1 \
    --max-windows 1 --no-progress > /dev/null
}
report() { curl -s "http://127.0.0.1:$SERVER_HTTP/v2/models/mirror_mlp/mirror" > "$1"; }
step() { bench "$2" "$DURATION" "$OUT/$1.json"; }  # step NAME C: one measured step
# Warm-up, and the slow candidate's cost against the primary's (server-side compute).
bench 4 5 ""
mirror mirror_slow; bench 4 5 ""; report "$OUT/warm_slow.json"; mirror off
# Odd rounds measure "off" first, even rounds second (ABBA): an order effect hits both alike.
pair() {  # pair ROUND CANDIDATE NAME_OFF NAME_ON C
  if [ $(( $1 % 2 )) = 1 ]; then
    mirror off; step "$3.r$1" "$5"; mirror "$2"; step "$4.r$1" "$5"; report "$OUT/$4.r$1.report.json"
  else
    mirror "$2"; step "$4.r$1" "$5"; report "$OUT/$4.r$1.report.json"; mirror off; step "$3.r$1" "$5"
  fi
}
for r in $(seq "$ROUNDS"); do
  pair "$r" mirror_slow p99_off p99_slow 4
  pair "$r" mirror_mlp_copy rps_off rps_copy 8
done
mirror off
/usr/bin/python3 - "$OUT" "$ROUNDS" <<'PYEOF' | tee "$OUT/summary.md"
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def step(name, r):
    return json.load(open(f"{out}/{name}.r{r}.json"))["steps"][0]
def cpu_us(name, r):  # the server's CPU per answered request over the step (warm-up included)
    s = step(name, r)
    answered = s["sent_total"] - s["in_flight_at_end"]
    cpu_s = json.load(open(f"{out}/{name}.r{r}.json"))["harness"]["server_cpu_s"]
    return cpu_s * 1e6 / max(answered, 1)
def rep(name, r):
    return json.load(open(f"{out}/{name}.r{r}.report.json"))
warm = json.load(open(f"{out}/warm_slow.json"))
lp, lc = warm["latency"]["primary"]["p50_ms"], warm["latency"]["candidate"]["p50_ms"]
print(f"warm-up, 10% to mirror_slow at c=4: in-server p50 (submit to answer) primary {lp:.3f} ms, "
      f"candidate {lc:.2f} ms: {lc / lp:.0f}x\n")
R = range(1, rounds + 1)
p99_off = [step("p99_off", r)["latency_ms"]["p99"] for r in R]
p99_slow = [step("p99_slow", r)["latency_ms"]["p99"] for r in R]
rps_off = [step("rps_off", r)["requests_per_s"] for r in R]
rps_copy = [step("rps_copy", r)["requests_per_s"] for r in R]
slow_reports = [rep("p99_slow", r) for r in R]
copy_reports = [rep("rps_copy", r) for r in R]
f = lambda xs, d=1: ", ".join(f"{x:.{d}f}" for x in xs)
paired = lambda on, off: statistics.median(b / a for a, b in zip(off, on))
print("| measure | no mirror, by round | mirrored, by round | medians | mirrored / none (median of the rounds' ratios) |")
print("|---|---|---|---|---|")
a, b = statistics.median(p99_off), statistics.median(p99_slow)
print(f"| p99 ms, c=4, 10% to mirror_slow | {f(p99_off, 2)} | {f(p99_slow, 2)} | {a:.2f} / {b:.2f} | {paired(p99_slow, p99_off):.3f} |")
rps4_off = [step("p99_off", r)["requests_per_s"] for r in R]
rps4_slow = [step("p99_slow", r)["requests_per_s"] for r in R]
a, b = statistics.median(rps4_off), statistics.median(rps4_slow)
print(f"| req/s, c=4, 10% to mirror_slow | {f(rps4_off, 0)} | {f(rps4_slow, 0)} | {a:.0f} / {b:.0f} | {paired(rps4_slow, rps4_off):.3f} |")
a, b = statistics.median(rps_off), statistics.median(rps_copy)
print(f"| req/s, c=8, 10% to mirror_mlp_copy | {f(rps_off, 0)} | {f(rps_copy, 0)} | {a:.0f} / {b:.0f} | {paired(rps_copy, rps_off):.3f} |")
for name, off, on in (("c=4, 10% to mirror_slow", "p99_off", "p99_slow"),
                      ("c=8, 10% to mirror_mlp_copy", "rps_off", "rps_copy")):
    xa, xb = [cpu_us(off, r) for r in R], [cpu_us(on, r) for r in R]
    print(f"| server CPU us per request, {name} | {f(xa, 0)} | {f(xb, 0)} | "
          f"{statistics.median(xa):.0f} / {statistics.median(xb):.0f} | {paired(xb, xa):.3f} |")
print()
for name, reps in (("mirror_slow (c=4)", slow_reports), ("mirror_mlp_copy (c=8)", copy_reports)):
    print(f"{name}: per round seen / mirrored / compared / dropped / timeouts: " +
          "; ".join(f"{x['seen']}/{x['mirrored']}/{x['compared']}/{x['dropped']}/{x['candidate_timeouts']}"
                    for x in reps) +
          f"; candidate p50 {statistics.median(x['latency']['candidate']['p50_ms'] for x in reps):.2f} ms, "
          f"primary p50 {statistics.median(x['latency']['primary']['p50_ms'] for x in reps):.3f} ms (in the server)")
PYEOF
