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
#
# SCENARIO=starve: issue 38's neighbour instead. mirror_slow's forward is timed here to take
# SLOW_SECONDS (2.5) on one thread, on the default executors (no instance cap); the time from
# the server's start to the candidate's readiness, and its load time from the log; then ROUNDS ABBA pairs at
# c=4: no mirror against fraction 1.0 to mirror_slow (max_in_flight 64), with the report's
# counters (mirrored, dropped, sampled_down, no_spare_executor, effective_fraction).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BIN=$(realpath "${1:-build/inferd}")
ROUNDS=${ROUNDS:-5}; DURATION=${DURATION:-5}; SLOW_ITERS=${SLOW_ITERS:-1500}
MAX_IN_FLIGHT=${MAX_IN_FLIGHT:-8}
OUT=$(realpath -m "${OUT:-bench-out/mirror-$(date +%Y%m%d-%H%M%S)}")
mkdir -p "$OUT/store"
if [ "${SCENARIO:-}" = starve ]; then
  /usr/bin/python3 tools/make_mirror_models.py --store "$OUT/store" \
    --slow-seconds "${SLOW_SECONDS:-2.5}" --slow-uncapped | tee "$OUT/models.txt"
else
  /usr/bin/python3 tools/make_mirror_models.py --store "$OUT/store" --slow-iters "$SLOW_ITERS"
fi
/usr/bin/python3 - "$OUT/request.bin" <<'PYEOF'
import json, struct, sys
x = [0.01 * i for i in range(16)]
head = json.dumps({"inputs": [{"name": "x", "datatype": "FP32", "shape": [1, 16],
                               "parameters": {"binary_data_size": 64}}]}).encode()
open(sys.argv[1], "wb").write(head + struct.pack("<16f", *x))
PYEOF
harness() { /usr/bin/python3 -m tools.harness "$@"; }
trap 'harness stop "$OUT/server"' EXIT
t0=$(date +%s.%N)  # SCENARIO=starve: the candidate's time to ready counts from here
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
if [ "${SCENARIO:-}" = starve ]; then
  # The candidate may still be loading when the server says ready: wait for it.
  until curl -sf -o /dev/null "http://127.0.0.1:$SERVER_HTTP/v2/models/mirror_slow/ready"; do
    sleep 0.5
  done
  t1=$(date +%s.%N)
  curl -s "http://127.0.0.1:$SERVER_HTTP/v2/models/mirror_slow" > "$OUT/slow_meta.json"
  starve_on() {
    curl -sf -o /dev/null -X PUT "http://127.0.0.1:$SERVER_MANAGEMENT/models/mirror_mlp/mirror" \
      -d '{"to": "mirror_slow", "fraction": 1.0, "max_in_flight": 64, "timeout_ms": 600000}'
  }
  bench 4 3 ""
  for r in $(seq "$ROUNDS"); do
    if [ $(( r % 2 )) = 1 ]; then
      mirror off; step "off.r$r" 4; starve_on; step "on.r$r" 4; report "$OUT/on.r$r.report.json"
    else
      starve_on; step "on.r$r" 4; report "$OUT/on.r$r.report.json"; mirror off; step "off.r$r" 4
    fi
  done
  mirror off
  /usr/bin/python3 - "$OUT" "$ROUNDS" "$(echo "$t1 - $t0" | bc)" <<'PYEOF' | tee "$OUT/summary.md"
import json, re, statistics, sys
out, rounds, start_s = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
meta = json.load(open(f"{out}/slow_meta.json"))
load_ms = re.findall(r"model 'mirror_slow' version 1 is ready: loaded in (\d+) ms",
                     open(f"{out}/server.log").read())
print(f"{open(f'{out}/models.txt').read().strip()}; mirror_slow ready {start_s:.1f} s after the "
      f"start, its load took {int(load_ms[0]) / 1000 if load_ms else float('nan'):.1f} s (log); "
      f"skipped: {meta.get('load_measurement_skipped')}\n")
step = lambda n, r: json.load(open(f"{out}/{n}.r{r}.json"))["steps"][0]
R = range(1, rounds + 1)
print("| round | no mirror: req/s, p50, p99, max ms | fraction 1.0 to mirror_slow: req/s, p50, p99, max ms "
      "| seen / mirrored / compared / dropped / sampled_down / no_spare_executor | effective_fraction |")
print("|---|---|---|---|---|")
fmt = lambda s: (f"{s['requests_per_s']:.0f}, {s['latency_ms']['p50']:.2f}, {s['latency_ms']['p99']:.2f}, "
                 f"{s['latency_ms']['max']:.1f}")
for r in R:
    rep = json.load(open(f"{out}/on.r{r}.report.json"))
    c = "/".join(str(rep.get(k)) for k in ("seen", "mirrored", "compared", "dropped", "sampled_down",
                                             "no_spare_executor"))
    print(f"| {r} | {fmt(step('off', r))} | {fmt(step('on', r))} | {c} | {rep.get('effective_fraction')} |")
med = lambda n, k: statistics.median(step(n, r)["latency_ms"][k] for r in R)
rps = lambda n: statistics.median(step(n, r)["requests_per_s"] for r in R)
print(f"\nmedians: no mirror {rps('off'):.0f} req/s, p99 {med('off', 'p99'):.2f} ms; mirrored "
      f"{rps('on'):.0f} req/s, p99 {med('on', 'p99'):.2f} ms (goal <= 20 ms)")
PYEOF
  exit 0
fi
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
