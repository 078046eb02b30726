#!/usr/bin/env bash
# Two inferd binaries (or two stores) side by side: both servers up at once (an idle server costs
# nothing), a warm-up step on each, then ROUNDS rounds in which each concurrency step runs on A,
# then on B, so that the machine's drift hits both alike. Prints each step's req/s per round,
# the medians, B / A, the p99 medians, and each server's CPU per answered request (its
# /proc/PID/stat user + system time over the step, warm-up second included, divided by the
# requests answered in it): the load-independent figure, steadier than req/s on a noisy machine.
#
#   tools/bench_ab.sh A_BINARY B_BINARY
#   env: STORE_A=examples/model-store STORE_B=$STORE_A MODEL=mobilenet_v3_small
#        IMAGE=examples/images/cat.jpg CONCS="8 16" ROUNDS=5 DURATION=5 WARM_S=15
#        OUT=bench-out/ab-<time> FORM= (bench --form, e.g. v2json for a JSON request file)
# For a store variant (a config change), pass the same binary twice with STORE_A / STORE_B.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
A=$(realpath "${1:?A binary}"); B=$(realpath "${2:?B binary}")
STORE_A=$(realpath "${STORE_A:-examples/model-store}"); STORE_B=$(realpath "${STORE_B:-$STORE_A}")
MODEL=${MODEL:-mobilenet_v3_small}
IMAGE=$(realpath "${IMAGE:-examples/images/cat.jpg}")
CONCS=${CONCS:-"8 16"}; ROUNDS=${ROUNDS:-5}; DURATION=${DURATION:-5}; WARM_S=${WARM_S:-15}
OUT=$(realpath -m "${OUT:-bench-out/ab-$(date +%Y%m%d-%H%M%S)}")
mkdir -p "$OUT"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
for v in A B; do
  bin=${!v}; store_var=STORE_$v
  "$bin" serve --model-store "${!store_var}" --bind 127.0.0.1 --http-port 0 --management-port 0 \
    --metrics-port 0 --grpc-port 0 > "$OUT/$v.stdout" 2> "$OUT/$v.log" &
  pids+=($!)
done
for v in A B; do
  for _ in $(seq 1200); do grep -q 'inferd: listening' "$OUT/$v.stdout" && break; sleep 0.1; done
done
port() { sed -n 's/.*listening http=\([0-9]*\).*/\1/p' "$OUT/$1.stdout"; }
for v in A B; do
  for _ in $(seq 1200); do curl -sf -o /dev/null "http://127.0.0.1:$(port $v)/v2/health/ready" && break; sleep 0.1; done
done
bench() {  # bench V C SECONDS JSON
  "$A" bench --url "http://127.0.0.1:$(port "$1")" --model "$MODEL" --input "$IMAGE" \
    ${FORM:+--form "$FORM"} \
    --concurrency "$2" --duration "$3" --warmup 1 --windows 1 --max-windows 1 --no-progress \
    ${4:+--json "$4"} > /dev/null
}
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }  # after the (comm): utime + stime
for v in A B; do bench "$v" "${CONCS%% *}" "$WARM_S" ""; done
for r in $(seq "$ROUNDS"); do
  for c in $CONCS; do
    i=0
    for v in A B; do
      t0=$(ticks "${pids[$i]}")
      bench "$v" "$c" "$DURATION" "$OUT/$v.c$c.r$r.json"
      echo $(( $(ticks "${pids[$i]}") - t0 )) > "$OUT/$v.c$c.r$r.ticks"
      i=$((i + 1))
    done
  done
done
/usr/bin/python3 - "$OUT" "$ROUNDS" "$CONCS" "$A" "$B" <<'PYEOF' | tee "$OUT/summary.md"
import json, os, statistics, sys
out, rounds, concs, a, b = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4], sys.argv[5]
hz = os.sysconf("SC_CLK_TCK")
def cpu_ms(v, c, r, step):  # CPU per answered request in the step, warm-up included
    answered = step["sent_total"] - step["in_flight_at_end"]
    return int(open(f"{out}/{v}.c{c}.r{r}.ticks").read()) * 1000 / hz / max(answered, 1)
print(f"A = {a}\nB = {b}\n")
print("| c | A req/s by round | B req/s by round | A median | B median | B / A | p99 A / B (medians) "
      "| CPU ms per request, A / B (medians) | B / A |")
print("|---|---|---|---|---|---|---|---|---|")
for c in concs:
    st = {v: [json.load(open(f"{out}/{v}.c{c}.r{r}.json"))["steps"][0] for r in range(1, rounds + 1)]
          for v in "AB"}
    rps = {v: [s["requests_per_s"] for s in st[v]] for v in "AB"}
    p99 = {v: statistics.median(s["latency_ms"]["p99"] for s in st[v]) for v in "AB"}
    cpu = {v: statistics.median(cpu_ms(v, c, r + 1, s) for r, s in enumerate(st[v])) for v in "AB"}
    ma, mb = statistics.median(rps["A"]), statistics.median(rps["B"])
    print(f"| {c} | {', '.join(f'{x:.0f}' for x in rps['A'])} | {', '.join(f'{x:.0f}' for x in rps['B'])} "
          f"| {ma:.1f} | {mb:.1f} | {mb / ma:.3f} | {p99['A']:.1f} / {p99['B']:.1f} ms "
          f"| {cpu['A']:.2f} / {cpu['B']:.2f} | {cpu['B'] / cpu['A']:.3f} |")
PYEOF
